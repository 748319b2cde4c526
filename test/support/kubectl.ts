// Runs the sandbox-built kubectl against a sandbox cluster, as a user would.
import { toolPath } from '../../src/sandbox/index.ts';
import { attempt, type RunResult } from './exec.ts';

export type KubectlResult = RunResult;

/** kubectl with the given kubeconfig; never throws on a non-zero exit (the result carries it). */
export function kubectl(kubeconfigPath: string, args: readonly string[], input?: string): Promise<KubectlResult> {
  return attempt(toolPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { timeoutMs: 60_000, ...(input === undefined ? {} : { input }) });
}

/** kubectl that must succeed; returns stdout. */
export async function kubectlOk(kubeconfigPath: string, args: readonly string[], input?: string): Promise<string> {
  const r = await kubectl(kubeconfigPath, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

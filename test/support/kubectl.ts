// Runs the sandbox-built kubectl against a sandbox cluster, as a user would.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { toolPath } from '../../src/sandbox/index.ts';

const run = promisify(execFile);

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** kubectl with the given kubeconfig; never throws on a non-zero exit (the result carries it). */
export async function kubectl(kubeconfigPath: string, args: readonly string[], input?: string): Promise<KubectlResult> {
  const child = run(toolPath('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], { timeout: 60_000 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

/** kubectl that must succeed; returns stdout. */
export async function kubectlOk(kubeconfigPath: string, args: readonly string[], input?: string): Promise<string> {
  const r = await kubectl(kubeconfigPath, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

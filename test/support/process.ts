// Running our CLI as a user would, and checking on processes.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const CLI = fileURLToPath(new URL('../../bin/cluster-registry.js', import.meta.url));
const exec = promisify(execFile);

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI (bin/cluster-registry.js) with this Node; never throws on a non-zero exit. */
export async function cli(args: readonly string[], timeoutMs = 240_000): Promise<CliResult> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { timeout: timeoutMs });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Whether a pid is a live process (a zombie is not: it has exited, only its parent has not reaped it). */
export function alive(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

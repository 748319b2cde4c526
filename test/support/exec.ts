// Host commands tests run (buildah, ctr, ip, kubectl): each either succeeds or throws with the
// command and the tail of what it printed, or, through `attempt`, reports how it ended.
import { execFile } from 'node:child_process';

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly input?: string;
  readonly timeoutMs?: number;
}

/** Runs a command to its end; never throws on a non-zero exit (the result carries it). */
export function attempt(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(
      cmd,
      [...args],
      {
        maxBuffer: 256 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 600_000,
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
        ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr: err && !stderr ? err.message : stderr });
      },
    );
    // A command that exits without reading its input must not fail the caller.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.input ?? '');
  });
}

/** Runs a command that must succeed; returns its stdout. */
export async function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<string> {
  const r = await attempt(cmd, args, opts);
  if (r.code !== 0) {
    const tail = (r.stderr || r.stdout).trim().split('\n').slice(-15).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.code}):\n${tail}`);
  }
  return r.stdout;
}

// One child process of the sandbox (etcd, a kube-apiserver, a kube-controller-manager):
// started with its output in a log file, and stopped, killed, paused or resumed on demand.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProcessSpec {
  /** Name used in messages, e.g. "kube-apiserver cluster2". */
  readonly name: string;
  readonly binary: string;
  readonly args: readonly string[];
  readonly logFile: string;
  /**
   * Attached processes die with the process that started them (PR_SET_PDEATHSIG through
   * setpriv), so a crashed test never leaks servers. Detached ones outlive the CLI that
   * started them and are stopped by `sandbox down`.
   */
  readonly detached: boolean;
  /** Environment on top of this process's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** A command the binary runs under that execs it (nsenter into a node's namespaces, say). */
  readonly launcher?: readonly string[];
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Last resort for attached children: a test that throws past its cleanup still kills them. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
  // A signal's default action ends this process without 'exit': the children die with it, but
  // the hooks that remove their files (etcd's data on tmpfs) would not run. Unless the program
  // handles the signal itself, it exits through them.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (process.listenerCount(signal) === 1) process.exit(128 + constants.signals[signal]);
    });
  }
}

export class ManagedProcess {
  readonly spec: ProcessSpec;
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;
  private exitCode: number | null | undefined;

  constructor(spec: ProcessSpec) {
    this.spec = spec;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.exitCode === undefined;
  }

  start(): void {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    const out = openSync(this.spec.logFile, 'a');
    const command = [...(this.spec.launcher ?? []), this.spec.binary, ...this.spec.args];
    const [cmd = '', ...args] = this.spec.detached ? command : ['setpriv', '--pdeathsig', 'KILL', '--', ...command];
    const child = spawn(cmd, args, { stdio: ['ignore', out, out], detached: this.spec.detached, ...(this.spec.env ? { env: { ...process.env, ...this.spec.env } } : {}) });
    closeSync(out);
    this.child = child;
    this.exitCode = undefined;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        live.delete(child);
        this.exitCode = code ?? (signal ? -1 : null);
        resolve(this.exitCode);
      });
      child.once('error', (err) => {
        live.delete(child);
        this.exitCode = -1;
        appendNote(this.spec.logFile, `spawn failed: ${err.message}`);
        resolve(-1);
      });
    });
    if (this.spec.detached) {
      child.unref();
    } else {
      live.add(child);
      installExitHook();
    }
  }

  /** Resolves with the exit code once the process has ended (immediately if it has). */
  async waitForExit(): Promise<number | null> {
    return this.exited ?? null;
  }

  /** SIGTERM, then SIGKILL after the grace period. A paused process is resumed first so it can exit. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const done = await Promise.race([this.waitForExit().then(() => true), sleep(graceMs).then(() => false)]);
    if (!done) {
      child.kill('SIGKILL');
      await this.waitForExit();
    }
  }

  async kill(): Promise<void> {
    if (!this.child || !this.running) return;
    this.child.kill('SIGKILL');
    await this.waitForExit();
  }

  pause(): void {
    this.signal('SIGSTOP');
  }

  resume(): void {
    this.signal('SIGCONT');
  }

  private signal(sig: NodeJS.Signals): void {
    if (!this.child || !this.running) throw new Error(`${this.spec.name} is not running`);
    this.child.kill(sig);
  }

  /** The last lines of the log, for error messages. */
  logTail(lines = 25): string {
    return tailOf(this.spec.logFile, lines);
  }
}

export function tailOf(file: string, lines: number): string {
  if (!existsSync(file)) return '(no log)';
  const text = readFileSync(file, 'utf8').trimEnd().split('\n');
  return text.slice(-lines).join('\n');
}

function appendNote(file: string, note: string): void {
  // A spawn error has no process output; record it where the log tail will show it.
  appendFileSync(file, note + '\n');
}

/** Liveness of a recorded pid that may not be our child (a detached sandbox from an earlier CLI run). */
export function pidState(pid: number, binary: string): 'running' | 'paused' | 'gone' {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // A recycled pid running something else is not ours.
    if (!cmdline.split('\0')[0]?.endsWith(binary.split('/').pop() ?? binary)) return 'gone';
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return 'gone';
    return state === 'T' ? 'paused' : 'running';
  } catch {
    return 'gone';
  }
}

/** Stops a recorded pid: SIGCONT + SIGTERM, then SIGKILL after the grace period. */
export async function stopPid(pid: number, binary: string, graceMs = 10_000): Promise<void> {
  if (pidState(pid, binary) === 'gone') return;
  for (const sig of ['SIGCONT', 'SIGTERM'] as const) {
    try {
      process.kill(pid, sig);
    } catch {
      return;
    }
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (pidState(pid, binary) === 'gone') return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  while (pidState(pid, binary) !== 'gone') await sleep(50);
}

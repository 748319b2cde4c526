// What a detached sandbox (the CLI's `sandbox up`) records in <dir>/sandbox.json, so that a
// later `sandbox status` or `sandbox down` finds its processes.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probe } from './net.ts';
import { pidState, stopPid } from './process.ts';

export interface RecordedProcess {
  readonly name: string;
  readonly pid: number;
  readonly binary: string;
  readonly logFile: string;
  readonly healthUrl: string | undefined;
}

export interface SandboxState {
  readonly version: 1;
  readonly createdAt: string;
  readonly ownedPaths: string[];
  readonly etcd: RecordedProcess;
  readonly clusters: { name: string; server: string; kubeconfigPath: string; processes: RecordedProcess[] }[];
}

const stateFile = (dir: string) => join(dir, 'sandbox.json');

export function writeState(dir: string, state: SandboxState): void {
  writeFileSync(stateFile(dir), JSON.stringify(state, null, 2) + '\n');
}

export function readState(dir: string): SandboxState | undefined {
  const f = stateFile(dir);
  if (!existsSync(f)) return undefined;
  const state = JSON.parse(readFileSync(f, 'utf8')) as SandboxState;
  if (state.version !== 1) throw new Error(`${f}: unknown sandbox state version ${String(state.version)}`);
  return state;
}

export function removePaths(paths: readonly string[]): void {
  for (const p of paths) rmSync(p, { recursive: true, force: true });
}

function allProcesses(state: SandboxState): RecordedProcess[] {
  return [...state.clusters.flatMap((c) => c.processes), state.etcd];
}

/** Stops every recorded process (controllers and apiservers before etcd) and removes the sandbox's state. */
export async function stopRecorded(dir: string): Promise<{ stopped: string[] } | undefined> {
  const state = readState(dir);
  if (!state) return undefined;
  const byTier = [
    state.clusters.flatMap((c) => c.processes.filter((p) => !p.name.startsWith('kube-apiserver'))),
    state.clusters.flatMap((c) => c.processes.filter((p) => p.name.startsWith('kube-apiserver'))),
    [state.etcd],
  ];
  for (const tier of byTier) await Promise.all(tier.map((p) => stopPid(p.pid, p.binary)));
  removePaths(state.ownedPaths);
  return { stopped: allProcesses(state).map((p) => p.name) };
}

export interface ComponentStatus {
  readonly cluster: string;
  readonly component: string;
  readonly pid: number;
  readonly state: 'running' | 'paused' | 'gone';
  readonly healthy: boolean | undefined;
  readonly rssMiB: number | undefined;
}

function rssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

export async function statusOf(state: SandboxState): Promise<ComponentStatus[]> {
  const rows = [
    { cluster: '-', p: state.etcd },
    ...state.clusters.flatMap((c) => c.processes.map((p) => ({ cluster: c.name, p }))),
  ];
  return Promise.all(
    rows.map(async ({ cluster, p }) => {
      const s = pidState(p.pid, p.binary);
      const healthy = p.healthUrl && s === 'running' ? (await probe(p.healthUrl))?.status === 200 : undefined;
      return { cluster, component: p.name.split(' ')[0] ?? p.name, pid: p.pid, state: s, healthy, rssMiB: s === 'gone' ? undefined : rssMiB(p.pid) };
    }),
  );
}

// What the benchmarks share: timing, percentiles, per-process CPU and RSS from /proc, and bulk
// ConfigMap writes and watches against real API servers.
import { readFileSync } from 'node:fs';
import type { KubeObject, ResourceRef, RestClient, WatchStream } from '../src/kube/index.ts';

export const CM: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };

/** The value below which `p` percent of `xs` lie (NaN for none). */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

export function median(xs: number[]): number {
  return percentile(xs, 50);
}

/** Calls `onEvent` for every watch event on ConfigMaps of the namespace, from now on. */
export async function watchConfigMaps(rest: RestClient, namespace: string, onEvent: (type: string, obj: KubeObject) => void): Promise<WatchStream> {
  const list = await rest.list(CM, { namespace, limit: 1 });
  const stream = await rest.watch(CM, { namespace, resourceVersion: list.metadata.resourceVersion });
  void (async () => {
    for await (const ev of stream) onEvent(ev.type, ev.object);
  })().catch(() => undefined);
  return stream;
}

export async function createMany(rest: RestClient, names: string[], data: string, namespace: string, concurrency = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        await rest.create(CM, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { sync: 'bench' } }, data: { payload: data } });
      }
    }),
  );
}

export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/** CPU seconds a process has used so far (user and system), from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  // utime and stime, the 14th and 15th fields of the line (12th and 13th after the name), in ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function cpuSnapshot(procs: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSeconds(pid)]));
}

export function cpuSince(procs: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSeconds(pid) - (before[k] ?? 0)]));
}

export function reportCpu(phase: string, ms: number, used: Record<string, number>): void {
  const parts = Object.entries(used).map(([k, s]) => `${k} ${s.toFixed(1)}`);
  process.stderr.write(`bench: CPU seconds during ${phase} (${(ms / 1000).toFixed(1)} s of wall time): ${parts.join(', ')}\n`);
}

export async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// What the benchmarks share: timing, percentiles, per-process CPU and RSS from /proc, and bulk
// ConfigMap writes and watches against real API servers.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { inspect } from 'node:util';
import { NAMESPACES, SECRETS } from '../src/core/api/resources.ts';
import type { KubeObject, ResourceRef, RestClient } from '../src/kube/index.ts';
import { seriesIn } from '../test/support/registry.ts';
import { resumingWatch } from '../test/support/resuming-watch.ts';
import { grantKindsOn } from '../test/support/sync-helpers.ts';

export { SECRETS };
export const CM: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
/** The controller's default worker count, for raw clients writing what one controller writes. */
export const CONTROLLER_WORKERS = 16;

/**
 * Readies a member for a benchmark: creates the namespaces and lets the controller (through the
 * registry's aggregated roles) write, and peers read, `resource` (core group).
 */
export async function prepareMember(rest: RestClient, namespaces: readonly string[], resource: string): Promise<void> {
  for (const name of namespaces) await rest.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await grantKindsOn(rest, 'bench', '', [resource]);
}

/** The value below which `p` percent of `xs` lie (NaN for none). */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}

/**
 * Orders in which to take `n` paths (n even), one order per round: a balanced Latin square
 * (Williams), in which each path comes at each place once and, within the rounds, follows each
 * other path once, so that no path mostly meets what another leaves behind. (Across rounds, one
 * round's last path always precedes the same next round's first: callers rest between rounds.)
 */
export function balancedOrders(n: number): number[][] {
  if (n % 2 !== 0) throw new Error(`a balanced square of ${n} paths: this construction needs an even number`);
  const first = Array.from({ length: n }, (_, j) => (j % 2 === 1 ? (j + 1) / 2 : (n - j / 2) % n));
  return Array.from({ length: n }, (_, i) => first.map((x) => (x + i) % n));
}

export function median(xs: number[]): number {
  return percentile(xs, 50);
}

/**
 * Calls `onEvent` for every change to ConfigMaps (or `o.ref`) of the namespace matching
 * `o.labelSelector`, from now on; `o.onEnd` hears when the watch fails, and why (by default it is
 * written to stderr), and hears `undefined` once it is closed. The watch goes on from the last
 * version it saw whenever the API server ends it (a loaded one closes watchers it finds slow), or a
 * benchmark would wait out its bound for events it will never be sent; a 410 fails it.
 */
export async function watchNamespace(rest: RestClient, namespace: string, onEvent: (type: string, obj: KubeObject) => void, o: { ref?: ResourceRef; labelSelector?: string; onEnd?: (err: unknown) => void } = {}): Promise<Closable> {
  const ref = o.ref ?? CM;
  const onEnd = o.onEnd ?? ((err: unknown) => err && process.stderr.write(`bench: the watch of ${namespace} failed: ${err instanceof Error ? err.message : JSON.stringify(err)}\n`));
  const list = await rest.list(ref, { namespace, labelSelector: o.labelSelector, limit: 1 });
  const watch = await resumingWatch(rest, ref, { namespace, labelSelector: o.labelSelector, resourceVersion: list.metadata.resourceVersion ?? '' }, onEvent);
  void watch.ended.then(onEnd);
  return watch;
}

/** What a benchmark stops at its end. */
export interface Closable {
  close(): void;
}

/** Creates ConfigMaps (or Secrets) labelled `sync: bench` holding `data`, `concurrency` at a time. */
export async function createMany(rest: RestClient, names: string[], data: string, namespace: string, concurrency = 32, ref: ResourceRef = CM): Promise<void> {
  const body = ref === SECRETS ? { kind: 'Secret', data: { payload: Buffer.from(data).toString('base64') } } : { kind: 'ConfigMap', data: { payload: data } };
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        await rest.create(ref, namespace, { apiVersion: 'v1', ...body, metadata: { name, namespace, labels: { sync: 'bench' } } });
      }
    }),
  );
}

export function rssMiB(pid: number): number {
  return statusMiB(pid, 'VmRSS');
}

/** Anonymous resident memory: what the process allocated, without pages mapped from files. */
export function anonMiB(pid: number): number {
  return statusMiB(pid, 'RssAnon');
}

function statusMiB(pid: number, field: string): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/** CPU seconds a process has used so far (user and system), from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  // utime and stime, the 14th and 15th fields of the line (12th and 13th after the name), in ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Remote ports of the established TCP connections in a /proc/net/tcp or tcp6 table, by socket inode. */
function establishedRemotePorts(table: string): Map<string, number> {
  const ports = new Map<string, number>();
  for (const line of table.split('\n').slice(1)) {
    // sl, local address, remote address, state (01 is ESTABLISHED), ..., inode (the tenth field).
    const f = line.trim().split(/\s+/);
    if (f[3] === '01' && f[9]) ports.set(f[9], parseInt(f[2]?.split(':')[1] ?? '', 16));
  }
  return ports;
}

/** Established TCP connections that process `pid` holds, by remote port. */
export function connectionsByRemotePort(pid: number): Map<number, number> {
  const remote = new Map([...establishedRemotePorts(readFileSync('/proc/net/tcp', 'utf8')), ...establishedRemotePorts(readFileSync('/proc/net/tcp6', 'utf8'))]);
  const counts = new Map<number, number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed since the listing
    }
    const port = remote.get(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? '');
    if (port !== undefined) counts.set(port, (counts.get(port) ?? 0) + 1);
  }
  return counts;
}

export function cpuSnapshot(procs: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSeconds(pid)]));
}

export function cpuSince(procs: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSeconds(pid) - (before[k] ?? 0)]));
}

/** CPUs as Linux lists them ("0-3,6"), one by one. */
export function parseCpuList(list: string): number[] {
  return list
    .trim()
    .split(',')
    .filter(Boolean)
    .flatMap((part) => {
      const [from, to = from] = part.split('-').map(Number) as [number, number?];
      return Array.from({ length: to - from + 1 }, (_, i) => from + i);
    });
}

/** The CPUs this process may run on. */
export function allowedCpus(): number[] {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Cpus_allowed_list:'));
  return parseCpuList(line?.slice('Cpus_allowed_list:'.length) ?? '');
}

/** Restricts every thread of each process to the CPUs given; false if any could not be (gone, or not allowed). */
export function pinTo(pids: readonly number[], cpus: readonly number[]): boolean {
  let all = true;
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus.join(','), String(pid)], { stdio: 'ignore' });
    } catch {
      all = false;
    }
  }
  return all;
}

export function reportCpu(phase: string, ms: number, used: Record<string, number>): void {
  const parts = Object.entries(used).map(([k, s]) => `${k} ${s.toFixed(1)}`);
  process.stderr.write(`bench: CPU seconds during ${phase} (${(ms / 1000).toFixed(1)} s of wall time): ${parts.join(', ')}\n`);
}

/**
 * Runs a measurement on a running group, then stops it (`stop`): the stop's own checks (no
 * writes to peers, no credentials in logs) fail a measurement that succeeded; after one that
 * failed, the measurement's error is the one thrown and a failing stop is only said beside it.
 */
export async function stopAfter<T>(work: () => Promise<T>, stop: () => Promise<void>, what: string): Promise<T> {
  let result: T;
  try {
    result = await work();
  } catch (err) {
    await stop().catch((stopErr: unknown) => process.stderr.write(`bench: ${what} did not stop cleanly: ${inspect(stopErr)}\n`));
    throw err;
  }
  await stop();
  return result;
}

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The mean, in milliseconds, of what a histogram observed between two readings of /metrics
 * (pairs of texts, one pair per controller, summed), over the series whose labels `match`.
 */
export function histogramMeanMs(readings: readonly (readonly [before: string, after: string])[], name: string, match: (labels: Record<string, string>) => boolean): number {
  const total = (text: string, suffix: string): number => seriesIn(text, `${name}_${suffix}`).filter((s) => match(s.labels)).reduce((sum, s) => sum + s.value, 0);
  let sum = 0;
  let count = 0;
  for (const [before, after] of readings) {
    sum += total(after, 'sum') - total(before, 'sum');
    count += total(after, 'count') - total(before, 'count');
  }
  return (sum / count) * 1000;
}

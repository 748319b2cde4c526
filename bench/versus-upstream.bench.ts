// Head to head with upstream's Go controller v0.2.12: the same workload on two fresh groups of
// three real clusters, one running upstream's controller in every member and one running ours,
// each formed by hand as upstream's quickstart says. Per group: the controller's RSS at idle;
// propagation latency of single changes from cluster1 to both peers (p50/p99); convergence of
// 1,000 new objects from cluster1 to both peers, with the peers' controllers' CPU seconds; the
// controller's RSS after it. The ratio is ours over Go's (below 1 is better for every row).
import { NAMESPACES, RESOURCE_SYNC_RULES as RULES } from '../src/core/api/resources.ts';
import type { KubeObject, WatchStream } from '../src/kube/index.ts';
import { grantKinds, rule, waitGroupFormed } from '../test/support/sync-helpers.ts';
import { startMixedGroup } from '../test/support/upstream.ts';
import type { BenchResult } from './informer.bench.ts';
import { CM, cpuSince, cpuSnapshot, createMany, percentile, rssMiB, until, watchConfigMaps } from './support.ts';

const NS = 'versus';
const NAMES = ['cluster1', 'cluster2', 'cluster3'];
const PEERS = ['cluster2', 'cluster3'];
const LATENCY_OBJECTS = 10;
const SINGLE_CHANGES = 50;
const BULK = 1_000;
/** How long a controller runs before its idle RSS is read. */
const IDLE_MS = 30_000;

interface Figures {
  idleRss: number;
  p50: number;
  p99: number;
  convergeMs: number;
  cpuSeconds: number;
  rssAfter: number;
}

async function measure(kind: 'ours' | 'upstream'): Promise<Figures> {
  // Ours from dist/, as it ships (`make bench` builds it first).
  const g = await startMixedGroup({ name: `bench-versus-${kind}`, names: NAMES, upstream: kind === 'upstream' ? NAMES : [], hub: 'cluster1', built: true });
  const streams: WatchStream[] = [];
  try {
    await waitGroupFormed(g);
    const pid = (name: string): number => g.sandbox.cluster(name).extras[0]?.pid ?? 0;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleRss = rssMiB(pid('cluster2'));

    await grantKinds(g, 'versus-configmaps', '', ['configmaps']);
    for (const n of NAMES) await g.client(n).create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const seen = new Map(PEERS.map((p) => [p, new Map<string, number>()]));
    const added = new Map(PEERS.map((p) => [p, new Set<string>()]));
    for (const p of PEERS) {
      streams.push(
        await watchConfigMaps(g.client(p), NS, (type, obj: KubeObject & { data?: Record<string, string> }) => {
          const marker = obj.data?.['marker'];
          if (marker && !seen.get(p)!.has(marker)) seen.get(p)!.set(marker, performance.now());
          if (type === 'ADDED') added.get(p)!.add(obj.metadata.name ?? '');
        }),
      );
    }
    const c1 = g.client('cluster1');
    await c1.create(RULES, undefined, rule('versus', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { sync: 'bench' } }] }] }] }));
    const onPeers = (names: readonly string[]) => () => PEERS.every((p) => names.every((n) => added.get(p)!.has(n)));

    const latencyNames = Array.from({ length: LATENCY_OBJECTS }, (_, i) => `latency-${i}`);
    await createMany(c1, latencyNames, 'x', NS);
    await until('the first copies', onPeers(latencyNames), 300_000);
    /** Changes one object on cluster1 and returns how long until both peers' copies had it. */
    const propagate = async (name: string, marker: string): Promise<number[]> => {
      const t0 = performance.now();
      await c1.patch(CM, NS, name, 'merge', { data: { marker } });
      await until(`marker ${marker} on both peers`, () => PEERS.every((p) => seen.get(p)!.has(marker)), 60_000);
      return PEERS.map((p) => seen.get(p)!.get(marker)! - t0);
    };
    // A copy's first change is not steady state (ours then moves the fields its create wrote into
    // its apply entry): one unmeasured change per object first, for both.
    for (const name of latencyNames) await propagate(name, `warm-${name}`);
    const propagation: number[] = [];
    for (let i = 0; i < SINGLE_CHANGES; i++) propagation.push(...(await propagate(latencyNames[i % LATENCY_OBJECTS]!, `m${i}`)));

    const procs = Object.fromEntries(PEERS.map((p) => [p, pid(p)]));
    const cpu0 = cpuSnapshot(procs);
    const names = Array.from({ length: BULK }, (_, i) => `bulk-${i}`);
    const b0 = performance.now();
    await createMany(c1, names, 'y'.repeat(256), NS);
    await until(`${BULK} copies on both peers`, onPeers(names), 900_000);
    const convergeMs = performance.now() - b0;
    const cpu = cpuSince(procs, cpu0);
    await new Promise((r) => setTimeout(r, 5000));
    return {
      idleRss,
      p50: percentile(propagation, 50),
      p99: percentile(propagation, 99),
      convergeMs,
      cpuSeconds: PEERS.reduce((sum, p) => sum + (cpu[p] ?? 0), 0) / PEERS.length,
      rssAfter: rssMiB(pid('cluster2')),
    };
  } finally {
    for (const s of streams) s.close();
    await g.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  const go = await measure('upstream');
  const ours = await measure('ours');
  const row = (name: string, unit: string, pick: (f: Figures) => number, note?: string): BenchResult => ({ name, ours: pick(ours), baseline: pick(go), unit, ratio: pick(ours) / pick(go), ...(note ? { note } : {}) });
  return [
    row('versus Go: controller RSS at idle', 'MiB', (f) => f.idleRss, 'baseline: upstream v0.2.12, same group, 30 s after forming'),
    row('versus Go: propagation p50 (3 clusters)', 'ms', (f) => f.p50, 'baseline: upstream v0.2.12'),
    row('versus Go: propagation p99 (3 clusters)', 'ms', (f) => f.p99, 'target: at most half of Go'),
    row(`versus Go: convergence, ${BULK.toLocaleString('en-US')} objects to 2 peers`, 's', (f) => f.convergeMs / 1000, 'target: at most Go'),
    row('versus Go: peer controller CPU during convergence', 's', (f) => f.cpuSeconds, 'per peer, user and system'),
    row(`versus Go: controller RSS, ${BULK.toLocaleString('en-US')} synced objects`, 'MiB', (f) => f.rssAfter, 'target: at most Go'),
  ];
}

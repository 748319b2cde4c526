// What one peer costs an idle controller: cluster1's controller joins PEERS other clusters one at
// a time. After each join it is restarted, so that every reading is of a process that started
// with k peers and settled (every Cluster Ready, the peers' informers running), not of one
// carrying what earlier readings left: a heap snapshot leaves the process's RSS much larger. Then
// its RSS, anonymous RSS and connections are read, and heap snapshots with one peer and with
// PEERS say what grew, by constructor and by what retains it. The first peer pays one-off costs
// (code first run, modules first loaded), so the per-peer figures are fitted from one peer on.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { CLUSTERS } from '../src/core/api/resources.ts';
import type { Cluster } from '../src/core/api/types.ts';
import type { RestClient } from '../src/kube/index.ts';
import { join } from '../src/ops/join.ts';
import type { Sandbox } from '../src/sandbox/index.ts';
import { RELAY_SETTLE_MS } from '../src/sync/engine.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup } from '../src/testbed/group.ts';
import { controllerMetrics, hasPeerInformer, seriesIn } from '../test/support/registry.ts';
import { growth, summariseHeapSnapshot, type HeapSummary } from './heap-snapshot.ts';
import type { BenchResult } from './informer.bench.ts';
import { linearFit } from './report/scaling.ts';
import { anonMiB, connectionsByRemotePort, rssMiB, until } from './support.ts';

const PEERS = 8;
/** After a join settled, before reading memory: first lists, health checks and status writes done. */
const SETTLE_MS = 10_000;
/**
 * After the restart, before the reading: also past the relay settle, when the peer watches leave
 * out the copies of owners that answer first-hand (what a controller running for more than a
 * minute holds; read before it, every member's credentials are still cached from each peer).
 */
const RESTARTED_SETTLE_MS = RELAY_SETTLE_MS + SETTLE_MS;
const TOP = 12;

export interface PeerCostPoint {
  peers: number;
  rssMiB: number;
  anonMiB: number;
  /** V8's heap: what live objects use, and what it holds from the system; memory outside it that JavaScript objects own (buffers). */
  heapUsedMiB: number;
  heapTotalMiB: number;
  /** Of what V8 holds, its young generation (sized by the allocation rate, not by what lives). */
  newSpaceMiB: number;
  externalMiB: number;
  /** Connections to its own API server, and to each peer's on average. */
  ownConnections: number;
  connectionsPerPeer: number;
}

/**
 * Native memory: anonymous RSS less what V8's heap holds, which is what the allocator holds (TLS
 * and HTTP/2 sessions, buffers, and freed memory it has not given back) and the threads' stacks.
 */
const nativeMiB = (p: PeerCostPoint): number => p.anonMiB - p.heapTotalMiB;

/** Takes a heap snapshot of cluster1's controller (started with --heapsnapshot-signal=SIGUSR2 into `dir`) and sums it. */
async function snapshot(sandbox: Sandbox, pid: number, dir: string): Promise<HeapSummary> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let file = '';
  await until('the heap snapshot to be started', () => (file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f)) ?? '') !== '', 120_000);
  // The controller writes it on its main thread: once it answers again, the file is whole.
  await until('the controller to answer again', () => controllerMetrics(sandbox, 'cluster1').then(() => true, () => false), 120_000);
  const summary = summariseHeapSnapshot(joinPath(dir, file));
  rmSync(joinPath(dir, file));
  return summary;
}

export async function run(): Promise<BenchResult[]> {
  const dir = mkdtempSync(joinPath(tmpdir(), 'peer-cost-'));
  const names = Array.from({ length: PEERS + 1 }, (_, i) => `cluster${i + 1}`);
  const sandbox = await startGroup({ names, built: true, nodeFlags: (c) => (c === 'cluster1' ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`] : []) });
  const clients = new Map<string, RestClient>();
  try {
    for (const c of sandbox.clusters) clients.set(c.name, await adminClient(c));
    const c1 = clients.get('cluster1')!;
    const controller = sandbox.cluster('cluster1').extras[0]!;
    const ports = new Map(sandbox.clusters.map((c) => [c.name, Number(new URL(c.server).port)]));
    const points: PeerCostPoint[] = [];
    const snapshots: HeapSummary[] = [];
    for (let k = 1; k <= PEERS; k++) {
      const peer = names[k]!;
      await join({ rest: c1, label: 'cluster1' }, { rest: clients.get(peer)!, label: peer }, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: () => undefined });
      const joined = names.slice(1, k + 1);
      const settled = async (ms: number): Promise<void> => {
        await until(
          `cluster1 to see ${k} peers Ready with informers`,
          async () => {
            const clusters = (await c1.list<Cluster>(CLUSTERS)).items;
            const metrics = await controllerMetrics(sandbox, 'cluster1');
            return joined.every((n) => clusters.some((c) => c.metadata.name === n && c.status?.state === 'Ready') && hasPeerInformer(metrics, n));
          },
          180_000,
        );
        await new Promise((r) => setTimeout(r, ms));
      };
      await settled(SETTLE_MS);
      // What joining left in the running process, beside the restarted process's reading below.
      const beforeRestart = rssMiB(controller.pid ?? 0);
      await controller.restart();
      await settled(RESTARTED_SETTLE_MS);
      const pid = controller.pid;
      if (pid === undefined) throw new Error("cluster1's controller has no process");
      const conns = connectionsByRemotePort(pid);
      const metrics = await controllerMetrics(sandbox, 'cluster1');
      const mib = (name: string, labels: Record<string, string> = {}) => (seriesIn(metrics, name).find((x) => Object.entries(labels).every(([l, v]) => x.labels[l] === v))?.value ?? NaN) / 2 ** 20;
      const point: PeerCostPoint = {
        peers: k,
        rssMiB: rssMiB(pid),
        anonMiB: anonMiB(pid),
        heapUsedMiB: mib('nodejs_heap_size_used_bytes'),
        heapTotalMiB: mib('nodejs_heap_size_total_bytes'),
        newSpaceMiB: mib('nodejs_heap_space_size_total_bytes', { space: 'new' }),
        externalMiB: mib('nodejs_external_memory_bytes'),
        ownConnections: conns.get(ports.get('cluster1')!) ?? 0,
        connectionsPerPeer: joined.reduce((n, p) => n + (conns.get(ports.get(p)!) ?? 0), 0) / k,
      };
      points.push(point);
      process.stderr.write(
        `bench: peer cost: ${k} peers: RSS ${point.rssMiB.toFixed(1)} MiB (${beforeRestart.toFixed(1)} before the restart) (anonymous ${point.anonMiB.toFixed(1)}; V8 heap ${point.heapUsedMiB.toFixed(1)} used of ${point.heapTotalMiB.toFixed(1)}, young generation ${point.newSpaceMiB.toFixed(1)}, external ${point.externalMiB.toFixed(1)}; native ${nativeMiB(point).toFixed(1)}), connections: ${point.ownConnections} to its own API server, ${point.connectionsPerPeer.toFixed(1)} per peer\n`,
      );
      if (k === 1 || k === PEERS) snapshots.push(await snapshot(sandbox, pid, dir));
    }
    const fit = (pick: (p: PeerCostPoint) => number) =>
      linearFit(
        points.map((p) => p.peers),
        points.map(pick),
      );
    const rss = fit((p) => p.rssMiB);
    const anon = fit((p) => p.anonMiB);
    const native = fit(nativeMiB);
    // The young generation grows in steps with the allocation rate up to its cap (the controller's
    // --max-semi-space-size), then no more: what each further peer costs is the rest.
    const beyondYoung = fit((p) => p.rssMiB - p.newSpaceMiB);
    const slopeOf = (pick: (p: PeerCostPoint) => number) => fit(pick).b.toFixed(2);
    process.stderr.write(`bench: peer cost: per added peer, V8 heap used ${slopeOf((p) => p.heapUsedMiB)} MiB, V8 heap held ${slopeOf((p) => p.heapTotalMiB)} MiB (young generation ${slopeOf((p) => p.newSpaceMiB)} MiB), external ${slopeOf((p) => p.externalMiB)} MiB, native ${native.b.toFixed(2)} MiB\n`);
    const [first, last] = snapshots as [HeapSummary, HeapSummary];
    const perPeerHeap = (last.totalBytes - first.totalBytes) / (PEERS - 1);
    process.stderr.write(`bench: peer cost: RSS ${rss.a.toFixed(1)} + ${rss.b.toFixed(2)}·peers MiB (r² ${rss.r2.toFixed(2)}); anonymous ${anon.a.toFixed(1)} + ${anon.b.toFixed(2)}·peers MiB; V8 heap ${(perPeerHeap / 2 ** 10).toFixed(0)} KiB per peer\n`);
    for (const [by, before, after] of [
      ['constructor', first.byKind, last.byKind],
      ['what retains it', first.byRetainer, last.byRetainer],
    ] as const) {
      process.stderr.write(`bench: peer cost: heap growth per peer by ${by} (KiB, objects):\n`);
      for (const g of growth(before, after, PEERS - 1, TOP)) process.stderr.write(`bench:   ${(g.bytes / 2 ** 10).toFixed(1).padStart(8)} ${g.count.toFixed(0).padStart(7)}  ${g.key}\n`);
    }
    return [
      { name: 'peer cost: controller RSS per added peer, young generation aside', ours: beyondYoung.b, baseline: rss.b, unit: 'MiB', ratio: beyondYoung.b / rss.b, note: 'baseline: RSS per added peer, young generation included (it stops growing at its cap)' },
      { name: 'peer cost: controller RSS per added peer', ours: rss.b, baseline: points[0]!.rssMiB, unit: 'MiB', ratio: rss.b / points[0]!.rssMiB, note: `baseline: its RSS with one peer; fitted over 1..${PEERS} peers` },
      { name: 'peer cost: anonymous RSS per added peer', ours: anon.b, baseline: points[0]!.anonMiB, unit: 'MiB', ratio: anon.b / points[0]!.anonMiB, note: 'baseline: its anonymous RSS with one peer' },
      { name: 'peer cost: native memory per added peer', ours: native.b, baseline: rss.b, unit: 'MiB', ratio: native.b / rss.b, note: "anonymous RSS less V8's heap: what the allocator holds (freed memory it has not returned included); baseline: RSS per added peer" },
      { name: 'peer cost: V8 heap per added peer', ours: perPeerHeap / 2 ** 20, baseline: first.totalBytes / 2 ** 20, unit: 'MiB', ratio: perPeerHeap / first.totalBytes, note: 'baseline: its heap with one peer' },
    ];
  } finally {
    for (const c of clients.values()) c.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

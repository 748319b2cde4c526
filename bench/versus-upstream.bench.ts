// Head to head with upstream's Go controller v0.2.12: the same workload on two fresh groups of
// three real clusters, one running upstream's controller in every member and one running ours,
// each formed by hand as upstream's quickstart says, both running at once. Per group: the
// controller's RSS at idle; propagation latency of single changes from cluster1 to both peers
// (p50/p99), the two groups' changes taken in turn so that both meet the same moments of this
// machine; convergence of new objects from cluster1 to both peers in three stages (1,000, then
// 4,000 more, then 5,000 more), ours first and then Go's, each after a minute's rest beside the
// other group at idle, with the peers' controllers' CPU seconds and the requests they sent to each
// API server, by verb (from the rest_client_requests_total counter both controllers export); the
// controller's RSS after each stage. Unless a row says otherwise, the ratio is ours over Go's
// (below 1 is better).
// CPU and requests per copy include what runs regardless of load (leases, resyncs) over the
// stages' time, which weighs on the slower controller.
// Floors put the targets in scale, measured in the same groups: two raw relays (a watch on cluster1
// that writes each peer's copy at once, no controller) for propagation, one by merge patch (the
// shortest path) and one by server-side apply (the write a controller makes that owns its fields,
// as ours does), their changes taken in turn with the controller's, and an idle bare Node process
// for memory, beside each controller's anonymous memory (what it allocated, without the pages of
// its binary). Their rows say what
// their ratio compares. Where our propagation goes is read from our controllers' own histograms
// over the single changes: the wait in the work queue and each stage of the reconcile, beside the
// relays' writes and the change's delivery to a watch on cluster1 (the part all three paths share).
import { NAMESPACES, RESOURCE_SYNC_RULES as RULES } from '../src/core/api/resources.ts';
import type { KubeObject } from '../src/kube/index.ts';
import { controllerMetrics, controllerSeries } from '../test/support/registry.ts';
import { grantKinds, rule, waitGroupFormed, type SyncGroup } from '../test/support/sync-helpers.ts';
import { startMixedGroup } from '../test/support/upstream.ts';
import type { BenchResult } from './informer.bench.ts';
import { spawn } from 'node:child_process';
import { CONTROLLER_NODE_FLAGS, controllerAllocatorEnv } from '../src/testbed/group.ts';
import { mean } from './report/scaling.ts';
import { anonMiB, balancedOrders, CM, type Closable, cpuSince, cpuSnapshot, createMany, histogramMeanMs, percentile, rssMiB, stopAfter, until, watchNamespace } from './support.ts';

const NS = 'versus';
/** Where the raw relays copy: no rule matches them. */
const RELAY_NS = 'versus-relay';
const APPLY_RELAY_NS = 'versus-apply-relay';
/** The namespaces whose changes are timed: through the controller, the merge relay, the apply relay. */
const PATHS = [NS, RELAY_NS, APPLY_RELAY_NS] as const;
const NAMES = ['cluster1', 'cluster2', 'cluster3'];
const PEERS = ['cluster2', 'cluster3'];
const LATENCY_OBJECTS = 10;
const LATENCY_NAMES = Array.from({ length: LATENCY_OBJECTS }, (_, i) => `latency-${i}`);
/** Marks the unmeasured first changes. */
const WARM = 'warm-';
/** Between two single changes: what a controller does after its copies showed is over by then. */
const SAMPLE_GAP_MS = 100;
/** Between two rounds of the paths: one round's last path always precedes the next round's first, so it rests longer. */
const ROUND_GAP_MS = 500;
/** Before each group's convergence: the other's last work (its idle memory release, its API servers settling) is over. */
const CONVERGE_REST_MS = 60_000;
/** Single changes whose propagation is timed: 400 samples over both peers, so p99 is not just the slowest one. */
const SINGLE_CHANGES = 200;
/** Objects added per convergence stage: synced totals of 1,000, 5,000 and 10,000. */
const STAGES = [1_000, 4_000, 5_000];
/** How long a controller runs before its idle RSS is read. */
const IDLE_MS = 30_000;
/** How long after a stage converged its RSS is read. */
const SETTLE_MS = 5_000;

type MarkedObject = KubeObject & { data?: Record<string, string> };

interface Stage {
  /** Objects synced once the stage converged. */
  total: number;
  convergeMs: number;
  rss: number;
}

interface Figures {
  idleRss: number;
  /** Anonymous memory at idle: RSS without the pages mapped from the binary and its libraries. */
  idleAnon: number;
  p50: number;
  p99: number;
  /** The merge relay's propagation in the same group. */
  relayP50: number;
  relayP99: number;
  relayMean: number;
  /** The apply relay's, in the same group. */
  applyRelayP99: number;
  applyRelayMean: number;
  mean: number;
  /** The relay's merge patch of one copy, sent to its reply. */
  relayPatchMs: number;
  /** The apply relay's apply of one copy, sent to its reply. */
  relayApplyMs: number;
  /** A change on cluster1 until a watch on cluster1 sees it, over the controller's and the relays' samples. */
  deliveryMs: number;
  /** Our controllers only: mean milliseconds per key in the work queue and per reconcile stage, over the single changes. */
  reconcileStages?: { queue: number; decide: number; write: number; record: number };
  stages: Stage[];
  /** Peer controllers' CPU seconds over all stages, per synced copy. */
  cpuPerCopy: number;
  /** Requests the peer controllers sent over all stages, keyed `<own|peers> <VERB>`. */
  requests: Map<string, number>;
  copies: number;
}

/**
 * Requests a member's controller has sent so far, keyed `own <VERB>` (to its own API server) or
 * `peers <VERB>`. Ours counts a watch as WATCH and upstream's client as GET: both count as GET.
 */
async function requestsSent(g: SyncGroup, member: string): Promise<Map<string, number>> {
  const own = new URL(g.sandbox.cluster(member).server).host;
  const sent = new Map<string, number>();
  for (const s of await controllerSeries(g.sandbox, member, 'rest_client_requests_total')) {
    const key = `${s.labels['host'] === own ? 'own' : 'peers'} ${s.labels['method'] === 'WATCH' ? 'GET' : (s.labels['method'] ?? '?')}`;
    sent.set(key, (sent.get(key) ?? 0) + s.value);
  }
  return sent;
}

/** What the peers' controllers sent between two readings, summed over the peers. */
async function requestsSince(g: SyncGroup, before: Map<string, Map<string, number>>): Promise<Map<string, number>> {
  const sum = new Map<string, number>();
  for (const p of PEERS) {
    for (const [k, v] of await requestsSent(g, p)) sum.set(k, (sum.get(k) ?? 0) + v - (before.get(p)?.get(k) ?? 0));
  }
  return sum;
}

type Kind = 'ours' | 'upstream';

/** A group of three running one controller, set up for the workload, and what was measured of it so far. */
interface Measured {
  readonly kind: Kind;
  readonly g: SyncGroup;
  readonly idleRss: number;
  readonly idleAnon: number;
  readonly pid: (name: string) => number;
  /** Changes one object of `ns` on cluster1 and returns how long until both peers' copies had it. */
  readonly propagate: (ns: string, name: string, marker: string) => Promise<number[]>;
  /** Per change: until a watch on cluster1 saw it (the part of the path all three share). */
  readonly delivery: number[];
  /** The relays' writes of one copy, each sent to its reply: merge patches and applies. */
  readonly relayPatches: number[];
  readonly relayApplies: number[];
  readonly onPeers: (names: readonly string[]) => () => boolean;
  readonly stop: () => Promise<void>;
}

/** Starts a group of three with `kind`'s controller in every member, reads its idle memory, and sets up the rule, the watches and the raw relays. */
async function startMeasured(kind: Kind): Promise<Measured> {
  // Ours from dist/, as it ships (`make bench` builds it first).
  const g = await startMixedGroup({ name: `bench-versus-${kind}`, names: NAMES, upstream: kind === 'upstream' ? NAMES : [], hub: 'cluster1', built: true });
  const streams: Closable[] = [];
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      for (const s of streams) s.close();
      await g.stop();
    })());
  try {
    await waitGroupFormed(g);
    const pid = (name: string): number => g.sandbox.cluster(name).extras[0]?.pid ?? 0;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleRss = rssMiB(pid('cluster2'));
    const idleAnon = anonMiB(pid('cluster2'));

    await grantKinds(g, 'versus-configmaps', '', ['configmaps']);
    for (const n of NAMES) for (const name of PATHS) await g.client(n).create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const seen = new Map([...NAMES.map((p) => [p, new Map<string, number>()] as const)]);
    const added = new Map(PEERS.map((p) => [p, new Set<string>()]));
    // Watches on the peers see the copies change; the one on cluster1, each change itself.
    for (const p of NAMES) {
      for (const ns of PATHS) {
        streams.push(
          await watchNamespace(g.client(p), ns, (type, obj: MarkedObject) => {
            const marker = obj.data?.['marker'];
            if (marker && !seen.get(p)!.has(marker)) seen.get(p)!.set(marker, performance.now());
            if (type === 'ADDED' && ns === NS) added.get(p)?.add(obj.metadata.name ?? '');
          }),
        );
      }
    }
    const c1 = g.client('cluster1');
    await c1.create(RULES, undefined, rule('versus', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { sync: 'bench' } }] }] }] }));
    const onPeers = (names: readonly string[]) => () => PEERS.every((p) => names.every((n) => added.get(p)!.has(n)));
    await createMany(c1, LATENCY_NAMES, 'x', NS);
    await until('the first copies', onPeers(LATENCY_NAMES), 300_000);
    const delivery: number[] = [];
    const propagate = async (ns: string, name: string, marker: string): Promise<number[]> => {
      const t0 = performance.now();
      await c1.patch(CM, ns, name, 'merge', { data: { marker } });
      await until(`marker ${marker} on both peers`, () => PEERS.every((p) => seen.get(p)!.has(marker)) && seen.get('cluster1')!.has(marker), 60_000);
      delivery.push(seen.get('cluster1')!.get(marker)! - t0);
      return PEERS.map((p) => seen.get(p)!.get(marker)! - t0);
    };
    // The relays: as short a path as a controller can take (a watch event, then one write per peer),
    // by merge patch, and by the apply of the copy's labels and data that a controller owning its
    // fields makes.
    const relayPatches: number[] = [];
    const relayApplies: number[] = [];
    const relay = async (ns: string, timings: number[], write: (p: string, obj: MarkedObject) => Promise<unknown>): Promise<void> => {
      for (const n of NAMES) await createMany(g.client(n), LATENCY_NAMES, 'x', ns);
      streams.push(
        await watchNamespace(c1, ns, (type, obj: MarkedObject) => {
          const marker = obj.data?.['marker'];
          if (type !== 'MODIFIED' || !marker) return;
          for (const p of PEERS) {
            const t0 = performance.now();
            const timed = !marker.startsWith(WARM);
            void write(p, obj).then(() => timed && timings.push(performance.now() - t0), () => undefined);
          }
        }),
      );
    };
    await relay(RELAY_NS, relayPatches, (p, obj) => g.client(p).patch(CM, RELAY_NS, obj.metadata.name ?? '', 'merge', { data: { marker: obj.data?.['marker'] } }));
    await relay(APPLY_RELAY_NS, relayApplies, (p, obj) => {
      const copy = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: obj.metadata.name ?? '', namespace: APPLY_RELAY_NS, labels: obj.metadata.labels ?? {} }, data: obj.data ?? {} };
      return g.client(p).apply(CM, APPLY_RELAY_NS, copy, { fieldManager: 'versus-relay', force: true });
    });
    return { kind, g, idleRss, idleAnon, pid, propagate, delivery, relayPatches, relayApplies, onPeers, stop };
  } catch (err) {
    await stop().catch((stopErr: unknown) => process.stderr.write(`bench: versus: the ${kind} group did not stop cleanly: ${String(stopErr)}\n`));
    throw err;
  }
}

interface Propagation {
  propagation: number[];
  relay: number[];
  applyRelay: number[];
  deliveryMs: number;
  relayPatchMs: number;
  relayApplyMs: number;
}

/**
 * A copy's first change is not steady state (ours then moves the fields its create wrote into its
 * apply entry; the apply relay's first apply makes its entry, beside the create's, which keeps the
 * fields whose values it set too): one unmeasured change per object first, in every group, for
 * every path.
 */
async function warmUp(groups: readonly Measured[]): Promise<void> {
  for (const m of groups) for (const ns of PATHS) for (const name of LATENCY_NAMES) await m.propagate(ns, name, `${WARM}${ns}-${name}`);
  for (const m of groups) {
    m.delivery.length = 0;
    m.relayPatches.length = 0;
    m.relayApplies.length = 0;
  }
}


/**
 * Propagation samples of SINGLE_CHANGES changes in every group, through its controller and
 * through its raw relays, taken in turn, one change at a time, so that every path meets the same
 * moments of this machine (groups measured one after the other saw floors far apart: a relay p99
 * 1.7 times another's in one run). The paths' order goes round a balanced square, and each change
 * waits SAMPLE_GAP_MS after the last (ROUND_GAP_MS after a round's last), so that no path mostly
 * follows one other or meets what a controller still does after its copies showed (their own
 * watch events, the outcome recorded).
 */
async function sampleInTurn(ours: Measured, go: Measured): Promise<Map<Kind, Propagation>> {
  const taken = new Map([ours, go].map((m) => [m.kind, new Map<string, number[]>(PATHS.map((ns) => [ns, []]))]));
  const paths = [ours, go].flatMap((m) => PATHS.map((ns) => ({ m, ns })));
  const orders = balancedOrders(paths.length);
  for (let i = 0; i < SINGLE_CHANGES; i++) {
    const name = LATENCY_NAMES[i % LATENCY_OBJECTS]!;
    if (i > 0) await new Promise((r) => setTimeout(r, ROUND_GAP_MS - SAMPLE_GAP_MS));
    for (const k of orders[i % orders.length]!) {
      const { m, ns } = paths[k]!;
      await new Promise((r) => setTimeout(r, SAMPLE_GAP_MS));
      taken.get(m.kind)!.get(ns)!.push(...(await m.propagate(ns, name, `${ns}-${i}`)));
    }
  }
  return new Map(
    [ours, go].map((m) => {
      const t = taken.get(m.kind)!;
      return [m.kind, { propagation: t.get(NS)!, relay: t.get(RELAY_NS)!, applyRelay: t.get(APPLY_RELAY_NS)!, deliveryMs: mean(m.delivery), relayPatchMs: mean(m.relayPatches), relayApplyMs: mean(m.relayApplies) }];
    }),
  );
}

/** Convergence of the STAGES of new objects from cluster1 to both peers, with the peers' CPU and requests. */
async function converge(m: Measured): Promise<Pick<Figures, 'stages' | 'cpuPerCopy' | 'requests' | 'copies'>> {
  const procs = Object.fromEntries(PEERS.map((p) => [p, m.pid(p)]));
  const cpu0 = cpuSnapshot(procs);
  const requests0 = new Map(await Promise.all(PEERS.map(async (p) => [p, await requestsSent(m.g, p)] as const)));
  const stages: Stage[] = [];
  let total = 0;
  for (const count of STAGES) {
    const names = Array.from({ length: count }, (_, i) => `bulk-${total + i}`);
    const b0 = performance.now();
    await createMany(m.g.client('cluster1'), names, 'y'.repeat(256), NS);
    await until(`${total + count} copies on both peers`, m.onPeers(names), 1_800_000);
    total += count;
    const convergeMs = performance.now() - b0;
    // The same settling time for both before RSS is read, so neither is caught mid-collection.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    stages.push({ total, convergeMs, rss: rssMiB(m.pid('cluster2')) });
  }
  const cpu = cpuSince(procs, cpu0);
  const copies = total * PEERS.length;
  return { stages, cpuPerCopy: PEERS.reduce((sum, p) => sum + (cpu[p] ?? 0), 0) / copies, requests: await requestsSince(m.g, requests0), copies };
}

/** Both groups at once, sampled in turn; then each converges in turn, beside the other at rest. */
async function measureBoth(): Promise<{ ours: Figures; go: Figures }> {
  const started = await Promise.allSettled([startMeasured('ours'), startMeasured('upstream')]);
  const groups = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async (): Promise<void> => {
    const failed = (await Promise.allSettled(groups.map((m) => m.stop()))).flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failed.length > 0) throw new AggregateError(failed, 'a group did not stop cleanly');
  };
  return stopAfter(async () => {
    const failed = started.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failed.length > 0) throw failed.length === 1 ? failed[0] : new AggregateError(failed, 'both groups failed to start');
    const [ours, go] = groups as [Measured, Measured];
    await warmUp(groups);
    const metrics = (): Promise<string[]> => Promise.all(PEERS.map((p) => controllerMetrics(ours.g.sandbox, p)));
    const metrics0 = await metrics();
    const sampled = await sampleInTurn(ours, go);
    const readings = (await metrics()).map((after, i) => [metrics0[i] ?? '', after] as const);
    const stage = (name: string) => histogramMeanMs(readings, 'cluster_registry_sync_stage_seconds', (l) => l['stage'] === name);
    const reconcileStages = { queue: histogramMeanMs(readings, 'workqueue_queue_duration_seconds', (l) => l['name'] === 'sync'), decide: stage('decide'), write: stage('write'), record: stage('record') };
    const figures = (m: Measured, converged: Awaited<ReturnType<typeof converge>>): Figures => {
      const p = sampled.get(m.kind)!;
      return {
        idleRss: m.idleRss,
        idleAnon: m.idleAnon,
        p50: percentile(p.propagation, 50),
        p99: percentile(p.propagation, 99),
        relayP50: percentile(p.relay, 50),
        relayP99: percentile(p.relay, 99),
        relayMean: mean(p.relay),
        applyRelayP99: percentile(p.applyRelay, 99),
        applyRelayMean: mean(p.applyRelay),
        mean: mean(p.propagation),
        relayPatchMs: p.relayPatchMs,
        relayApplyMs: p.relayApplyMs,
        deliveryMs: p.deliveryMs,
        ...converged,
      };
    };
    // Each converges after a rest, so that neither meets what the other's last work left running.
    await new Promise((r) => setTimeout(r, CONVERGE_REST_MS));
    const oursFigures = { ...figures(ours, await converge(ours)), reconcileStages };
    await new Promise((r) => setTimeout(r, CONVERGE_REST_MS));
    return { ours: oursFigures, go: figures(go, await converge(go)) };
  }, stopAll, 'versus: the groups');
}

/**
 * Where our propagation goes, as means over the single changes: ours against the relays' in our
 * group overall, then the parts. The change's delivery to a watch on cluster1 is what all paths
 * share; the relays' writes are the floors of ours (an apply, a costlier call for the API server
 * than a merge patch); the queue wait, deciding and recording are what a relay does not do at
 * all, so their baseline is the merge relay's whole path.
 */
function propagationParts(f: Figures): BenchResult[] {
  const s = f.reconcileStages;
  if (!s) return [];
  const part = (name: string, ms: number, baseline: number, note: string): BenchResult => ({ name: `versus Go: our propagation, ${name} (mean)`, ours: ms, baseline, unit: 'ms', ratio: ms / baseline, note });
  const ofRelay = "baseline: the merge relay's whole path in our group";
  return [
    part('whole path', f.mean, f.relayMean, "baseline: the merge relay's in our group"),
    part('whole path, beside the apply relay', f.mean, f.applyRelayMean, "baseline: the apply relay's in our group"),
    part("the change's delivery to a watch on cluster1", f.deliveryMs, f.relayMean, `shared by all three paths; ${ofRelay}`),
    part('wait in the work queue', s.queue, f.relayMean, ofRelay),
    part('deciding (caches, mutation, ownership, trust)', s.decide, f.relayMean, ofRelay),
    part('writing the copy (apply, reply read)', s.write, f.relayPatchMs, "baseline: the merge relay's patch, sent to reply"),
    part('writing the copy, beside the apply relay', s.write, f.relayApplyMs, "baseline: the apply relay's apply, sent to reply"),
    part('recording the outcome', s.record, f.relayMean, ofRelay),
  ];
}

/** RSS of a Node process that runs nothing, with the controller's flags and allocator, after IDLE_MS. */
async function bareNodeRss(): Promise<number> {
  // It ends by itself soon after, should this process die before it kills it.
  const child = spawn(process.execPath, [...CONTROLLER_NODE_FLAGS, '-e', `setTimeout(() => {}, ${2 * IDLE_MS})`], { stdio: 'ignore', env: { ...process.env, ...controllerAllocatorEnv(), NODE_OPTIONS: '' } });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      setTimeout(resolve, IDLE_MS);
    });
    return rssMiB(child.pid ?? 0);
  } finally {
    child.kill('SIGKILL');
  }
}

export async function run(): Promise<BenchResult[]> {
  const { ours, go } = await measureBoth();
  const bareNode = await bareNodeRss();
  const row = (name: string, unit: string, pick: (f: Figures) => number, note?: string): BenchResult => ({ name, ours: pick(ours), baseline: pick(go), unit, ratio: pick(ours) / pick(go), ...(note ? { note } : {}) });
  const n = (x: number) => x.toLocaleString('en-US');
  const stageRows = STAGES.flatMap((count, i) => {
    const total = ours.stages[i]?.total ?? 0;
    return [
      row(`versus Go: convergence, ${i === 0 ? n(count) : `${n(count)} more to ${n(total)}`} objects to 2 peers`, 's', (f) => (f.stages[i]?.convergeMs ?? NaN) / 1000, 'target: at most Go'),
      row(`versus Go: controller RSS, ${n(total)} synced objects`, 'MiB', (f) => f.stages[i]?.rss ?? NaN, total >= 10_000 ? 'target: at most Go' : undefined),
    ];
  });
  const verbs = [...new Set([...ours.requests.keys(), ...go.requests.keys()])].sort();
  const perCopy = (f: Figures) => [...f.requests.values()].reduce((a, b) => a + b, 0) / f.copies;
  return [
    row('versus Go: controller RSS at idle', 'MiB', (f) => f.idleRss, 'baseline: upstream v0.2.12, same group, 30 s after forming; target: at most 1.5x'),
    row('versus Go: controller anonymous RSS at idle', 'MiB', (f) => f.idleAnon, 'without the pages mapped from the binary and its libraries'),
    { name: 'versus Go: floor, a bare Node process at idle', ours: bareNode, baseline: go.idleRss, unit: 'MiB', ratio: bareNode / go.idleRss, note: "ours: RSS of `node -e` with the controller's flags; baseline: Go's controller" },
    row('versus Go: propagation p50 (3 clusters)', 'ms', (f) => f.p50, 'baseline: upstream v0.2.12'),
    row('versus Go: propagation p99 (3 clusters)', 'ms', (f) => f.p99, 'target: at most half of Go'),
    row('versus Go: floor, merge relay propagation p50', 'ms', (f) => f.relayP50, "ratio: the relay in our group over the relay in Go's (sampled in turn: near 1)"),
    row('versus Go: floor, merge relay propagation p99', 'ms', (f) => f.relayP99, "a watch on cluster1 patching both peers at once, no controller; ratio as above"),
    { name: "versus Go: floor, merge relay p99 over Go's p99, same group", ours: go.relayP99, baseline: go.p99, unit: 'ms', ratio: go.relayP99 / go.p99, note: "ours: the relay in Go's group; above 0.5, half of Go's p99 is below the floor" },
    { name: 'versus Go: our p99 over the merge relay p99, same group', ours: ours.p99, baseline: ours.relayP99, unit: 'ms', ratio: ours.p99 / ours.relayP99, note: 'baseline: the merge relay in our group; 1 or more, what our controller and its apply add to the shortest path' },
    row('versus Go: floor, apply relay propagation p99', 'ms', (f) => f.applyRelayP99, 'the same relay writing by server-side apply; ratio: ours over the one in Go\'s group'),
    { name: 'versus Go: our p99 over the apply relay p99, same group', ours: ours.p99, baseline: ours.applyRelayP99, unit: 'ms', ratio: ours.p99 / ours.applyRelayP99, note: 'baseline: the apply relay in our group; what our controller adds to a path making the same kind of write' },
    ...propagationParts(ours),
    ...stageRows,
    row('versus Go: peer controller CPU per synced copy', 'ms', (f) => f.cpuPerCopy * 1000, 'user and system, over all stages'),
    row('versus Go: requests per synced copy', 'req', perCopy, 'sent by the peer controllers to any API server; target: fewer than Go'),
    ...verbs.map((k) => row(`versus Go: ${k} requests, all stages`, 'req', (f) => f.requests.get(k) ?? 0, `${k.startsWith('own') ? 'to its own API server' : "to the peers' API servers"}, both peer controllers`)),
  ];
}

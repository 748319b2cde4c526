// Scaling benchmark, side by side with upstream's Go controller: for each N of SIZES, a fresh full
// mesh of N real clusters running our controller (from dist/) in every member, then the same with
// upstream's v0.2.12 in every member, each formed the quickstart's way (every member swaps its
// Cluster and Secret with cluster1 by hand, the registry sync does the rest), one rule syncing
// ConfigMaps from any member to all others. Which controller goes first alternates with N, so
// neither always meets a machine still busy with the other's teardown. Per N and controller:
//  - an idle window: each controller's and API server's CPU, the requests each controller sends
//    (to its own API server and to peers) and each API server receives from the controllers;
//  - convergence of OBJECTS new ConfigMaps created on cluster1 to all N-1 peers, with every process's
//    CPU and the requests sent meanwhile, then each controller's RSS and anonymous RSS and its API
//    server's RSS (seconds after converging), each controller's RSS again REST_MS later (the
//    objects held, nothing to do: what a group at rest keeps), and the controllers' open
//    connections to each API server;
//  - the raw baseline for the same N: raw clients making the same writes at once (the objects on
//    cluster1 and a copy on every peer), timed, with the API servers' CPU.
// Everything shares this machine's cores, so convergence slows with N because the group's total
// work grows; per-cluster figures are what carry over to clusters on their own machines. Sizes stop
// at 16: a member (etcd, API server, controller) takes about 0.5 GiB, and forming and converging
// on two cores takes minutes per size; BENCH_SCALING_SIZES=2,4 runs fewer (two sizes at least, to fit lines).
import { RESOURCE_SYNC_RULES as RULES } from '../src/core/api/resources.ts';
import { peerHostLabel } from '../src/kube/rest.ts';
import { RELAY_SETTLE_MS } from '../src/sync/engine.ts';
import type { Sandbox } from '../src/sandbox/index.ts';
import { controllerSeries } from '../test/support/registry.ts';
import { waitGroupFormed, type SyncGroup } from '../test/support/sync-helpers.ts';
import { startMixedGroup } from '../test/support/upstream.ts';
import type { BenchResult } from './informer.bench.ts';
import { ESTIMATE_FOR, type Samples } from './report/report.ts';
import { compareSlopes, estimateLines, growthLines, mean, scalingRows, slopeLines, type MemberFigures, type Requests, type ScalingPoint, type ScalingRow, type ScalingSamples } from './report/scaling.ts';
import { anonMiB, type Closable, connectionsByRemotePort, CONTROLLER_WORKERS, cpuSince, cpuSnapshot, createMany, prepareMember, rssMiB, stopAfter, until, watchNamespace } from './support.ts';

const SIZES = sizes(process.env['BENCH_SCALING_SIZES']);

/** The group sizes to measure: BENCH_SCALING_SIZES (at least two distinct sizes of 2 or more), or all. */
function sizes(given: string | undefined): number[] {
  if (given === undefined) return [2, 4, 8, 12, 16];
  const list = [...new Set(given.split(',').map((x) => Number(x.trim())))].sort((a, b) => a - b);
  if (list.length < 2 || !list.every((n) => Number.isInteger(n) && n >= 2)) throw new Error(`BENCH_SCALING_SIZES=${given}: give two or more group sizes of 2 or more, e.g. 2,4`);
  return list;
}
const OBJECTS = 300;
const NS = 'scale';
/** Where raw clients write; no rule matches it. */
const RAW_NS = 'scale-raw';
/**
 * A minute: the longest period of a controller's idle work (the registry's metadata refresh, every
 * 60 s), so that every window holds one of each whatever its phase; a shorter one measured a
 * member's idle cost as whether that refresh fell inside it.
 */
const IDLE_MS = 60_000;
/**
 * After the rule reached every member, before the idle window: the first lists and writes settle,
 * and our peer watches have left out the copies of owners that answer first-hand (what a group
 * that runs for more than a minute holds). Both controllers wait at least as long, and then until
 * no controller has opened a watch for QUIET_MS (at most SETTLE_MAX_MS more).
 */
const SETTLE_MS = RELAY_SETTLE_MS + 10_000;
/**
 * After converging, until memory is read at rest: long enough for V8 to shrink a young generation
 * the burst grew and for our controller's idle release (two 15 s looks) to run. Go's runtime
 * collects a burst's garbage at its next GC (forced every two minutes when little is allocated),
 * so Go may hold it still: its line at rest is shown, the slope target stays on the reading right
 * after converging, where neither has given anything back.
 */
const REST_MS = 60_000;

const QUIET_MS = 10_000;
const SETTLE_MAX_MS = 120_000;

/** Watches opened by all controllers so far. */
async function watchesOpened(sandbox: Sandbox): Promise<number> {
  let n = 0;
  for (const c of sandbox.clusters) for (const s of await controllerSeries(sandbox, c.name, 'rest_client_requests_total')) if (s.labels['method'] === 'WATCH') n += s.value;
  return n;
}

/** Waits until no controller opened a watch (a relist) for QUIET_MS, or SETTLE_MAX_MS went by; says which. */
async function untilQuiet(sandbox: Sandbox): Promise<void> {
  const deadline = performance.now() + SETTLE_MAX_MS;
  let last = await watchesOpened(sandbox);
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const now = await watchesOpened(sandbox);
    if (now === last) return;
    last = now;
  }
  process.stderr.write(`bench: scaling: watches still opening after ${SETTLE_MAX_MS / 1000} s more; measuring idle anyway\n`);
}

type Kind = 'ours' | 'upstream';

/** The idle memory releases each of our controllers has run so far. */
async function releases(sandbox: Sandbox): Promise<number[]> {
  return Promise.all(sandbox.clusters.map(async (c) => (await controllerSeries(sandbox, c.name, 'cluster_registry_memory_releases_total')).reduce((n, s) => n + s.value, 0)));
}

async function requestsByHost(sandbox: Sandbox): Promise<Map<string, number>[]> {
  return Promise.all(
    sandbox.clusters.map(async (c) => {
      const sent = new Map<string, number>();
      for (const s of await controllerSeries(sandbox, c.name, 'rest_client_requests_total')) sent.set(s.labels['host'] ?? '', (sent.get(s.labels['host'] ?? '') ?? 0) + s.value);
      return sent;
    }),
  );
}

const hostOf = (server: string) => new URL(server).host;

/** What each controller sent between two readings, split into its own API server and the peers'. */
function requestsBetween(sandbox: Sandbox, before: Map<string, number>[], after: Map<string, number>[]): Requests[] {
  return sandbox.clusters.map((c, i) => {
    const r: Requests = { own: 0, peers: 0 };
    for (const [host, n] of after[i] ?? []) r[host === hostOf(c.server) ? 'own' : 'peers'] += n - (before[i]?.get(host) ?? 0);
    return r;
  });
}

/**
 * What each API server received from all controllers between two readings. Ours counts what it
 * sends a peer under the peer's Cluster name (`peer/<name>`), upstream's under the server's
 * address: either names the member.
 */
function servedBetween(sandbox: Sandbox, before: Map<string, number>[], after: Map<string, number>[]): number[] {
  return sandbox.clusters.map((c) => {
    const labels = [hostOf(c.server), peerHostLabel(c.name)];
    const sent = (m: Map<string, number> | undefined) => labels.reduce((n, l) => n + (m?.get(l) ?? 0), 0);
    return after.reduce((sum, m, i) => sum + sent(m) - sent(before[i]), 0);
  });
}

async function measure(n: number, kind: Kind): Promise<ScalingPoint> {
  const t0 = performance.now();
  const memberNames = Array.from({ length: n }, (_, i) => `cluster${i + 1}`);
  const g = await startMixedGroup({ name: `bench-scaling-${kind}-${n}`, names: memberNames, upstream: kind === 'upstream' ? memberNames : [], hub: 'cluster1', built: true });
  const streams: Closable[] = [];
  const stop = async () => {
    for (const s of streams) s.close();
    await g.stop();
  };
  return stopAfter(() => measureGroup(g, n, kind, memberNames, streams, t0), stop, `scaling: the ${n}-cluster group (${kind})`);
}

/** The measurements of `measure` on its running group; the watches it opens go to `streams`. */
async function measureGroup(g: SyncGroup, n: number, kind: Kind, memberNames: readonly string[], streams: Closable[], t0: number): Promise<ScalingPoint> {
  const sandbox = g.sandbox;
  await waitGroupFormed(g, 600_000);
  process.stderr.write(`bench: scaling: ${n} clusters (${kind}) started and formed in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  const clients = memberNames.map((name) => g.client(name));
  const [source, ...peers] = clients;
  for (const rest of clients) await prepareMember(rest, [NS, RAW_NS], 'configmaps');
  await source!.create(RULES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'bench-scale' }, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { sync: 'bench' } }] }] }] } });
  for (const rest of clients) await until('the rule on every member', async () => (await rest.list(RULES)).items.length > 0, 60_000);
  const added = peers.map(() => new Set<string>());
  for (const [i, rest] of peers.entries()) {
    streams.push(
      await watchNamespace(
        rest,
        NS,
        (type, obj) => {
          if (type === 'ADDED') added[i]!.add(obj.metadata.name ?? '');
        },
      ),
    );
  }
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  await untilQuiet(sandbox);

  const controllers = Object.fromEntries(sandbox.clusters.map((c) => [c.name, c.extras[0]?.pid ?? 0]));
  const apiservers = Object.fromEntries(sandbox.clusters.map((c) => [c.name, c.apiserver.pid ?? 0]));
  const procs = { ...Object.fromEntries(Object.entries(controllers).map(([k, v]) => [`${k} controller`, v])), ...Object.fromEntries(Object.entries(apiservers).map(([k, v]) => [`${k} apiserver`, v])) };
  const cpuOf = (used: Record<string, number>, c: string, what: 'controller' | 'apiserver') => used[`${c} ${what}`] ?? 0;

  const idleRequests0 = await requestsByHost(sandbox);
  const idleCpu0 = cpuSnapshot(procs);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleCpu = cpuSince(procs, idleCpu0);
  const idleRequests1 = await requestsByHost(sandbox);

  const names = Array.from({ length: OBJECTS }, (_, i) => `s-${i}`);
  const data = 'y'.repeat(256);
  const syncCpu0 = cpuSnapshot(procs);
  const b0 = performance.now();
  await createMany(source!, names, data, NS, 32);
  await until(`${OBJECTS} copies on ${n - 1} peers`, () => added.every((s) => names.every((x) => s.has(x))), 600_000);
  const convergeMs = performance.now() - b0;
  const syncCpu = cpuSince(procs, syncCpu0);
  const syncRequests1 = await requestsByHost(sandbox);
  await new Promise((r) => setTimeout(r, 3000));
  const ports = sandbox.clusters.map((c) => Number(new URL(c.server).port));
  const connections = Object.values(controllers).map((pid) => connectionsByRemotePort(pid));
  /** Connections to member i's API server: from its own controller, and from all the others. */
  const servedConnections = (i: number) => {
    const from = connections.map((byPort) => byPort.get(ports[i] ?? 0) ?? 0);
    const own = from[i] ?? 0;
    return { own, peers: from.reduce((a, b) => a + b, 0) - own };
  };
  const rss = sandbox.clusters.map((c) => ({ controller: rssMiB(controllers[c.name] ?? 0), anon: anonMiB(controllers[c.name] ?? 0), apiserver: rssMiB(apiservers[c.name] ?? 0) }));
  const released0 = kind === 'ours' ? await releases(sandbox) : [];
  await new Promise((r) => setTimeout(r, REST_MS));
  const restRss = sandbox.clusters.map((c) => rssMiB(controllers[c.name] ?? 0));
  if (kind === 'ours') {
    const released = (await releases(sandbox)).filter((x, i) => x > (released0[i] ?? 0)).length;
    process.stderr.write(`bench: scaling: ${n} clusters (ours): ${released} of ${n} controllers ran an idle memory release between the two readings\n`);
  }

  const rawCpu0 = cpuSnapshot(procs);
  const r0 = performance.now();
  await Promise.all([createMany(source!, names, data, RAW_NS, 32), ...peers.map((rest) => createMany(rest, names, data, RAW_NS, CONTROLLER_WORKERS))]);
  const rawMs = performance.now() - r0;
  const rawCpu = cpuSince(procs, rawCpu0);

  const idleSent = requestsBetween(sandbox, idleRequests0, idleRequests1);
  const idleServed = servedBetween(sandbox, idleRequests0, idleRequests1);
  const syncSent = requestsBetween(sandbox, idleRequests1, syncRequests1);
  const members: MemberFigures[] = sandbox.clusters.map((c, i) => ({
    idleControllerCpu: cpuOf(idleCpu, c.name, 'controller'),
    idleApiserverCpu: cpuOf(idleCpu, c.name, 'apiserver'),
    syncControllerCpu: cpuOf(syncCpu, c.name, 'controller'),
    syncApiserverCpu: cpuOf(syncCpu, c.name, 'apiserver'),
    rawApiserverCpu: cpuOf(rawCpu, c.name, 'apiserver'),
    controllerRssMiB: rss[i]?.controller ?? NaN,
    controllerAnonMiB: rss[i]?.anon ?? NaN,
    controllerRestRssMiB: restRss[i] ?? NaN,
    apiserverRssMiB: rss[i]?.apiserver ?? NaN,
    idleRequests: idleSent[i] ?? { own: 0, peers: 0 },
    syncRequests: syncSent[i] ?? { own: 0, peers: 0 },
    idleRequestsServed: idleServed[i] ?? 0,
    connectionsServed: servedConnections(i),
  }));
  return { clusters: n, convergeMs, rawMs, members };
}

function printRows(kind: Kind, rows: readonly ScalingRow[]): void {
  const fmt = (v: number, d = 1) => v.toFixed(d).padStart(8);
  process.stderr.write(`bench: scaling (${kind}), per cluster unless said: N, convergence s (raw s), controller ms/copy (apiserver ms/create), idle controller millicores (apiserver), controller RSS MiB (anonymous) (at rest) (apiserver), idle req/s served per apiserver, connections per apiserver\n`);
  for (const r of rows) {
    process.stderr.write(
      `bench: scaling ${String(r.clusters).padStart(2)} ${fmt(r.convergeS)} (${fmt(r.rawS)}) ${fmt(r.controllerMsPerCopy, 2)} (${fmt(r.apiserverMsPerCreate, 2)}) ${fmt(r.idleControllerMillicores, 0)} (${fmt(r.idleApiserverMillicores, 0)}) ${fmt(r.controllerRssMiB, 0)} (${fmt(r.controllerAnonMiB, 0)}) (${fmt(r.controllerRestRssMiB, 0)}) (${fmt(r.apiserverRssMiB, 0)}) ${fmt(r.idleRequestsServedPerSecond)} ${fmt(r.connectionsPerApiserver, 0)}\n`,
    );
  }
}

export async function run(samples: Samples): Promise<BenchResult[]> {
  const ours: ScalingPoint[] = [];
  const upstream: ScalingPoint[] = [];
  for (const [i, n] of SIZES.entries()) {
    const order: Kind[] = i % 2 === 0 ? ['ours', 'upstream'] : ['upstream', 'ours'];
    for (const kind of order) (kind === 'ours' ? ours : upstream).push(await measure(n, kind));
  }
  const scaling: ScalingSamples = { objects: OBJECTS, idleMs: IDLE_MS, points: ours, upstream };
  samples.scaling = scaling;
  const rows = scalingRows(scaling);
  const goRows = scalingRows(scaling, scaling.upstream);
  printRows('ours', rows);
  printRows('upstream', goRows);
  for (const line of [...growthLines(rows), ...estimateLines(rows, OBJECTS, ESTIMATE_FOR)]) process.stderr.write(`bench: scaling: ${line}\n`);
  const slopes = compareSlopes(rows, goRows);
  for (const line of slopeLines(slopes)) process.stderr.write(`bench: scaling, ours beside Go: ${line}\n`);
  const first = rows[0];
  const last = rows.at(-1);
  const goLast = goRows.at(-1);
  if (!first || !last || !goLast) return [];
  const label = (r: typeof first) => `${r.clusters} clusters`;
  const slope = (key: (typeof slopes)[number]['key']) => slopes.find((x) => x.key === key)!;
  const slopeRow = (key: (typeof slopes)[number]['key'], note: string): BenchResult => {
    const c = slope(key);
    return { name: `scaling: ${c.what}, per added cluster, ours beside Go`, ours: c.ours.b, baseline: c.upstream.b, unit: `${c.unit}/N`, ratio: c.slopeRatio, note };
  };
  const rss = slope('controllerRestRssMiB');
  const estimate = (f: { a: number; b: number }) => f.a + f.b * ESTIMATE_FOR;
  return [
    ...[first, last].flatMap((r) => [
      { name: `scaling: convergence, ${OBJECTS} ConfigMaps to ${r.clusters - 1} peer${r.clusters > 2 ? 's' : ''} (${label(r)})`, ours: r.convergeS, baseline: r.rawS, unit: 's', ratio: r.convergeS / r.rawS, note: 'baseline: the same writes by raw clients at once' },
      { name: `scaling: controller CPU per synced copy (${label(r)})`, ours: r.controllerMsPerCopy, baseline: r.apiserverMsPerCreate, unit: 'ms', ratio: r.controllerMsPerCopy / r.apiserverMsPerCreate, note: "baseline: a peer apiserver's CPU per create by raw clients" },
      { name: `scaling: controller CPU at idle, per cluster (${label(r)})`, ours: r.idleControllerMillicores, baseline: r.idleApiserverMillicores, unit: 'mcores', ratio: r.idleControllerMillicores / r.idleApiserverMillicores, note: 'baseline: its apiserver at idle, same window' },
      { name: `scaling: controller RSS, per cluster (${label(r)})`, ours: r.controllerRssMiB, baseline: r.apiserverRssMiB, unit: 'MiB', ratio: r.controllerRssMiB / r.apiserverRssMiB, note: 'baseline: its apiserver' },
    ]),
    { name: `scaling: controllers' connections per API server (${label(last)})`, ours: last.connectionsPerApiserver, baseline: last.clusters + 1, unit: 'conns', ratio: last.connectionsPerApiserver / (last.clusters + 1), note: 'baseline: the target, N + 1 (one per peer controller, two for its own)' },
    { name: `scaling: controllers' connections per API server, ours beside Go (${label(last)})`, ours: last.connectionsPerApiserver, baseline: goLast.connectionsPerApiserver, unit: 'conns', ratio: last.connectionsPerApiserver / goLast.connectionsPerApiserver, note: 'baseline: upstream v0.2.12, same workload' },
    slopeRow('controllerRssMiB', 'read seconds after converging; target: at most 1 (RSS grows no faster per peer than Go)'),
    slopeRow('controllerAnonMiB', 'anonymous memory, without the pages of the binary'),
    slopeRow('controllerRestRssMiB', "a minute later, at rest; Go may not have collected the burst's garbage by then"),
    slopeRow('idleControllerMillicores', ''),
    slopeRow('idleRequestsPerSecond', ''),
    slopeRow('connectionsPerApiserver', ''),
    { name: `scaling: controller CPU per synced copy, ours beside Go (mean over ${rows.length} sizes)`, ours: mean(rows.map((r) => r.controllerMsPerCopy)), baseline: mean(goRows.map((r) => r.controllerMsPerCopy)), unit: 'ms', ratio: mean(rows.map((r) => r.controllerMsPerCopy)) / mean(goRows.map((r) => r.controllerMsPerCopy)), note: 'a copy costs the same whatever N' },
    { name: `scaling: convergence, ours beside Go (${label(last)})`, ours: last.convergeS, baseline: goLast.convergeS, unit: 's', ratio: last.convergeS / goLast.convergeS, note: 'the same workload; all clusters share this machine' },
    { name: `scaling: controller RSS estimated for ${ESTIMATE_FOR} clusters, ours beside Go`, ours: estimate(rss.ours), baseline: estimate(rss.upstream), unit: 'MiB', ratio: estimate(rss.ours) / estimate(rss.upstream), note: `at rest, a minute after converging (Go's runtime may still hold the burst's garbage then); fitted lines carried to ${ESTIMATE_FOR}; target for ours: at most 300 MiB` },
  ];
}

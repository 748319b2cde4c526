// Scaling benchmark: a fresh full mesh of N real clusters for each N of SIZES (startGroup with
// join), each member running our controller (from dist/), one rule syncing Secrets from any member
// to all others. Per N:
//  - an idle window: each controller's and API server's CPU, the requests each controller sends
//    (to its own API server and to peers) and each API server receives from the controllers;
//  - convergence of OBJECTS new Secrets created on cluster1 to all N-1 peers, with every process's
//    CPU and the requests sent meanwhile, then each controller's and API server's RSS and the
//    controllers' open connections to each API server;
//  - the raw baseline for the same N: raw clients making the same writes at once (the objects on
//    cluster1 and a copy on every peer), timed, with the API servers' CPU.
// Everything shares this machine's cores, so convergence slows with N because the group's total
// work grows; per-cluster figures are what carry over to clusters on their own machines.
import { RESOURCE_SYNC_RULES as RULES } from '../src/core/api/resources.ts';
import type { RestClient, WatchStream } from '../src/kube/index.ts';
import type { Sandbox } from '../src/sandbox/index.ts';
import { adminClient, startGroup } from '../src/testbed/group.ts';
import { controllerSeries } from '../test/support/registry.ts';
import type { BenchResult } from './informer.bench.ts';
import { ESTIMATE_FOR, type Samples } from './report/report.ts';
import { estimateLines, growthLines, scalingRows, type MemberFigures, type Requests, type ScalingPoint, type ScalingSamples } from './report/scaling.ts';
import { connectionsByRemotePort, CONTROLLER_WORKERS, cpuSince, cpuSnapshot, createMany, prepareMember, rssMiB, SECRETS, until, watchNamespace } from './support.ts';

const SIZES = [2, 3, 4, 5, 6, 7, 8];
const OBJECTS = 300;
const NS = 'scale';
/** Where raw clients write; no rule matches it. */
const RAW_NS = 'scale-raw';
/** Three peer health checks and rule status writes at their default 5 s intervals. */
const IDLE_MS = 15_000;
/** After the rule reached every member, before the idle window: the first lists and writes settle. */
const SETTLE_MS = 5_000;

/** Requests each member's controller has sent so far, keyed by the API server's host. */
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

/** What each API server received from all controllers between two readings. */
function servedBetween(sandbox: Sandbox, before: Map<string, number>[], after: Map<string, number>[]): number[] {
  return sandbox.clusters.map((c) => after.reduce((sum, sent, i) => sum + (sent.get(hostOf(c.server)) ?? 0) - (before[i]?.get(hostOf(c.server)) ?? 0), 0));
}

async function measure(n: number): Promise<ScalingPoint> {
  const t0 = performance.now();
  const sandbox = await startGroup({ clusters: n, join: true, built: true });
  process.stderr.write(`bench: scaling: ${n} clusters started and joined in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  const clients: RestClient[] = [];
  const streams: WatchStream[] = [];
  try {
    clients.push(...(await Promise.all(sandbox.clusters.map((c) => adminClient(c)))));
    const [source, ...peers] = clients;
    for (const rest of clients) await prepareMember(rest, [NS, RAW_NS], 'secrets');
    await source!.create(RULES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'bench-scale' }, spec: { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { sync: 'bench' } }] }] }] } });
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
          SECRETS,
        ),
      );
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));

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
    await createMany(source!, names, data, NS, 32, SECRETS);
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
    const rss = sandbox.clusters.map((c) => ({ controller: rssMiB(controllers[c.name] ?? 0), apiserver: rssMiB(apiservers[c.name] ?? 0) }));

    const rawCpu0 = cpuSnapshot(procs);
    const r0 = performance.now();
    await Promise.all([createMany(source!, names, data, RAW_NS, 32, SECRETS), ...peers.map((rest) => createMany(rest, names, data, RAW_NS, CONTROLLER_WORKERS, SECRETS))]);
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
      apiserverRssMiB: rss[i]?.apiserver ?? NaN,
      idleRequests: idleSent[i] ?? { own: 0, peers: 0 },
      syncRequests: syncSent[i] ?? { own: 0, peers: 0 },
      idleRequestsServed: idleServed[i] ?? 0,
      connectionsServed: servedConnections(i),
    }));
    return { clusters: n, convergeMs, rawMs, members };
  } finally {
    for (const s of streams) s.close();
    for (const c of clients) c.close();
    await sandbox.stop();
  }
}

export async function run(samples: Samples): Promise<BenchResult[]> {
  const scaling: ScalingSamples = { objects: OBJECTS, idleMs: IDLE_MS, points: [] };
  for (const n of SIZES) scaling.points.push(await measure(n));
  samples.scaling = scaling;
  const rows = scalingRows(scaling);
  const fmt = (v: number, d = 1) => v.toFixed(d).padStart(8);
  process.stderr.write('bench: scaling, per cluster unless said: N, convergence s (raw s), controller ms/copy (apiserver ms/create), idle controller millicores (apiserver), controller RSS MiB (apiserver), idle req/s served per apiserver, connections per apiserver\n');
  for (const r of rows) {
    process.stderr.write(`bench: scaling ${String(r.clusters).padStart(2)} ${fmt(r.convergeS)} (${fmt(r.rawS)}) ${fmt(r.controllerMsPerCopy, 2)} (${fmt(r.apiserverMsPerCreate, 2)}) ${fmt(r.idleControllerMillicores, 0)} (${fmt(r.idleApiserverMillicores, 0)}) ${fmt(r.controllerRssMiB, 0)} (${fmt(r.apiserverRssMiB, 0)}) ${fmt(r.idleRequestsServedPerSecond)} ${fmt(r.connectionsPerApiserver, 0)}\n`);
  }
  for (const line of [...growthLines(rows), ...estimateLines(rows, OBJECTS, ESTIMATE_FOR)]) process.stderr.write(`bench: scaling: ${line}\n`);
  const first = rows[0];
  const last = rows.at(-1);
  if (!first || !last) return [];
  const label = (r: typeof first) => `${r.clusters} clusters`;
  return [first, last].flatMap((r) => [
    { name: `scaling: convergence, ${OBJECTS} Secrets to ${r.clusters - 1} peer${r.clusters > 2 ? 's' : ''} (${label(r)})`, ours: r.convergeS, baseline: r.rawS, unit: 's', ratio: r.convergeS / r.rawS, note: 'baseline: the same writes by raw clients at once' },
    { name: `scaling: controller CPU per synced copy (${label(r)})`, ours: r.controllerMsPerCopy, baseline: r.apiserverMsPerCreate, unit: 'ms', ratio: r.controllerMsPerCopy / r.apiserverMsPerCreate, note: "baseline: a peer apiserver's CPU per create by raw clients" },
    { name: `scaling: controller CPU at idle, per cluster (${label(r)})`, ours: r.idleControllerMillicores, baseline: r.idleApiserverMillicores, unit: 'mcores', ratio: r.idleControllerMillicores / r.idleApiserverMillicores, note: 'baseline: its apiserver at idle, same window' },
    { name: `scaling: controller RSS, per cluster (${label(r)})`, ours: r.controllerRssMiB, baseline: r.apiserverRssMiB, unit: 'MiB', ratio: r.controllerRssMiB / r.apiserverRssMiB, note: 'baseline: its apiserver' },
  ]);
}

// Sync benchmark on three real clusters, each running our controller (from dist/), joined:
//  - propagation latency of single changes from cluster1 to cluster2 and cluster3 (p50/p99),
//    spread over a few objects so that none is changed faster than the per-object rate limit,
//    beside the raw watch delivery latency of the same apiservers (a write on a cluster seen by a
//    watch on that cluster), measured in the same run;
//  - convergence of 5,000 new objects from cluster1 to both peers (once the peers no longer relay
//    each other's copies, as in a group past its first 30 s), beside the raw create rate of
//    the same objects (the time to create them on cluster1), and beside raw clients making all the
//    writes the sync makes (the objects on cluster1 and a copy of each on both peers, at once);
//  - convergence of 5,000 new objects through raw relays instead (bench/relay.ts, one process per
//    peer, run as a controller is, with as many workers), plain, writing copies as ours, and with
//    our watches but only upstream's ownership marks on the copies, beside the raw create rate of
//    their sources: the best any sync that watches and writes can read on these cores; and the
//    relays' CPU per copy;
//  - the CPU a peer's controller spends per synced copy, beside the CPU its apiserver spends per
//    create by raw clients, and the CPU of every process during both (printed);
//  - the controller's RSS on a peer with 0, 5,000 and 10,000 synced objects;
//  - convergence of 500, 1,000, 2,500 and 5,000 more new objects (10,000 already synced), each
//    beside the raw create time of the same objects, for the chart of time versus object count;
//  - convergence of 5,000 new objects again with the clients (the controllers, and this process)
//    on one core and the API servers, etcd and controller managers on the other, beside raw
//    clients making the sources alone and making all the writes the sync makes, on the same cores.
//    In a real group a controller has CPU of its own, not turns with three API servers and etcd on
//    two cores: this is what the sync costs the API servers, and whether it keeps up with them.
// The propagation samples and the convergence times go to the report's charts.
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESOURCE_SYNC_RULES as RULES } from '../src/core/api/resources.ts';
import type { KubeObject, RestClient } from '../src/kube/index.ts';
import { ManagedProcess } from '../src/sandbox/process.ts';
import { RELAY_SETTLE_MS } from '../src/sync/engine.ts';
import { adminClient, CONTROLLER_NODE_FLAGS, controllerAllocatorEnv, controllerKubeconfigPath, startGroup } from '../src/testbed/group.ts';
import { controllerSeries } from '../test/support/registry.ts';
import type { BenchResult } from './informer.bench.ts';
import type { ConvergencePoint, Samples } from './report/report.ts';
import { allowedCpus, CM, type Closable, CONTROLLER_WORKERS, cpuSince, cpuSnapshot, createMany, percentile, pinTo, prepareMember, reportCpu, rssMiB, until, watchNamespace } from './support.ts';

const NS = 'bench';
/** Where raw clients write, and the raw latency object lives; no rule matches it. */
const RAW_NS = 'bench-raw';
/** Where the raw relays copy; no rule matches it either. */
const RELAY_NS = 'bench-relay';
const SINGLE_CHANGES = 200;
/**
 * The single changes go round this many objects: one object changed faster than the per-object
 * rate limit (5/s by default) is held back by design, which is not what latency measures.
 */
const LATENCY_OBJECTS = 20;
const BULK = 5_000;
/** What each bulk object holds. */
const PAYLOAD = 'y'.repeat(256);
/** Objects per second, for BULK objects in `ms`. */
const rate = (ms: number): number => (BULK / ms) * 1000;
const SWEEP = [500, 1_000, 2_500, 5_000];

export async function run(samples: Samples): Promise<BenchResult[]> {
  // 24,020 sources from cluster1 in all: past the 20,000 objects and 32 MiB that a peer's caches,
  // and the copies made from it, may hold by default.
  const sandbox = await startGroup({ clusters: 3, join: true, built: true, controllerArgs: () => ['--rule-status-interval=5s', '--peer-cache-max-objects=30000', '--peer-cache-max-bytes=64Mi'] });
  const clients: RestClient[] = [];
  const streams: Closable[] = [];
  try {
    const [c1, c2, c3] = await Promise.all(sandbox.clusters.map((c) => adminClient(c)));
    clients.push(c1!, c2!, c3!);
    for (const rest of clients) await prepareMember(rest, [NS, RAW_NS, RELAY_NS], 'configmaps');
    await c1!.create(RULES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'bench-sink' }, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { sync: 'bench' } }] }] }] } });

    /** Per cluster, where each marker value was seen first and which objects were added, in one namespace. */
    const watched = async (namespace: string) => {
      const seenAt = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
      const added = [new Set<string>(), new Set<string>(), new Set<string>()];
      for (const [i, rest] of clients.entries()) {
        streams.push(
          await watchNamespace(rest, namespace, (type, obj) => {
            const now = performance.now();
            const marker = (obj as KubeObject & { data?: Record<string, string> }).data?.['marker'];
            if (marker && !seenAt[i]!.has(marker)) seenAt[i]!.set(marker, now);
            if (type === 'ADDED') added[i]!.add(obj.metadata.name ?? '');
          }),
        );
      }
      return { seen: seenAt, counts: added };
    };
    const { seen, counts } = await watched(NS);
    // The raw writes are watched as the sync's copies are: the API servers serve the benchmark's watchers the same events either way.
    const { seen: rawSeen } = await watched(RAW_NS);
    const { counts: relayed } = await watched(RELAY_NS);
    const pid = sandbox.cluster('cluster2').extras[0]?.process.pid ?? 0;
    const rss0 = rssMiB(pid);

    // Single changes on cluster1, each made once both copies have the last one.
    const latencyNames = Array.from({ length: LATENCY_OBJECTS }, (_, i) => `latency-${i}`);
    await createMany(c1!, latencyNames, 'x', NS);
    await until('the first copies', () => latencyNames.every((n) => counts[1]!.has(n) && counts[2]!.has(n)), 120_000);
    /** Changes one object on cluster1 and returns how long until both peers' copies had it. */
    const propagate = async (name: string, marker: string): Promise<[number, number]> => {
      const t0 = performance.now();
      await c1!.patch(CM, NS, name, 'merge', { data: { marker } });
      await until(`marker ${marker} on both peers`, () => seen[1]!.has(marker) && seen[2]!.has(marker), 30_000);
      return [seen[1]!.get(marker)! - t0, seen[2]!.get(marker)! - t0];
    };
    // The first change after a copy's creation also moves its fields from the create's entry into
    // our apply entry (two more calls, once per copy): reported apart, not mixed into steady state.
    const firstChange: number[] = [];
    for (const name of latencyNames) firstChange.push(...(await propagate(name, `first-${name}`)));
    const propagation: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < SINGLE_CHANGES; i++) {
      propagation.push(...(await propagate(latencyNames[i % LATENCY_OBJECTS]!, `m${i}`)));
      // The raw baseline: the same kind of write on a peer's own apiserver, seen by its own watch.
      const rawMarker = `r${i}`;
      const r0 = performance.now();
      await c2!.patch(CM, RAW_NS, 'raw-latency', 'merge', { data: { marker: rawMarker } }).catch(async () => {
        await c2!.create(CM, RAW_NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'raw-latency', namespace: RAW_NS }, data: { marker: rawMarker } });
      });
      await until(`raw marker ${rawMarker}`, () => rawSeen[1]!.has(rawMarker), 30_000);
      raw.push(rawSeen[1]!.get(rawMarker)! - r0);
    }

    // Members relay each other's copies until each has reached their owner first-hand for a while
    // (RELAY_SETTLE_MS): the convergence below is measured in the steady state a group spends its
    // life in, once each peer's informer of the other's ConfigMaps has let our copies go. NS on a
    // peer holds nothing but cluster1's copies (the raw latency object lives in RAW_NS), so an
    // informer of it that holds nothing has let them go. It is asked again five seconds later: an
    // informer listing again with its new scope shows 0 a moment before it takes over.
    const relaysSettled = async (): Promise<boolean> => {
      for (const [here, peer] of [['cluster2', 'cluster3'], ['cluster3', 'cluster2']] as const) {
        const held = (await controllerSeries(sandbox, here, 'informer_objects')).filter((s) => s.labels['cluster'] === peer && s.labels['namespace'] === NS);
        if (held.length === 0 || held.some((s) => s.value > 0)) return false;
      }
      return true;
    };
    // Ample: the settle's clock starts only once the peers answer, and the group formed just now.
    const settleBound = 2 * RELAY_SETTLE_MS + 60_000;
    await until("the peers' relays of each other's copies to end", relaysSettled, settleBound);
    await new Promise((r) => setTimeout(r, 5000));
    await until("the peers' relays of each other's copies to end, still", relaysSettled, settleBound);

    // Convergence of many new objects.
    /** Creates new objects on cluster1: how long that took, and until both peers had every copy. */
    const converge = async (batch: string[], namespace = NS, copies = counts): Promise<{ createMs: number; convergeMs: number }> => {
      const t0 = performance.now();
      await createMany(c1!, batch, PAYLOAD, namespace);
      const createMs = performance.now() - t0;
      await until(`${batch.length} copies on both peers`, () => batch.every((n) => copies[1]!.has(n) && copies[2]!.has(n)), 900_000);
      return { createMs, convergeMs: performance.now() - t0 };
    };
    const names = Array.from({ length: BULK }, (_, i) => `bulk-${i}`);
    // Where the machine's CPU goes: the sync shares two cores with the apiservers and etcd.
    const procs: Record<string, number> = { etcd: sandbox.etcd.pid ?? 0, bench: process.pid };
    // The same processes as clients and as servers, for the cores-apart convergence.
    const controllers: number[] = [];
    const servers = [procs['etcd']!];
    for (const c of sandbox.clusters) {
      procs[`${c.name} apiserver`] = c.apiserver.pid ?? 0;
      procs[`${c.name} controller`] = c.extras[0]?.pid ?? 0;
      controllers.push(procs[`${c.name} controller`]!);
      servers.push(procs[`${c.name} apiserver`]!);
      if (c.controllerManager) servers.push((procs[`${c.name} controller manager`] = c.controllerManager.pid ?? 0));
    }
    /** Runs `work`: what it returns, how long it took, and every process's CPU meanwhile (printed as `phase`). */
    const withCpu = async <T>(phase: string, work: () => Promise<T>): Promise<{ result: T; ms: number; cpu: Record<string, number> }> => {
      const before = cpuSnapshot(procs);
      const t0 = performance.now();
      const result = await work();
      const ms = performance.now() - t0;
      const cpu = cpuSince(procs, before);
      reportCpu(phase, ms, cpu);
      return { result, ms, cpu };
    };
    /** Raw clients making what the sync makes, at once: the objects on cluster1 and a copy on each peer. */
    const rawWrites = (names: string[], phase: string) =>
      withCpu(phase, () => Promise.all([createMany(c1!, names, PAYLOAD, RAW_NS), createMany(c2!, names, PAYLOAD, RAW_NS, CONTROLLER_WORKERS), createMany(c3!, names, PAYLOAD, RAW_NS, CONTROLLER_WORKERS)]));
    const {
      result: { createMs: rawCreateMs, convergeMs },
      cpu: convergeCpu,
    } = await withCpu('convergence', () => converge(names));
    await new Promise((r) => setTimeout(r, 5000));
    const rss5k = rssMiB(pid);
    const { ms: rawAllMs, cpu: rawCpu } = await rawWrites(names, 'the same writes by raw clients');
    /**
     * Convergence of BULK new objects through a raw relay per peer, each in its own process run as
     * our controller's is (its Node flags and allocator), and what the relays spent per copy (CPU
     * printed as `phase`). A relay that fails ends the phase at once: it exits, and is waited for
     * beside the copies.
     */
    const throughRelays = async (variant: 'plain' | 'as-ours' | 'upstream-marks'): Promise<{ createRate: number; convergeRate: number; cpuPerCopyMs: number }> => {
      const relays: ManagedProcess[] = [];
      const peers = sandbox.clusters.slice(1);
      try {
        const exits: Promise<never>[] = [];
        for (const [i, peer] of peers.entries()) {
          const other = peers[1 - i]!;
          const args = [fileURLToPath(new URL('./relay.ts', import.meta.url)), sandbox.clusters[0]!.kubeconfigPath, controllerKubeconfigPath(sandbox, peer.name), RELAY_NS, String(CONTROLLER_WORKERS), ...(variant === 'plain' ? [] : [`--${variant}`, other.kubeconfigPath])];
          // Killed with this process, however it ends, as the sandbox's processes are.
          const logFile = joinPath(sandbox.dir, 'logs', `relay-${variant}-${peer.name}.log`);
          const relay = new ManagedProcess({ name: `relay to ${peer.name}`, binary: process.execPath, args: [...CONTROLLER_NODE_FLAGS, ...args], logFile, env: controllerAllocatorEnv(), detached: false });
          relay.start();
          relays.push(relay);
          const exited = relay.waitForExit().then((code): never => {
            throw new Error(`the relay to ${peer.name} exited (${code}):\n${relay.logTail()}`);
          });
          exited.catch(() => undefined);
          exits.push(exited);
          // Its log goes with the sandbox: a relay that never gets ready says why here.
          const ready = until(`the relay to ${peer.name} to be ready`, () => relay.logTail(50).split('\n').includes('ready'), 60_000).catch((err: unknown) => {
            throw new Error(`${err instanceof Error ? err.message : String(err)}; its log ends:\n${relay.logTail()}`);
          });
          await Promise.race([ready, exited]);
          procs[`${peer.name} relay`] = relay.pid ?? 0;
        }
        const { result, cpu } = await withCpu(`convergence through raw relays, ${variant}`, () => Promise.race([converge(Array.from({ length: BULK }, (_, i) => `${variant}-${i}`), RELAY_NS, relayed), ...exits]));
        const relayCpu = peers.reduce((sum, peer) => sum + (cpu[`${peer.name} relay`] ?? 0), 0);
        return { createRate: rate(result.createMs), convergeRate: rate(result.convergeMs), cpuPerCopyMs: (relayCpu / peers.length / BULK) * 1000 };
      } finally {
        for (const peer of peers) delete procs[`${peer.name} relay`];
        await Promise.all(relays.map((r) => r.stop()));
      }
    };
    const plainRelay = await throughRelays('plain');
    const relayAsOurs = await throughRelays('as-ours');
    const relayUpstreamMarks = await throughRelays('upstream-marks');
    await converge(Array.from({ length: BULK }, (_, i) => `more-${i}`));
    await new Promise((r) => setTimeout(r, 5000));
    const rss10k = rssMiB(pid);
    const convergence: ConvergencePoint[] = [];
    for (const [k, count] of SWEEP.entries()) {
      const { createMs, convergeMs: ms } = await converge(Array.from({ length: count }, (_, i) => `sweep-${k}-${i}`));
      convergence.push({ objects: count, oursMs: ms, rawMs: createMs });
    }
    // The clients on one core (the controllers, and this process making the sources and the raw
    // writes), the API servers, etcd and the controller managers on another.
    const cpus = allowedCpus();
    let own: { convergeRate: number; createRate: number; rawAllRate: number } | undefined;
    const leftOut = (why: string) => process.stderr.write(`bench: sync: the cores-apart convergence is left out: ${why}\n`);
    if (cpus.length < 2) leftOut('this process may run on one CPU only');
    else if (![...controllers, ...servers].every((pid) => pid > 0)) leftOut("a process of the group is not running");
    else {
      try {
        if (!pinTo([process.pid, ...controllers], cpus.slice(1, 2)) || !pinTo(servers, cpus.slice(0, 1))) leftOut("taskset could not pin the group's processes");
        else {
          const ownNames = Array.from({ length: BULK }, (_, i) => `own-core-${i}`);
          const {
            result: { convergeMs: ms },
          } = await withCpu('convergence, the clients on one core and the API servers on the other', () => converge(ownNames));
          await new Promise((r) => setTimeout(r, 5000));
          const { ms: ownRawMs } = await rawWrites(ownNames, 'the same writes by raw clients, the clients on one core and the API servers on the other');
          const s1 = performance.now();
          await createMany(c1!, ownNames.map((n) => `${n}-source`), PAYLOAD, RAW_NS);
          own = { convergeRate: rate(ms), createRate: rate(performance.now() - s1), rawAllRate: rate(ownRawMs) };
        }
      } finally {
        // Back on every CPU, as far as each process still runs.
        pinTo([process.pid, ...controllers, ...servers], cpus);
      }
    }
    samples.propagation = { clusters: 3, ours: propagation, raw };
    samples.convergence = convergence;

    const p50 = percentile(propagation, 50);
    const p99 = percentile(propagation, 99);
    const raw50 = percentile(raw, 50);
    const raw99 = percentile(raw, 99);
    const createRate = rate(rawCreateMs);
    const convergeRate = rate(convergeMs);
    const rawAllRate = rate(rawAllMs);
    const peers = ['cluster2', 'cluster3'];
    const peerControllerMs = (peers.reduce((sum, c) => sum + (convergeCpu[`${c} controller`] ?? 0), 0) / peers.length / BULK) * 1000;
    const peerApiserverMs = (peers.reduce((sum, c) => sum + (rawCpu[`${c} apiserver`] ?? 0), 0) / peers.length / BULK) * 1000;
    return [
      { name: 'sync propagation p50 (3 clusters)', ours: p50, baseline: raw50, unit: 'ms', ratio: p50 / raw50, note: 'baseline: raw watch delivery on one apiserver' },
      { name: 'sync propagation p99 (3 clusters)', ours: p99, baseline: raw99, unit: 'ms', ratio: p99 / raw99, note: 'target p99 < 50 ms' },
      { name: "sync propagation p50, a copy's first change", ours: percentile(firstChange, 50), baseline: raw50, unit: 'ms', ratio: percentile(firstChange, 50) / raw50, note: 'one-time move of the fields the create wrote into our apply entry' },
      { name: 'sync convergence, 5,000 objects to 2 peers', ours: convergeRate, baseline: createRate, unit: 'obj/s', ratio: convergeRate / createRate, note: 'baseline: raw create rate of the sources (created while the sync runs); every process shares both cores' },
      { name: 'sync convergence vs the same writes by raw clients', ours: convergeRate, baseline: rawAllRate, unit: 'obj/s', ratio: convergeRate / rawAllRate, note: 'baseline: sources and both copies created by raw clients at once' },
      { name: 'sync convergence vs raw relays writing copies as ours', ours: convergeRate, baseline: relayAsOurs.convergeRate, unit: 'obj/s', ratio: convergeRate / relayAsOurs.convergeRate, note: "baseline: a relay per peer, with our copies' metadata and the watches ours cost the API servers, no controller" },
      { name: 'sync convergence ceiling: raw relays, against the raw create rate', ours: plainRelay.convergeRate, baseline: plainRelay.createRate, unit: 'obj/s', ratio: plainRelay.convergeRate / plainRelay.createRate, note: 'a watch and a plain create per copy: the best the first convergence row can read on these cores' },
      { name: 'sync convergence ceiling: raw relays writing copies as ours, against the raw create rate', ours: relayAsOurs.convergeRate, baseline: relayAsOurs.createRate, unit: 'obj/s', ratio: relayAsOurs.convergeRate / relayAsOurs.createRate, note: "the same with our copies' metadata and watches: the best a controller writing today's copies can read" },
      { name: "sync convergence ceiling: raw relays writing only upstream's ownership marks, against the raw create rate", ours: relayUpstreamMarks.convergeRate, baseline: relayUpstreamMarks.createRate, unit: 'obj/s', ratio: relayUpstreamMarks.convergeRate / relayUpstreamMarks.createRate, note: "the same watches, without our source and sync-record annotations: what any copy's metadata could gain at most" },
      ...(own
        ? [
            { name: 'sync convergence, clients and API servers on cores apart', ours: own.convergeRate, baseline: own.createRate, unit: 'obj/s', ratio: own.convergeRate / own.createRate, note: 'baseline: raw create rate of the sources alone, same cores (the ceiling below bounds this ratio)' },
            { name: 'sync convergence, cores apart, vs the same writes by raw clients', ours: own.convergeRate, baseline: own.rawAllRate, unit: 'obj/s', ratio: own.convergeRate / own.rawAllRate, note: 'baseline: sources and both copies created by raw clients at once, same cores; target ratio >= 0.8, as read here' },
            { name: 'sync convergence ceiling, cores apart: raw clients making all the writes', ours: own.rawAllRate, baseline: own.createRate, unit: 'obj/s', ratio: own.rawAllRate / own.createRate, note: "the best ratio to the create rate that any controller's writes can reach on the API servers' core" },
          ]
        : []),
      { name: 'peer controller CPU per synced copy', ours: peerControllerMs, baseline: peerApiserverMs, unit: 'ms', ratio: peerControllerMs / peerApiserverMs, note: "baseline: a peer apiserver's CPU per create by raw clients" },
      { name: 'peer controller CPU per synced copy vs a raw relay writing copies as ours', ours: peerControllerMs, baseline: relayAsOurs.cpuPerCopyMs, unit: 'ms', ratio: peerControllerMs / relayAsOurs.cpuPerCopyMs, note: "baseline: the relay's CPU per copy, run as the controller is" },
      { name: 'controller RSS, 5,000 synced objects', ours: rss5k, baseline: rss0, unit: 'MiB', ratio: rss5k / rss0, note: 'baseline: same controller with 0 synced objects' },
      { name: 'controller RSS, 10,000 synced objects', ours: rss10k, baseline: rss0, unit: 'MiB', ratio: rss10k / rss0, note: 'baseline: same controller with 0 synced objects' },
    ];
  } finally {
    for (const s of streams) s.close();
    for (const c of clients) c.close();
    await sandbox.stop();
  }
}


// The seeded chaos run: a group of real clusters syncing the harness's Secrets through two rules
// (one gated on a ClusterFeature some members advertise), hit by rounds of faults while users
// keep changing things. Each round runs one lane per member (its faults and its users' writes,
// one after another, starting at a random moment) and etcd compactions beside them, so faults on
// different members overlap; once every fault has healed, the invariants (invariants.ts) are
// checked. The first round with a violation ends the run.
import { CLUSTERS } from '../../src/core/api/resources.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import { sleep } from '../../src/kube/index.ts';
import { eventually } from '../support/eventually.ts';
import { controllerMetric } from '../support/registry.ts';
import { FEATURES, RULES, SANDBOX_NAMESPACE, rule, startSyncGroup, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';
import { FAULT_KINDS, FAULT_WEIGHTS, apiserverKill, apiserverPause, controllerKill, etcdCompaction, rbacRevoke, tokenRotation, type FaultKind, type FaultTarget } from './faults.ts';
import { Ledger, awaitConvergence, writtenSince, type CheckContext, type Violation } from './invariants.ts';
import { FEATURE, GATED_LABEL, Model, PLAIN_LABEL, RUN_LABEL } from './model.ts';
import { Observer } from './observer.ts';
import { Random } from './random.ts';
import { Workload } from './workload.ts';

const NS = SANDBOX_NAMESPACE;

export interface ChaosOptions {
  readonly seed: number;
  /** Stop once this many faults have been injected. */
  readonly faults: number;
  /** Members of the group (default 4). */
  readonly members?: number;
  /** Names the log directory (.cache/test-logs/<name>). */
  readonly name: string;
  /** The controllers' orphan grace period (default 5 s). */
  readonly graceSeconds?: number;
  /** How long the group may take to converge after a round's faults healed (default 90 s). */
  readonly convergeTimeoutMs?: number;
  /** Faults per round, at least and at most (default 10 to 14). */
  readonly faultsPerRound?: readonly [number, number];
  readonly log?: (line: string) => void;
}

export interface ChaosReport {
  readonly seed: number;
  readonly members: number;
  readonly rounds: number;
  readonly faults: number;
  readonly faultsByKind: Record<FaultKind, number>;
  readonly workloadOps: number;
  readonly sourcesCreated: number;
  /** (source, member) pairs and strays looked at by the converged checks, summed over rounds. */
  readonly objectsChecked: number;
  readonly violations: number;
  readonly violationDetails: readonly Violation[];
  readonly lostObjects: number;
  readonly wrongfulDeletions: number;
  /** The most writes one copy took in one round, and the changes the harness made to it that round. */
  readonly maxCopyWrites: { readonly writes: number; readonly changes: number };
  readonly convergenceMs: { readonly p50: number; readonly p95: number; readonly max: number };
  /** Copies whose bookkeeping alone (fields moved, source handed over) was written after convergence. */
  readonly lateBookkeepingWrites: number;
  readonly durationMs: number;
}

/**
 * Writes one copy may take per change the harness made to its source or to it (the copy's write,
 * and the first time it changes after its creation the move of its fields into our apply entry),
 * plus a constant for its creation, plus per fault on its source's member a hand-over to another
 * member that still reaches it and back. Ping-pong between writers blows past it.
 */
const WRITES_PER_CHANGE = 2;
const WRITES_BASE = 2;
const WRITES_PER_OWNER_FAULT = 2;
/** Collector sweeps every controller must complete, with nothing written, for the group to count as settled. */
const SETTLE_SWEEPS = 2;

type Step = { readonly fault: FaultKind } | { readonly op: true };

/** Draws a round: which faults hit which member, and how many user actions each lane does. */
function planRound(rng: Random, members: readonly string[], count: number, uncovered: Set<FaultKind>): { lanes: Map<string, Step[]>; compactions: number } {
  const lanes = new Map<string, Step[]>(members.map((m) => [m, Array.from({ length: rng.int(1, 2) }, () => ({ op: true }) as const)]));
  let compactions = 0;
  for (let i = 0; i < count; i++) {
    // Kinds not yet injected go first, so a short run still sees every kind.
    const kind = uncovered.size > 0 ? rng.pick([...uncovered].sort()) : rng.weighted(FAULT_WEIGHTS);
    uncovered.delete(kind);
    if (kind === 'etcd-compaction') compactions++;
    else lanes.get(rng.pick(members))!.push({ fault: kind });
  }
  for (const [m, steps] of lanes) lanes.set(m, rng.shuffle(steps));
  return { lanes, compactions };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** The group with the run's rules and features, every member's cluster ID, and an observer per member. */
async function setUp(o: ChaosOptions, model: Model, ledger: Ledger, run: string): Promise<{ g: SyncGroup; ids: Map<string, string>; observers: Observer[] }> {
  const g = await startSyncGroup(o.members ?? 4, { name: o.name, graceSeconds: o.graceSeconds ?? 5 });
  const observers: Observer[] = [];
  try {
    await waitGroupFormed(g);
    for (const m of model.featured) {
      await g.client(m).create(FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: FEATURE }, spec: { featureName: FEATURE } });
    }
    const first = g.client(model.members[0]!);
    const gvk = { version: 'v1', kind: 'Secret' };
    await first.create(RULES, undefined, rule('chaos-plain', { groupVersionKind: gvk, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { [PLAIN_LABEL]: 'yes' } }] }] }] }));
    await first.create(RULES, undefined, rule('chaos-gated', { clusterFeatureMatch: [{ featureName: FEATURE }], groupVersionKind: gvk, rules: [{ match: [{ namespaces: [NS], labels: [{ matchLabels: { [GATED_LABEL]: 'yes' } }] }] }] }));
    const ids = new Map<string, string>();
    for (const m of model.members) ids.set(m, (await g.client(m).get<Cluster>(CLUSTERS, undefined, m)).spec.clusterID);
    for (const m of model.members) observers.push(await Observer.start(m, g.client(m), NS, `${RUN_LABEL}=${run}`, ledger.onDelete));
    return { g, ids, observers };
  } catch (err) {
    await Promise.all(observers.map((x) => x.stop()));
    await g.stop().catch(() => undefined);
    throw err;
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const started = performance.now();
  const log = o.log ?? (() => undefined);
  const rng = new Random(o.seed);
  const size = o.members ?? 4;
  const members = Array.from({ length: size }, (_, i) => `cluster${i + 1}`);
  // At least one member advertises the feature and at least one does not.
  const featured = new Set(rng.shuffle(members).slice(0, rng.int(1, size - 1)));
  const model = new Model(members, featured);
  const ledger = new Ledger(model);
  const run = `r${o.seed.toString(36)}`;
  // Many faults to a round: the round's convergence, the slowest part, is then paid for once for all of them.
  const [minFaults, maxFaults] = o.faultsPerRound ?? [10, 14];
  const convergeTimeoutMs = o.convergeTimeoutMs ?? 90_000;
  log(`chaos seed ${o.seed}: ${size} members, ${[...featured].sort().join(', ')} advertising ${FEATURE}, ${o.faults} faults`);

  const { g, ids, observers } = await setUp(o, model, ledger, run);
  const clients = new Map(members.map((m) => [m, g.client(m)]));
  // Members whose API server a fault has down or paused: nobody meddles with their copies then, since
  // a write that timed out against a paused server may still land after it resumes.
  const unreachable = new Set<string>();
  const workload = new Workload({ model, ledger, clients, namespace: NS, run, reachable: (m) => !unreachable.has(m) });
  const ctx: CheckContext = { model, clients, clusterIDs: ids, namespace: NS, labelSelector: `${RUN_LABEL}=${run}` };
  const faultsByKind = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const uncovered = new Set<FaultKind>(FAULT_KINDS);
  const convergence: number[] = [];
  let faults = 0;
  let rounds = 0;
  let ops = 0;
  let objectsChecked = 0;
  let maxCopyWrites = { writes: 0, changes: 0 };
  let lateBookkeeping = 0;

  const inject = async (kind: FaultKind, member: string, laneRng: Random): Promise<string> => {
    const t: FaultTarget = { sandbox: g.sandbox, member, rest: g.client(member), rng: laneRng };
    switch (kind) {
      case 'apiserver-kill':
      case 'apiserver-pause':
        unreachable.add(member);
        try {
          return await (kind === 'apiserver-kill' ? apiserverKill(t) : apiserverPause(t));
        } finally {
          unreachable.delete(member);
        }
      case 'controller-kill':
        return controllerKill(t);
      case 'etcd-compaction':
        return etcdCompaction(t);
      case 'rbac-revoke':
        return rbacRevoke(t);
      case 'token-rotation':
        return tokenRotation(t);
      case 'concurrent-edits': {
        // The source changes on its member while others change its copies, several times over.
        const s = await workload.selectedSource(member, laneRng);
        const others = laneRng.shuffle(members.filter((m) => m !== member)).slice(0, laneRng.int(2, size - 1));
        const times = laneRng.int(1, 3);
        for (let i = 0; i < times; i++) await Promise.all([workload.update(s), ...others.map((x) => workload.editCopy(s, x))]);
        return `edited ${s.name} on ${member} and its copies on ${others.join(', ')} at once, ${times} times`;
      }
    }
  };

  const sweeps = (): Promise<number[]> => Promise.all(members.map((m) => controllerMetric(g.sandbox, m, 'cluster_registry_orphan_sweeps_total')));

  try {
    // Warm-up: the rules reach every member and each member's first source is copied everywhere.
    for (const m of members) await workload.create(m, rng, true);
    const warm = await awaitConvergence(ctx, 180_000);
    if (!warm.converged) throw new Error(`the group never synced its first sources: ${warm.problems.slice(0, 10).join('; ')}`);
    ledger.protectVerified();
    for (const x of observers) x.takeWrites();
    log(`warmed up in ${(warm.ms / 1000).toFixed(1)} s`);

    while (faults < o.faults && ledger.violations.length === 0) {
      rounds++;
      ledger.round = rounds;
      workload.newRound();
      const count = Math.min(o.faults - faults, rng.int(minFaults, maxFaults));
      const plan = planRound(rng, members, count, uncovered);
      const roundStart = performance.now();
      const faultsOn = new Map<string, number>();
      const lane = async (member: string, steps: readonly Step[], laneRng: Random): Promise<void> => {
        await sleep(laneRng.int(0, 1500));
        for (const step of steps) {
          if ('op' in step) {
            const what = await workload.step(member, laneRng);
            ops++;
            log(`  ${what}`);
            continue;
          }
          log(`  fault ${step.fault} on ${member} starts`);
          faultsOn.set(member, (faultsOn.get(member) ?? 0) + 1);
          const what = await inject(step.fault, member, laneRng);
          faults++;
          faultsByKind[step.fault]++;
          log(`  fault ${step.fault}: ${what}`);
        }
      };
      const lanes = [...plan.lanes].map(([m, steps]) => lane(m, steps, new Random(rng.int(0, 0xfffffffe))));
      for (let i = 0; i < plan.compactions; i++) lanes.push(lane(members[0]!, [{ fault: 'etcd-compaction' }], new Random(rng.int(0, 0xfffffffe))));
      // Every lane heals its faults even when another fails; a failed lane fails the run (the harness broke, not the product).
      const outcomes = await Promise.allSettled(lanes);
      const failed = outcomes.find((x): x is PromiseRejectedResult => x.status === 'rejected');
      if (failed) throw failed.reason;

      const conv = await awaitConvergence(ctx, convergeTimeoutMs);
      if (!conv.converged) {
        ledger.violations.push({ kind: 'not-converged', round: rounds, detail: `not converged ${convergeTimeoutMs / 1000} s after the faults healed: ${conv.problems.slice(0, 20).join('; ')}` });
        break;
      }
      convergence.push(conv.ms);
      if (conv.slow.length > 0) log(`  still converging after 5 s: ${conv.slow.slice(0, 8).join('; ')}`);
      objectsChecked += conv.checked;
      ledger.protectVerified();

      // Settled: every collector sweeps again, and nothing of the run is written meanwhile.
      const before = await sweeps();
      await eventually(`every collector to sweep ${SETTLE_SWEEPS} more times`, async () => (await sweeps()).every((n, i) => n - before[i]! >= SETTLE_SWEEPS) || undefined, 60_000);
      const settling = await writtenSince(ctx, conv.held);
      lateBookkeeping += settling.bookkeeping;
      if (settling.violations.length > 0) ledger.violations.push({ kind: 'written-after-settling', round: rounds, detail: settling.violations.slice(0, 20).join('; ') });

      for (const x of observers) {
        for (const [name, seen] of x.takeWrites()) {
          const writes = seen.length;
          const s = model.sources.get(name);
          const sourceChanges = workload.sourceWrites.get(name) ?? 0;
          if (s?.origin === x.cluster) {
            if (writes > sourceChanges) ledger.violations.push({ kind: 'writes-unbounded', round: rounds, detail: `source ${name} on ${x.cluster} written ${writes} times, ${sourceChanges} by the harness` });
            continue;
          }
          const changes = sourceChanges + (workload.copyWrites.get(`${x.cluster}/${name}`) ?? 0);
          if (writes > maxCopyWrites.writes) maxCopyWrites = { writes, changes };
          const bound = WRITES_PER_CHANGE * changes + WRITES_BASE + WRITES_PER_OWNER_FAULT * (faultsOn.get(s?.origin ?? '') ?? 0);
          if (writes > bound) ledger.violations.push({ kind: 'writes-unbounded', round: rounds, detail: `${x.cluster}'s copy of ${name} written ${writes} times for ${changes} changes (at most ${bound}): ${seen.join(' | ')}` });
        }
      }
      const secs = ((performance.now() - roundStart) / 1000).toFixed(1);
      log(`round ${rounds}: ${faults}/${o.faults} faults, converged in ${(conv.ms / 1000).toFixed(1)} s, ${conv.checked} objects checked, round took ${secs} s`);
    }
  } finally {
    await Promise.all(observers.map((x) => x.stop()));
    await g.stop();
  }
  const sorted = [...convergence].sort((a, b) => a - b);
  return {
    seed: o.seed,
    members: size,
    rounds,
    faults,
    faultsByKind,
    workloadOps: ops,
    sourcesCreated: model.sources.size,
    objectsChecked,
    violations: ledger.violations.length,
    violationDetails: ledger.violations,
    lostObjects: ledger.lostObjects,
    wrongfulDeletions: ledger.wrongfulDeletions,
    maxCopyWrites,
    lateBookkeepingWrites: lateBookkeeping,
    convergenceMs: { p50: Math.round(percentile(sorted, 0.5)), p95: Math.round(percentile(sorted, 0.95)), max: Math.round(sorted[sorted.length - 1] ?? 0) },
    durationMs: Math.round(performance.now() - started),
  };
}

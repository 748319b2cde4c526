// The bad-input fuzz run on a real group of two joined clusters: cluster1 is the victim, cluster2
// a member whose admin is hostile. Cases from generators.ts are applied in batches; every object
// the API server accepts must get a verdict from the controller within a deadline (rules: their
// Valid, Permitted and Synced conditions; Clusters: their state and Ready condition), and every
// bad one a Warning Event naming its problem. After each batch both controllers must be alive and
// healthy, a canary must still sync both ways, the victim's own objects must be untouched, no
// exec plugin may have run, the attacker's plain server may not have seen a connection nor its TLS
// server a credential of ours, and the controllers' logs must hold no crash, nothing uncaught and no
// fuzz token (error-level lines, faults the controllers retry, are counted and shown).
// Every few batches the attacker also rewrites its own registry entry (the kubeconfig or the
// endpoints the victim reads it through) and the victim must refuse it; the entry is then put back.
// The trust boundary's attacks and invariants (trust.ts) run beside: squats, rules aimed at the
// controller namespace, nameless copies, costly templates, our kinds and Events served for copying
// and floods among the cases; between batches, the attacker's copies of others' entries rewritten
// and more served than the victim's cache of it may hold; during some batches, slow requests held
// against the victim's webhook. After each batch the victim's registry, copies, controller
// namespace, memory and responsiveness are checked.
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { CLUSTERS, CLUSTER_FEATURES, RESOURCE_SYNC_RULES, SECRETS, type Secret } from '../../src/core/api/resources.ts';
import { ownerOf } from '../../src/core/api/source-identity.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import { ApiError, COMBINED_EVENT_PREFIX, EVENT_BURST, EVENT_REFILL_MS, EVENTS, isAlreadyExists, isConflict, isNotFound, type CoreEvent, type ResourceRef, type RestClient } from '../../src/kube/index.ts';
import { kubeSystemUID } from '../../src/peers/identity.ts';
import { secretNameFor } from '../../src/registry/webhook/index.ts';
import { SANDBOX_NAMESPACE, WEBHOOK_CONFIGURATION } from '../../src/testbed/group.ts';
import { alive } from '../support/process.ts';
import { RecordingServer } from '../support/recording-server.ts';
import { controllerKubeconfigPath } from '../support/registry.ts';
import { ensureNamespace, getOrUndefined, grantKinds, installWidgets, rule, startSyncGroup, waitGroupFormed, WIDGETS, type SyncGroup } from '../support/sync-helpers.ts';
import { FLOOD, fuzzCase, hostileEntry, NS, readyStatus, VICTIM_NAMES, type FuzzCase, type FuzzContext, type Squatted } from './generators.ts';
import { CHART_MEMORY, entryRewrite, PEER, TRUST_CONTROLLER_ARGS, TrustAttacks, until, VICTIM, type TrustFigures } from './trust.ts';

const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const REFS: Record<string, ResourceRef> = { ResourceSyncRule: RESOURCE_SYNC_RULES, ClusterFeature: CLUSTER_FEATURES, Cluster: CLUSTERS, Secret: SECRETS, ConfigMap: CONFIGMAPS, Widget: WIDGETS };
/** How long an accepted object may go without a verdict before it counts as a stall. */
const VERDICT_MS = 90_000;
/** Rules the run keeps for itself (their names never clash with a case's `fz…`). */
const STANDING = { canary: 'fuzz-canary', victim: 'fuzz-victim-sync', status: 'fuzz-status-sync' } as const;

export interface FuzzOptions {
  readonly seed: number;
  /** Cases to try (rounded up to whole batches). */
  readonly cases: number;
  readonly batchSize: number;
  /** Log directory name under .cache/test-logs. */
  readonly name: string;
  /** A hostile registry-entry round after every this many batches (0: never). */
  readonly entryEvery: number;
  /** The attacker rewrites its copy of another's registry entry after every this many batches (0: never). */
  readonly rewriteEvery: number;
  /** The attacker serves more than the victim's cache of it may hold after every this many batches (0: never). */
  readonly oversizeEvery: number;
  /** Slow requests are held against the victim's webhook during every this many batches (0: never). */
  readonly listenerEvery: number;
  /** The weight of rules with costly templates among the trust-boundary cases (0: none). */
  readonly costly: number;
  readonly log: (line: string) => void;
  /** Where each case's outcome goes, one line each (what was rejected and why, each verdict). */
  readonly detail?: (line: string) => void;
  /** More controller flags (e.g. `--log-verbosity=1` to see the Events the recorder rate-limits). */
  readonly controllerArgs?: readonly string[];
}

export interface Tally {
  tried: number;
  accepted: number;
  rejected: number;
  /** Accepted, and the controller said something is wrong with it. */
  bad: number;
  /** Bad, with a Warning Event naming the problem. */
  reported: number;
  /**
   * Bad, with no Event naming the problem but with as many Warnings on the object as the
   * recorder's spam filter lets through (client-go's: a burst of 25, then one per 5 minutes):
   * the status still says it, and the figure is kept apart.
   */
  rateLimited: number;
  /** Accepted, and the controller says (in status only) some object it takes waits on something outside its control. */
  waiting: number;
}

export interface Violation {
  readonly batch: number;
  readonly kind: string;
  readonly detail: string;
}

export interface FuzzReport {
  seed: number;
  batches: number;
  cases: number;
  accepted: number;
  rejected: number;
  byKind: Record<string, Tally>;
  byLabel: Record<string, Tally>;
  /** Rejections by what refused them (schema, webhook, size, conflict). */
  rejectedBy: Record<string, number>;
  hostileEntryRounds: number;
  /** Rounds refused in status only, the Cluster's Warnings spent by earlier rounds (see Tally.rateLimited). */
  hostileEntryRateLimited: number;
  /** Lines our controllers logged at error level (faults they retry), and the first few of them. */
  errorLogs: number;
  errorLogSamples: string[];
  /** Hostile entry rounds the attacker's own controller undid before the victim had to (it restores its reader Secret). */
  hostileEntryHealedByOwner: number;
  /** Requests the attacker's TLS server got (each checked to carry nothing but the kubeconfig's inline token). */
  attackerTlsRequests: number;
  /** The trust boundary's rounds and what the victim did (trust.ts). */
  trust: TrustFigures;
  crashes: number;
  stalls: number;
  violations: number;
  violationDetails: Violation[];
  durationMs: number;
  casesPerSecond: number;
}

type Condition = { type: string; status: string; message: string };

/** One applied case: where it went, and what the run learned of it. */
interface Applied {
  readonly c: FuzzCase;
  readonly name: string;
  readonly cluster: string;
  /** Where a verdict is due: the cluster it was written on, and for a peer's rule the victim too (its copy runs there). */
  readonly verdictOn: string[];
  readonly made: { ref: ResourceRef; namespace: string | undefined; name: string; cluster: string }[];
  accepted: boolean;
  verdicts: Map<string, Verdict>;
}

/** A message without its timestamps (a status and its Event may be written at different moments). */
const timeless = (s: string): string => s.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T');
/**
 * What of a status message an Event must repeat: its start (Events are clipped shorter than
 * status), the object it names whole (a name may take 253 characters) and then its problem's start.
 */
function gist(s: string): string {
  const t = timeless(s);
  const object = /^[^:\s]+: /.exec(t)?.[0] ?? '';
  return t.slice(0, object.length + 100);
}

/**
 * What the controller said of an object: the problems its status names, and the objects its
 * status says are waiting for something outside the rule's control (an owner to join the group or
 * to be reached, the source's cluster to answer), which the controller reports in status only.
 */
interface Verdict {
  readonly uid: string;
  readonly problems: string[];
  readonly waits: string[];
  /** A rule reported not Valid. */
  readonly invalid: boolean;
}

/** How a waiting object's outcome reads in a rule's status (the decision reasons that wait on another cluster, and the trust boundary's waits on the registry). */
const WAITING = /: (SourceUnreachable|OwnerNotInGroup|OwnerNotReachedByPeer|OwnerWouldChange)$|\(waiting for that Cluster\)$/;

function ruleVerdict(r: ResourceSyncRule | undefined): Verdict | undefined {
  const conditions = (r?.status?.conditions ?? []) as Condition[];
  if (!r || r.status?.observedGeneration !== r.metadata.generation) return undefined;
  if (!['Valid', 'Permitted', 'Synced'].every((t) => conditions.some((c) => c.type === t))) return undefined;
  const problems: string[] = [];
  const valid = conditions.find((c) => c.type === 'Valid');
  if (valid?.status === 'False') problems.push(valid.message);
  else {
    // Each failing peer's own words: the status lists them one by one, Events come one by one.
    for (const c of r.status?.clusters ?? []) {
      if (c.state === 'Failed') problems.push(c.message ?? '');
      else if ((c.failed ?? 0) > 0) problems.push(c.lastError ?? '');
    }
  }
  return { uid: r.metadata.uid ?? '', problems: problems.filter((p) => !WAITING.test(p)).map(gist), waits: problems.filter((p) => WAITING.test(p)).map(gist), invalid: valid?.status === 'False' };
}

function clusterVerdict(c: Cluster | undefined): Verdict | undefined {
  if (!c?.status?.state || !c.status.conditions?.some((x) => x.type === 'Ready')) return undefined;
  return { uid: c.metadata.uid ?? '', problems: c.status.state === 'Ready' ? [] : [gist(c.status.message ?? c.status.state)], waits: [], invalid: false };
}

/** What an error-level log line is about: its error's message, else its own. */
function errorGist(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
    return `${entry.msg ?? ''}: ${entry.err?.message ?? ''}`.slice(0, 200);
  } catch {
    return line.slice(0, 200);
  }
}

/**
 * Whether some Warning Event on the object names the problem (or, for one object's failure, that
 * object). When none does, 'rate-limited' if the recorder may rightly have left it out:
 * - a Warning reason on the object has no budget left (its Events, repeats counted, spent the
 *   burst faster than it refills). The recorder's budget is per object and reason, and the status
 *   does not say which reason a problem's Event has, so any Warning reason counts;
 * - or Warnings of one reason were folded into a combined Event, which names only the latest.
 */
function reported(events: readonly CoreEvent[], uid: string, problem: string, now = Date.now()): boolean | 'rate-limited' {
  const object = /^([^:\s]+): /.exec(problem)?.[1];
  // A problem of the rule's own (its copy budget spent from a peer) is said once for all its objects.
  const ruleWide = object === undefined ? undefined : problem.slice(object.length + 2);
  const names = (message: string): boolean => message.includes(problem) || (object !== undefined && message.includes(object)) || (ruleWide !== undefined && ruleWide.length >= 40 && message.includes(ruleWide));
  const warnings = events.filter((e) => e.involvedObject.uid === uid && e.type === 'Warning');
  if (warnings.some((e) => names(timeless(e.message)))) return true;
  if (warnings.some((e) => e.message.startsWith(COMBINED_EVENT_PREFIX))) return 'rate-limited';
  const byReason = new Map<string, { count: number; since: number }>();
  for (const e of warnings) {
    const r = byReason.get(e.reason) ?? { count: 0, since: Infinity };
    byReason.set(e.reason, { count: r.count + (e.count ?? 1), since: Math.min(r.since, Date.parse(e.firstTimestamp)) });
  }
  const spent = [...byReason.values()].some((r) => EVENT_BURST - r.count + Math.max(0, now - r.since) / EVENT_REFILL_MS < 1);
  return spent ? 'rate-limited' : false;
}

/** The Events on an object by reason, repeats counted: what spent its budget. */
function eventReasons(events: readonly CoreEvent[], uid: string): string {
  const by = new Map<string, number>();
  for (const e of events) if (e.involvedObject?.uid === uid) by.set(e.reason, (by.get(e.reason) ?? 0) + (e.count ?? 1));
  return [...by].map(([r, n]) => `${r} x${n}`).join(', ') || 'none';
}

function rejection(err: unknown): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  if (isAlreadyExists(err) || isConflict(err)) return 'conflict';
  if (/denied the request/.test(err.message)) return 'webhook';
  if (err.code === 413 || /too large|exceeds|limit/i.test(err.message)) return 'size';
  if (err.code === 422 || err.code === 400) return 'schema';
  return undefined;
}

async function tryDelete(rest: RestClient, ref: ResourceRef, namespace: string | undefined, name: string): Promise<void> {
  await rest.delete(ref, namespace, name).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
}


/** Runs `f` with `flags` added to NODE_OPTIONS, which the processes it starts inherit. */
async function withNodeOptions<T>(flags: string, f: () => Promise<T>): Promise<T> {
  const before = process.env['NODE_OPTIONS'];
  process.env['NODE_OPTIONS'] = [before, flags].filter(Boolean).join(' ');
  try {
    return await f();
  } finally {
    if (before === undefined) delete process.env['NODE_OPTIONS'];
    else process.env['NODE_OPTIONS'] = before;
  }
}

/** Every member sees every member Ready (the registry holds more entries than members: the away one, the future one). */
async function membersReady(g: SyncGroup, timeoutMs: number): Promise<boolean> {
  return until(async () => {
    for (const viewer of g.names) {
      const { items } = await g.client(viewer).list<Cluster>(CLUSTERS);
      if (!g.names.every((m) => items.some((c) => c.metadata.name === m && c.status?.state === 'Ready'))) return false;
    }
    return true;
  }, timeoutMs);
}

export class FuzzRun {
  private readonly o: FuzzOptions;
  private readonly g: SyncGroup;
  private readonly ctx: FuzzContext;
  private readonly plain: RecordingServer;
  private readonly tls: RecordingServer;
  private readonly pids = new Map<string, number>();
  private readonly logOffsets = new Map<string, number>();
  private readonly victimVersions = new Map<string, string>();
  private readonly report: FuzzReport;
  private readonly trust: TrustAttacks;
  private batch = 0;
  /** A controller's process is gone. */
  private gone = false;

  private constructor(o: FuzzOptions, g: SyncGroup, ctx: FuzzContext, plain: RecordingServer, tls: RecordingServer) {
    this.o = o;
    this.g = g;
    this.ctx = ctx;
    this.plain = plain;
    this.tls = tls;
    this.trust = new TrustAttacks({ g, ctx, violation: (kind, detail) => this.violation(kind, detail), log: o.log, reported });
    this.report = { seed: o.seed, batches: 0, cases: 0, accepted: 0, rejected: 0, byKind: {}, byLabel: {}, rejectedBy: {}, hostileEntryRounds: 0, hostileEntryRateLimited: 0, hostileEntryHealedByOwner: 0, errorLogs: 0, errorLogSamples: [], attackerTlsRequests: 0, trust: this.trust.figures, crashes: 0, stalls: 0, violations: 0, violationDetails: [], durationMs: 0, casesPerSecond: 0 };
  }

  /** Starts the group, the attacker's servers and the standing objects; everything started is stopped if that fails. */
  static async start(o: FuzzOptions): Promise<FuzzRun> {
    const stoppers: (() => Promise<void>)[] = [];
    try {
      const plain = await RecordingServer.start({ tls: false });
      stoppers.push(() => plain.stop());
      const tls = await RecordingServer.start({ tls: true });
      stoppers.push(() => tls.stop());
      o.log('starting two clusters and joining them');
      const g = await withNodeOptions(`--max-old-space-size=${CHART_MEMORY.heapMiB}`, () => startSyncGroup(2, { name: o.name, extraArgs: [...TRUST_CONTROLLER_ARGS, ...(o.controllerArgs ?? [])] }));
      stoppers.push(() => g.stop());
      const markerDir = join(g.sandbox.dir, 'fuzz-markers');
      mkdirSync(markerDir, { recursive: true });
      const ctx: FuzzContext = {
        plainUrl: plain.url,
        tlsUrl: tls.url,
        tlsCaB64: Buffer.from(tls.caPem ?? '').toString('base64'),
        markerDir,
        localFiles: [controllerKubeconfigPath(g.sandbox, VICTIM), join(g.sandbox.dir, VICTIM, 'tokens.csv'), join(g.sandbox.dir, VICTIM, 'sa.key')],
        tokenPrefix: 'fztok',
        victimID: await kubeSystemUID(g.client(VICTIM)),
        peerID: await kubeSystemUID(g.client(PEER)),
        // Drawn from the seed, so a replay squats the same IDs.
        ...(([ghostID, futureID]) => ({ ghostID: ghostID ?? '', futureID: futureID ?? '' }))(fc.sample(fc.uuid(), { seed: o.seed, numRuns: 2 })),
        namespace: SANDBOX_NAMESPACE,
        webhookSecret: secretNameFor(WEBHOOK_CONFIGURATION),
      };
      const run = new FuzzRun(o, g, ctx, plain, tls);
      await run.setUp();
      return run;
    } catch (err) {
      for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
      throw err;
    }
  }

  private async setUp(): Promise<void> {
    const { g } = this;
    await waitGroupFormed(g);
    await installWidgets(g, NS.canary);
    await grantKinds(g, 'fuzz-configmaps', '', ['configmaps']);
    for (const c of g.names) for (const ns of [NS.src, NS.victim, NS.status]) await ensureNamespace(g.client(c), ns);
    const peer = g.client(PEER);
    const victim = g.client(VICTIM);
    // What the generated rules match on the peer: labels, annotations and data of several shapes.
    const sources: KubeObject[] = [
      { metadata: { name: 'src-0', labels: { app: 'web', tier: 'db' }, annotations: { note: 'n' } }, data: { k: 'v', size: '3' } },
      { metadata: { name: 'src-1', labels: { 'fuzz.io/role': 'cache' } }, data: { k: '{"a":[1,2,{"b":null}]}' } },
      { metadata: { name: 'src-2', annotations: { note: '{{ .Object.GetName }}' } }, data: { k: 'x'.repeat(4096) } },
      { metadata: { name: 'src-3', labels: { app: '' } }, data: {} },
      { metadata: { name: 'src-4' }, binaryData: { b: Buffer.from([0, 255, 1]).toString('base64') } },
    ];
    for (const s of sources) await peer.create(CONFIGMAPS, NS.src, { apiVersion: 'v1', kind: 'ConfigMap', ...s, metadata: { ...s.metadata, namespace: NS.src } });
    for (const name of VICTIM_NAMES) {
      const made: KubeObject = await victim.create<KubeObject>(CONFIGMAPS, NS.victim, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS.victim }, data: { owner: 'victim' } });
      this.victimVersions.set(name, made.metadata.resourceVersion ?? '');
    }
    const widgetRule = (name: string, ns: string) => rule(name, { groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' }, rules: [{ match: [{ namespaces: [ns] }], mutations: { syncStatus: true } }] });
    await victim.create(RESOURCE_SYNC_RULES, undefined, widgetRule(STANDING.canary, NS.canary));
    await victim.create(RESOURCE_SYNC_RULES, undefined, widgetRule(STANDING.status, NS.status));
    await victim.create(RESOURCE_SYNC_RULES, undefined, rule(STANDING.victim, { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS.victim] }] }] }));
    for (const c of g.names) {
      await g.client(c).create(WIDGETS, NS.canary, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: `canary-${c}`, namespace: NS.canary }, spec: { size: 0 } });
      const pid = g.sandbox.cluster(c).extras[0]?.pid;
      if (pid === undefined) throw new Error(`${c} runs no controller`);
      this.pids.set(c, pid);
    }
    if (!(await this.canary(-1, 120_000))) throw new Error('the canary never synced: the group does not work before any fuzzing');
    await this.trust.setUp();
    const controller = g.sandbox.cluster(VICTIM).extras[0];
    await this.trust.startMonitor(controller?.process.spec.args.find((x) => x.startsWith('--health-addr='))?.split('=')[1] ?? '', this.pids.get(VICTIM) ?? -1);
  }

  /** Stops everything the run started, with the group's own security checks (credentials in logs, writes to peers). */
  async stop(): Promise<void> {
    this.trust.stopMonitor();
    try {
      await this.g.stop();
    } finally {
      await this.plain.stop();
      await this.tls.stop();
    }
  }

  private violation(kind: string, detail: string): void {
    this.report.violationDetails.push({ batch: this.batch, kind, detail: detail.slice(0, 600) });
    this.report.violations++;
    if (kind === 'crash') this.report.crashes++;
    if (kind === 'stall') this.report.stalls++;
    this.o.log(`  VIOLATION batch ${this.batch} ${kind}: ${detail.slice(0, 300)}`);
  }

  private tally(key: string, by: Record<string, Tally>): Tally {
    return (by[key] ??= { tried: 0, accepted: 0, rejected: 0, bad: 0, reported: 0, rateLimited: 0, waiting: 0 });
  }

  async run(): Promise<FuzzReport> {
    const started = Date.now();
    const batches = Math.ceil(this.o.cases / this.o.batchSize);
    const arb = fuzzCase(this.ctx, { costly: this.o.costly });
    const entries = hostileEntry(this.ctx);
    const rewrites = entryRewrite();
    const every = (n: number): boolean => n > 0 && (this.batch + 1) % n === 0;
    for (this.batch = 0; this.batch < batches; this.batch++) {
      // Each batch has its own seed derived from the run's, so a batch can be told again alone.
      const templates = fc.sample(arb, { seed: this.o.seed + this.batch * 7919, numRuns: this.o.batchSize });
      const t0 = Date.now();
      const cases = templates.map((t, i) => t(`fz${this.batch}-${i}`));
      await this.trust.plantEvent();
      const release = every(this.o.listenerEvery) ? this.trust.holdWebhook() : undefined;
      let steps: string;
      try {
        steps = await this.runBatch(cases);
      } finally {
        await release?.();
      }
      if (every(this.o.entryEvery)) {
        const [k] = fc.sample(entries, { seed: this.o.seed + this.batch, numRuns: 1 });
        if (k) await this.hostileEntryRound(k, this.report.hostileEntryRounds % 3 === 2);
      }
      if (every(this.o.rewriteEvery)) {
        const [r] = fc.sample(rewrites, { seed: this.o.seed + this.batch * 31, numRuns: 1 });
        if (r) await this.afterRound('rewrite', () => this.trust.rewriteRound(r));
      }
      if (every(this.o.oversizeEvery)) await this.afterRound('oversize', () => this.trust.oversizeRound());
      this.report.batches++;
      this.o.log(`batch ${this.batch + 1}/${batches}: ${cases.length} cases in ${((Date.now() - t0) / 1000).toFixed(1)} s (${steps}); totals ${this.report.cases} tried, ${this.report.accepted} accepted, ${this.report.violations} violations`);
      // A controller that is gone stays gone (nothing restarts it here): the batches left would only stall.
      if (this.gone) {
        this.o.log(`a controller is gone: the run stops after ${this.batch + 1} of ${batches} batches`);
        break;
      }
    }
    this.report.durationMs = Date.now() - started;
    this.report.casesPerSecond = Math.round((this.report.cases / (this.report.durationMs / 1000)) * 10) / 10;
    return this.report;
  }

  /** A trust round between batches; then the group must form again and every invariant hold. */
  private async afterRound(what: string, round: () => Promise<void>): Promise<void> {
    const t0 = Date.now();
    await round();
    if (!(await membersReady(this.g, 120_000))) this.violation('stall', `the members did not see each other Ready again within 120 s of the ${what} round`);
    await this.checkInvariants();
    this.o.log(`  ${what} round in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }

  /** Runs one batch; says how long each step took. */
  private async runBatch(cases: readonly FuzzCase[]): Promise<string> {
    const steps: string[] = [];
    const timed = async <T>(step: string, f: () => Promise<T>): Promise<T> => {
      const t0 = Date.now();
      const v = await f();
      steps.push(`${step} ${((Date.now() - t0) / 1000).toFixed(1)}`);
      return v;
    };
    const applied = await timed('apply', () => this.apply(cases));
    await timed('verdicts', () => this.awaitVerdicts(applied));
    await timed('events', () => this.checkReported(applied));
    await timed('squats', () => this.trust.checkSquats(this.squats(applied)));
    await timed('checks', () => this.checkInvariants());
    await timed('cleanup', () => this.cleanUp(applied));
    return steps.join(', ');
  }

  // ------------------------------------------------------------------ apply

  private async apply(cases: readonly FuzzCase[]): Promise<Applied[]> {
    const applied = cases.map((c, i): Applied => {
      const cluster = c.side === 'victim' ? VICTIM : PEER;
      const verdictOn = c.kind === 'rule' && c.side === 'peer' ? [PEER, VICTIM] : c.kind === 'rule' || c.kind === 'cluster' ? [cluster] : [];
      return { c, name: `fz${this.batch}-${i}`, cluster, verdictOn, made: [], accepted: false, verdicts: new Map() };
    });
    // A few writers at once: the API servers take a batch in seconds, and the controllers see it as one burst.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < applied.length) await this.applyOne(applied[next++]!);
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    return applied;
  }

  private async applyOne(a: Applied): Promise<void> {
    const rest = this.g.client(a.cluster);
    const kind = this.tally(a.c.kind, this.report.byKind);
    const label = this.tally(a.c.label, this.report.byLabel);
    this.report.cases++;
    kind.tried++;
    label.tried++;
    // Supporting objects (a Cluster's Secret) go first, so the controller sees the whole case at once.
    const [main, ...support] = a.c.objects;
    for (const o of [...support, main]) {
      if (!o) continue;
      const ref = REFS[o.kind ?? ''];
      if (!ref) throw new Error(`no resource for ${o.kind ?? ''}`);
      const namespace = o.metadata.namespace;
      try {
        const made = await this.write(rest, ref, o);
        a.made.push({ ref, namespace, name: made.metadata.name ?? '', cluster: a.cluster });
        if (o === main) a.accepted = true;
        // A conflict: the controller wrote the status first, and its Warning stands.
        if (o === main && a.c.heartbeat) await rest.updateStatus(ref, namespace, { ...made, status: readyStatus() }).catch((err: unknown) => {
          if (!isConflict(err)) throw err;
        });
      } catch (err) {
        // Admission that cannot reach the webhook (slow requests holding it) is the controller's failure, not the case's.
        if (err instanceof ApiError && /failed calling webhook/.test(err.message)) {
          this.violation('listener', `${a.cluster}'s API server could not call its webhook for ${a.name}: ${err.message.slice(0, 300)}`);
          continue;
        }
        const why = rejection(err);
        if (!why) throw err;
        if (o === main) this.report.rejectedBy[why] = (this.report.rejectedBy[why] ?? 0) + 1;
        this.o.detail?.(`${a.name} ${a.c.label} ${o.kind ?? ''} rejected (${why}): ${err instanceof Error ? err.message.slice(0, 300) : ''}`);
      }
    }
    if (a.accepted) {
      this.report.accepted++;
      kind.accepted++;
      label.accepted++;
    } else {
      this.report.rejected++;
      kind.rejected++;
      label.rejected++;
    }
  }

  /** Creates the object; the attacker overwrites the copy of a victim object it already holds (what a hostile admin would do). */
  private async write(rest: RestClient, ref: ResourceRef, o: KubeObject): Promise<KubeObject> {
    const ns = o.metadata.namespace;
    const hasStatus = ref === WIDGETS && o['status'] !== undefined;
    try {
      const made = await rest.create(ref, ns, o);
      return hasStatus ? await rest.updateStatus(ref, ns, { ...made, status: o['status'] }) : made;
    } catch (err) {
      if (!isAlreadyExists(err) || ref !== CONFIGMAPS || ns !== NS.victim) throw err;
      const current = await rest.get(ref, ns, o.metadata.name ?? '');
      return rest.update(ref, ns, { ...o, metadata: { ...o.metadata, resourceVersion: current.metadata.resourceVersion } });
    }
  }

  /** The batch's squats the attacker's API server took, by whom they squat. */
  private squats(applied: readonly Applied[]): { name: string; whose: Squatted }[] {
    return applied.flatMap((a) => (a.accepted && a.c.expect.squats ? [{ name: a.name, whose: a.c.expect.squats }] : []));
  }

  // ------------------------------------------------------------------ verdicts

  private async awaitVerdicts(applied: readonly Applied[]): Promise<void> {
    const due = applied.filter((a) => a.accepted && a.verdictOn.length > 0);
    await until(async () => {
      await this.readVerdicts(due);
      return due.every((a) => a.verdictOn.every((c) => a.verdicts.has(c)));
    }, VERDICT_MS);
    for (const a of due) {
      for (const c of a.verdictOn) {
        if (!a.verdicts.has(c)) this.violation('stall', `${a.c.kind} ${a.name} (${a.c.label}) on ${c}: no verdict after ${VERDICT_MS / 1000}s: ${JSON.stringify(a.c.objects[0]).slice(0, 400)}`);
      }
    }
  }

  private async readVerdicts(due: readonly Applied[]): Promise<void> {
    for (const c of this.g.names) {
      const rest = this.g.client(c);
      const wanted = due.filter((a) => a.verdictOn.includes(c));
      if (wanted.length === 0) continue;
      const rules = new Map((await rest.listAll<ResourceSyncRule>(RESOURCE_SYNC_RULES)).items.map((r) => [r.metadata.name ?? '', r]));
      const clusters = new Map((await rest.listAll<Cluster>(CLUSTERS)).items.map((x) => [x.metadata.name ?? '', x]));
      // The rules a member takes from one peer are held to their copy budget (the built-in rule
      // relaying them is a rule like any other): while it is full, a peer's rule not taken yet
      // waits for room, and has no verdict here to give.
      const relayed = [...rules.values()].filter((r) => ownerOf(r) === this.ctx.peerID).length;
      for (const a of wanted) {
        const v = a.c.kind === 'rule' ? ruleVerdict(rules.get(a.name)) : clusterVerdict(clusters.get(a.name));
        if (v) a.verdicts.set(c, v);
        else if (a.c.kind === 'rule' && c === VICTIM && a.c.side === 'peer' && !rules.has(a.name) && relayed >= FLOOD.ruleMaxCopies) {
          a.verdicts.set(c, { uid: '', problems: [], waits: [`not taken yet: the rules relayed from ${PEER} hold their copy budget of ${FLOOD.ruleMaxCopies}`], invalid: false });
        }
      }
    }
  }

  /**
   * The verdicts again, settled (a valid rule fails objects a while after its first status), each
   * checked against what the generator knows; then every bad one needs a Warning Event naming its problem.
   */
  private async checkReported(applied: readonly Applied[]): Promise<void> {
    const judged = applied.filter((a) => a.verdicts.size > 0);
    await this.readVerdicts(judged);
    for (const a of judged) {
      for (const [c, v] of a.verdicts) {
        const { ruleInvalid, neverReady } = a.c.expect;
        // A peer's rule the victim has not taken yet (its copy budget full) has no verdict on its validity there.
        const read = v.uid !== '';
        if (ruleInvalid && read && !v.invalid) this.violation('wrong-verdict', `rule ${a.name} on ${c} has ${ruleInvalid} yet is reported valid: ${JSON.stringify(a.c.objects[0]).slice(0, 400)}`);
        if (neverReady && !v.problems.length) this.violation('wrong-verdict', `Cluster ${a.name} on ${c} uses ${neverReady} yet is Ready`);
      }
    }
    const bad = judged.flatMap((a) => [...a.verdicts].filter(([, v]) => v.problems.length > 0).map(([c, v]) => ({ a, c, v })));
    let events = new Map<string, CoreEvent[]>();
    const missing = (): typeof bad => bad.filter(({ c, v }) => !v.problems.every((p) => reported(events.get(c) ?? [], v.uid, p) === true));
    // Rate-limited objects will not get theirs: waiting for them would only slow the run down.
    const rateLimited = ({ c, v }: (typeof bad)[number]): boolean => v.problems.every((p) => reported(events.get(c) ?? [], v.uid, p) !== false);
    await until(async () => {
      events = new Map(await Promise.all(this.g.names.map(async (c) => [c, (await this.g.client(c).list<CoreEvent>(EVENTS, { namespace: 'default' })).items] as const)));
      return missing().every(rateLimited);
    }, 30_000);
    const unreported = new Set(missing());
    const limited = new Set([...unreported].filter(rateLimited));
    for (const a of judged) {
      for (const [c, v] of a.verdicts) {
        this.o.detail?.(`${a.name} ${a.c.label} on ${c}: ${v.problems.length + v.waits.length ? JSON.stringify([...v.problems, ...v.waits]) : 'fine'}`);
        if (v.waits.length > 0 && v.problems.length === 0) {
          this.tally(a.c.kind, this.report.byKind).waiting++;
          this.tally(a.c.label, this.report.byLabel).waiting++;
        }
      }
    }
    for (const b of bad) {
      const kind = this.tally(b.a.c.kind, this.report.byKind);
      const label = this.tally(b.a.c.label, this.report.byLabel);
      kind.bad++;
      label.bad++;
      if (limited.has(b)) {
        kind.rateLimited++;
        label.rateLimited++;
        this.o.detail?.(`${b.a.name} on ${b.c}: its Warnings were rate-limited before one named ${JSON.stringify(b.v.problems)}`);
      } else if (unreported.has(b)) {
        this.violation('unreported', `${b.a.c.kind} ${b.a.name} on ${b.c}: no Warning Event naming ${JSON.stringify(b.v.problems)}`);
      } else {
        kind.reported++;
        label.reported++;
      }
    }
  }

  // ------------------------------------------------------------------ invariants

  private async checkInvariants(): Promise<void> {
    for (const c of this.g.names) {
      const controller = this.g.sandbox.cluster(c).extras[0];
      const pid = controller?.pid;
      if (!controller || pid !== this.pids.get(c) || !alive(pid ?? -1)) {
        this.gone = true;
        this.violation('crash', `${c}'s controller is gone or restarted (pid ${String(pid)}, was ${String(this.pids.get(c))})`);
        continue;
      }
      const health = controller.process.spec.args.find((x) => x.startsWith('--health-addr='))?.split('=')[1];
      const res = await fetch(`http://${health ?? ''}/healthz`, { signal: AbortSignal.timeout(10_000) }).catch((err: unknown) => err as Error);
      if (res instanceof Error || res.status !== 200) this.violation('crash', `${c}'s /healthz: ${res instanceof Error ? res.message : res.status}`);
    }
    if (!(await this.canary(this.batch, 90_000))) this.violation('stall', 'the canary did not sync a changed value within 90s');
    for (const name of VICTIM_NAMES) {
      const o = await getOrUndefined(this.g.client(VICTIM), CONFIGMAPS, NS.victim, name);
      if (!o) this.violation('victim-harmed', `the victim's own ConfigMap ${name} was deleted`);
      else if (o.metadata.resourceVersion !== this.victimVersions.get(name)) this.violation('victim-harmed', `the victim's own ConfigMap ${name} was changed: ${JSON.stringify(o).slice(0, 300)}`);
    }
    await this.trust.check();
    const ran = readdirSync(this.ctx.markerDir);
    if (ran.length > 0) this.violation('command-run', `an exec plugin ran: ${ran.join(', ')}`);
    if (this.plain.connections > 0) this.violation('plaintext', `${this.plain.connections} connections to the attacker's plain http server`);
    for (const r of this.tls.requests.splice(0)) {
      this.report.attackerTlsRequests++;
      if (r.authorization !== undefined && !r.authorization.startsWith(`Bearer ${this.ctx.tokenPrefix}`)) this.violation('credential-sent', `the attacker's TLS server got ${r.method} ${r.url} with a credential that is not the kubeconfig's inline token`);
    }
    this.checkLogs();
  }

  /** What the controllers logged since the last look: no error or fatal line, nothing uncaught, no fuzz token. */
  private checkLogs(): void {
    const dir = join(this.g.sandbox.dir, 'logs');
    for (const f of readdirSync(dir).filter((x) => x.endsWith('-controller.log'))) {
      const path = join(dir, f);
      const from = this.logOffsets.get(f) ?? 0;
      const size = statSync(path).size;
      if (size <= from) continue;
      const text = readFileSync(path).subarray(from, size).toString('utf8');
      this.logOffsets.set(f, size);
      for (const line of text.split('\n')) {
        if (/"level":"fatal"|uncaught|unhandled|internal error|failed unexpectedly/i.test(line)) this.violation('log-error', `${f}: ${line.slice(0, 400)}`);
        else if (line.includes('lost the leader election lease')) this.violation('freeze', `${f}: the controller lost its leader lease (its event loop or its API server held past the renew deadline)`);
        else if (line.includes('"level":"error"')) {
          // A fault the controller retries: counted and shown (a busy machine makes a few), not failed on.
          this.report.errorLogs++;
          const what = errorGist(line);
          if (this.report.errorLogSamples.length < 20) this.report.errorLogSamples.push(`${f}: ${what}`);
          this.o.detail?.(`error logged: ${f}: ${line.slice(0, 400)}`);
        }
        if (line.includes(this.ctx.tokenPrefix)) this.violation('secret-in-log', `${f} holds an inline token of a fuzz kubeconfig`);
      }
    }
  }

  /** Both canaries changed at their source reach the other member within the deadline. */
  private async canary(value: number, deadlineMs: number): Promise<boolean> {
    const [a, b] = this.g.names as [string, string];
    for (const c of [a, b]) await this.g.client(c).patch(WIDGETS, NS.canary, `canary-${c}`, 'merge', { spec: { size: value } });
    return until(async () => {
      for (const [from, to] of [[a, b], [b, a]] as const) {
        const copy = await getOrUndefined<KubeObject & { spec?: { size?: number } }>(this.g.client(to), WIDGETS, NS.canary, `canary-${from}`);
        if (copy?.spec?.size !== value) return false;
      }
      return true;
    }, deadlineMs, 500);
  }

  // ------------------------------------------------------------------ clean up

  private async cleanUp(applied: readonly Applied[]): Promise<void> {
    for (const a of applied) for (const m of [...a.made].reverse()) await tryDelete(this.g.client(m.cluster), m.ref, m.namespace, m.name);
    const prefix = `fz${this.batch}-`;
    const squats = this.squats(applied).map((x) => x.name);
    const gone = await until(async () => {
      // The victim keeps a squat it took once its source goes (the attacker no longer reaches that cluster).
      await this.trust.removeTakenSquats(squats);
      for (const c of this.g.names) {
        const rest = this.g.client(c);
        for (const ref of [RESOURCE_SYNC_RULES, CLUSTERS]) if ((await rest.listAll(ref)).items.some((o) => o.metadata.name?.startsWith(prefix))) return false;
      }
      return true;
    }, 60_000);
    if (!gone) this.violation('stall', `the batch's rules or Clusters (or their copies) were still there 60s after their sources were deleted`);
    // Events of a finished batch only slow the next batch's reads down. The members' own Clusters
    // keep theirs: how many Warnings they had tells a rate-limited Event from a missing one.
    const fieldSelector = this.g.names.map((c) => `involvedObject.name!=${c}`).join(',');
    for (const c of this.g.names) await this.g.client(c).request({ method: 'DELETE', path: '/api/v1/namespaces/default/events', query: { fieldSelector } });
  }

  // ------------------------------------------------------------------ hostile registry entry

  /**
   * The attacker rewrites its own registry entry, which the victim copies and reads the attacker
   * through: its kubeconfig (exec plugin, token file, plain server...) or its Cluster's endpoints
   * (a plain http one). The victim must refuse it with a Warning Event, running nothing and
   * connecting nowhere; then both sides get their entry back and the group must form again.
   */
  private async hostileEntryRound(k: { text: string; forbidden: string }, viaEndpoint: boolean): Promise<void> {
    this.report.hostileEntryRounds++;
    const peer = this.g.client(PEER);
    const victim = this.g.client(VICTIM);
    const own = await peer.get<Cluster>(CLUSTERS, undefined, PEER);
    const ref = own.spec.authInfo?.secretRef;
    if (!ref?.name || !ref.namespace) throw new Error(`${PEER}'s own Cluster names no credentials Secret`);
    const secretOnPeer = await peer.get<Secret>(SECRETS, ref.namespace, ref.name);
    const copy = await victim.get<Cluster>(CLUSTERS, undefined, PEER);
    const copiedRef = copy.spec.authInfo?.secretRef;
    const secretOnVictim = copiedRef?.name && copiedRef.namespace ? await victim.get<Secret>(SECRETS, copiedRef.namespace, copiedRef.name) : undefined;
    const what = viaEndpoint ? 'an http endpoint' : k.forbidden;
    this.o.log(`  hostile entry: ${PEER} rewrites its own entry with ${what}`);
    try {
      if (viaEndpoint) await peer.patch(CLUSTERS, undefined, PEER, 'merge', { spec: { kubernetesApiEndpoints: [{ serverAddress: this.ctx.plainUrl }] } });
      else await peer.patch(SECRETS, ref.namespace, ref.name, 'merge', { data: { kubeconfig: Buffer.from(k.text).toString('base64') } });
      const seen: { said: boolean | 'rate-limited'; reasons: string } = { said: false, reasons: '' };
      // Event timestamps have whole seconds.
      const since = Date.now() - 1_000;
      const refused = await until(async () => {
        const c = await victim.get<Cluster>(CLUSTERS, undefined, PEER);
        const events = (await victim.list<CoreEvent>(EVENTS, { namespace: 'default' })).items;
        seen.reasons = eventReasons(events, c.metadata.uid ?? '');
        // The refusal may be over by the time it is looked at: the attacker's own controller puts its reader Secret back.
        const fresh = events.filter((e) => e.involvedObject?.uid === c.metadata.uid && e.type === 'Warning' && Date.parse((e['lastTimestamp'] as string | undefined) ?? '') >= since);
        if (fresh.some((e) => /^invalid kubeconfig in Secret |https URL/.test(e.message ?? ''))) return (seen.said = true);
        // Refused for the attack, not unreachable for a moment on a busy machine.
        if (c.status?.state !== 'InvalidAuthInfo') return false;
        seen.said = reported(events, c.metadata.uid ?? '', gist(c.status.message ?? ''));
        return seen.said !== false;
      }, 90_000);
      const now = await peer.get<Secret>(SECRETS, ref.namespace, ref.name);
      if (!viaEndpoint && JSON.stringify(now.data) === JSON.stringify(secretOnPeer.data)) this.report.hostileEntryHealedByOwner++;
      if (refused && seen.said === 'rate-limited') {
        this.report.hostileEntryRateLimited++;
        this.o.log(`  refused in status only; the Events on ${VICTIM}'s Cluster ${PEER} so far: ${seen.reasons}`);
      }
      if (!refused) this.violation('unreported', `${VICTIM} did not refuse ${PEER}'s entry with ${what} (not Ready, with a Warning Event) within 90s; its Events: ${seen.reasons}`);
    } catch (err) {
      // A webhook refusing the attacker's own write stops the attack there: fine.
      if (!rejection(err)) throw err;
      this.o.log(`  hostile entry refused at the API: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}`);
    } finally {
      await peer.patch(CLUSTERS, undefined, PEER, 'merge', { spec: { kubernetesApiEndpoints: own.spec.kubernetesApiEndpoints ?? null } });
      await peer.patch(SECRETS, ref.namespace, ref.name, 'merge', { data: secretOnPeer.data });
      // The victim stopped reading the attacker: its copies are put back by hand, as an operator
      // would. The attacker's own controller writes its reader Secret from its Cluster, so for a
      // moment after the fix it may still hand out the refused one, and a victim that reconnects
      // then copies it and refuses again: the operator looks again and puts back what is there now.
      for (let attempt = 1; attempt <= 3; attempt++) {
        const peerCluster = attempt === 1 ? copy : await peer.get<Cluster>(CLUSTERS, undefined, PEER);
        const peerSecret = attempt === 1 ? secretOnVictim : await peer.get<Secret>(SECRETS, ref.namespace, ref.name);
        await victim.patch(CLUSTERS, undefined, PEER, 'merge', { spec: { kubernetesApiEndpoints: peerCluster.spec.kubernetesApiEndpoints ?? null } });
        if (peerSecret && copiedRef?.name && copiedRef.namespace) await victim.patch(SECRETS, copiedRef.namespace, copiedRef.name, 'merge', { data: peerSecret.data });
        if (await until(async () => (await victim.get<Cluster>(CLUSTERS, undefined, PEER)).status?.state === 'Ready', 40_000)) break;
        this.o.log(`  ${VICTIM} refused ${PEER}'s entry again after it was put back (attempt ${attempt}); putting back what ${PEER} holds now`);
      }
    }
    if (!(await membersReady(this.g, 120_000))) this.violation('stall', 'the members did not see each other Ready again within 120 s of the hostile entry being put back');
    await this.checkInvariants();
  }
}

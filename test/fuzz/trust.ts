// The trust boundary under the fuzz run's hostile member (cluster2) and its victim (cluster1): what
// the attacker plants for rules to deliver, the registry both hold of a third member that is away
// and of a cluster that has not joined yet, the attacker's rounds between batches (its copies of
// others' registry entries rewritten with a fresh Ready heartbeat; more than the victim's cache of
// it may hold; slow, large, held-open requests against the victim's webhook), and the invariants
// checked after every batch and round:
// - the victim's entries of other members keep where and how they are reached (endpoints, CA,
//   credentials Secret and the server its kubeconfig names) unless that member changed them itself;
// - no second Cluster for an ID the victim describes appears there second-hand, and the entry
//   that spoke for each ID still does;
// - the victim's controller namespace holds nothing a peer may not put there;
// - no copy has generateName, no rule holds more copies from a peer than its budget, nor all rules
//   together more from a peer than its cache budget (plus writes on their way),
//   and no HubSyncRule, ClusterFeature or Event is a copy;
// - the victim's controller stays within a memory bound derived from its budgets, never holds its
//   event loop for long (as it measures that itself, and as /healthz answers) and keeps its lease;
// - each refusal the attacker provokes is reported (a rule's status, a log line, a Cluster condition).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import fc from 'fast-check';
import { ANNOTATIONS, API_GROUP, API_GROUP_VERSION, CLUSTER_SECRET, CORE_RULE_NAMES, HUB_CREDENTIALS, KINDS, LABELS, WELL_KNOWN } from '../../src/core/api/keys.ts';
import { CLUSTER_FEATURES, CLUSTERS, HUB_SYNC_RULES, RESOURCE_SYNC_RULES, SECRETS, type Secret } from '../../src/core/api/resources.ts';
import { formatSourceIdentity, parseSourceIdentity } from '../../src/core/api/source-identity.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import { speakerFor } from '../../src/core/trust/index.ts';
import { generateCertificates } from '../../src/kube/certificates.ts';
import { EVENTS, isNotFound, sleep, type CoreEvent, type ResourceRef, type RestClient } from '../../src/kube/index.ts';
import { credentialsTarget } from '../../src/peers/connection.ts';
import { WEBHOOK_LIMITS } from '../../src/registry/webhook/server.ts';
import { PACKAGE_ROOT } from '../../src/sandbox/index.ts';
import { BUILTIN_PREFIX } from '../../src/core/rules/index.ts';
import { holdOpen, overTls, type Held } from '../support/raw-http.ts';
import { controllerMetric } from '../support/registry.ts';
import { CLUSTER_ROLES, ensureNamespace, getOrUndefined, grantKinds, rule, type SyncGroup } from '../support/sync-helpers.ts';
import { attackerCredentials, b64, FLOOD, NS, PLANTED, readyStatus, type FuzzContext, type Squatted } from './generators.ts';

export const VICTIM = 'cluster1';
export const PEER = 'cluster2';
const MiB = 2 ** 20;

/** What the victim's caches of one peer may hold (both controllers run with it). */
export const PEER_CACHE = { maxBytes: 16 * MiB, maxObjects: 5_000 } as const;
/** The budgets both controllers of the run keep to. */
export const TRUST_CONTROLLER_ARGS: readonly string[] = [`--peer-cache-max-bytes=${PEER_CACHE.maxBytes}`, `--peer-cache-max-objects=${PEER_CACHE.maxObjects}`, `--rule-max-copies=${FLOOD.ruleMaxCopies}`];
/** Creates of one rule that may land past its budget: those already on their way when it filled, one per sync worker. */
const COPY_SLACK = 16;
/**
 * The longest the victim's event loop may be held, as it measures that itself (a template or a
 * request holding it longer is a freeze): its leader renews its lease within 10 s. The shared
 * machine may keep a process from running for a few seconds, so this is not less.
 */
const FREEZE_MS = 8_000;
/** The longest /healthz may take to answer from outside: past it, the leader could not have renewed its lease either. */
const HEALTHZ_MS = 10_000;
/** The oversize round: ConfigMaps near the 1 MiB limit, together past PEER_CACHE.maxBytes, and ClusterFeatures at the annotation limit. */
const BULK = { configMaps: 20, bytes: 1_000_000, features: 8 } as const;
/** The slow-listener attack: requests of just under the webhook's body cap, sent fast and held open. */
const SLOW = { requests: 48, bytes: WEBHOOK_LIMITS.maxBodyBytes - 64 * 1024 } as const;
/**
 * The chart's memory limit, and the old space the image gives Node under it (its
 * --max-old-space-size-percentage): the controllers run with that old space, so that they collect
 * garbage as they would there (with the machine's memory in view, V8 lets it pile up), and what
 * they hold on the heap is bounded by it. Read from the chart and the Dockerfile, so that the run
 * checks what ships.
 */
export const CHART_MEMORY = chartMemory();
/** V8's young generation at the controllers' --max-semi-space-size=16: three semi-spaces. */
const YOUNG_GENERATION = 3 * 16 * MiB;
/**
 * What the victim's controller may hold outside its heap beyond what it held once set up: all its
 * webhook listener may buffer (the shared budget, each connection's own allowance and 128 KiB of
 * TLS buffers) with the dead buffers V8 lets pile up before it collects them (its 64 MiB external
 * soft limit), and what Node and V8 allocate for themselves as they work (compiler zones, TLS and
 * parser state), which malloc keeps once it has it: up to about 80 MiB in 10,000-case runs.
 */
const OFF_HEAP_GROWTH = WEBHOOK_LIMITS.maxBufferedBytes + WEBHOOK_LIMITS.maxConnections * (WEBHOOK_LIMITS.ownBodyBytes + 128 * 1024) + 64 * MiB + 96 * MiB;

function chartMemory(): { limitMiB: number; heapMiB: number } {
  const values = parseYaml(readFileSync(join(PACKAGE_ROOT, 'deploy/charts/cluster-registry/values.yaml'), 'utf8')) as { resources?: { limits?: { memory?: string } } };
  const limit = /^(\d+)Mi$/.exec(values.resources?.limits?.memory ?? '')?.[1];
  const share = /--max-old-space-size-percentage=(\d+)/.exec(readFileSync(join(PACKAGE_ROOT, 'Dockerfile'), 'utf8'))?.[1];
  if (!limit || !share) throw new Error("the chart's memory limit (in Mi) or the image's old-space share is not where the fuzz run reads them");
  return { limitMiB: Number(limit), heapMiB: Math.floor((Number(limit) * Number(share)) / 100) };
}

const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', resource: 'deployments' };
const ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' };
const ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' };
/** Names of the third member's and the future member's entries (and of their credentials Secrets). */
const GHOST = 'ghost';
const FUTURE = 'future';
/** Nowhere: nothing listens on port 1. */
const NOWHERE = 'https://127.0.0.1:1';

export interface TrustFigures {
  /** Rounds where the attacker rewrote its copy of an entry, and what the victim did about each. */
  rewriteRounds: number;
  rewritesRefused: number;
  rewritesTakenSameServer: number;
  oversizeRounds: number;
  listenerRounds: number;
  /** Slow requests the webhook refused with 503 (past its buffer budget) or cut off. */
  listenerRefused: number;
  /** Squats the victim took (of IDs no one describes there) and left out. */
  squatsTaken: number;
  squatsRefused: number;
  copiesChecked: number;
  maxHealthzMs: number;
  maxEventLoopMs: number;
  peakRssMiB: number;
  rssBoundMiB: number;
}

/** How one of the attacker's rewrites of its copy of an entry goes, generated. */
export interface EntryRewrite {
  /** Whose entry: the member that is away, or the victim's own. */
  readonly target: 'ghost' | 'victim';
  readonly change: 'endpoint' | 'ca' | 'secret-ref' | 'secret-ref-of-another' | 'secret-ref-elsewhere' | 'server' | 'token' | 'endpoint-and-server';
}

export function entryRewrite(): fc.Arbitrary<EntryRewrite> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ target: fc.constant('ghost' as const), change: fc.constantFrom('endpoint', 'ca', 'secret-ref', 'secret-ref-of-another', 'secret-ref-elsewhere', 'server', 'token', 'endpoint-and-server') }) },
    // The victim never takes its own entry from anyone, and says nothing of it.
    { weight: 1, arbitrary: fc.record({ target: fc.constant('victim' as const), change: fc.constantFrom('endpoint', 'server') }) },
  );
}

/** Where and how an entry says its cluster is reached, comparable. */
function reach(c: Cluster | undefined): string {
  const ref = c?.spec?.authInfo?.secretRef;
  return JSON.stringify([ref?.namespace ?? '', ref?.name ?? '', (c?.spec?.kubernetesApiEndpoints ?? []).map((e) => [e.clientNetwork ?? '', e.serverAddress ?? '', e.caBundle ?? ''])]);
}

/** The resident memory of a process, from /proc; 0 once it is gone. */
function rss(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** The victim's /healthz and RSS, sampled while the run goes; each window's worst is read by `take`. */
class Monitor {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private worstMs = 0;
  private failures: string[] = [];
  peakRss = 0;
  windowPeakRss = 0;
  maxMs = 0;

  private readonly url: string;
  private readonly pid: number;

  constructor(url: string, pid: number) {
    this.url = url;
    this.pid = pid;
  }

  start(): void {
    this.timer = setInterval(() => void this.sample(), 500);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    const r = rss(this.pid);
    this.windowPeakRss = Math.max(this.windowPeakRss, r);
    this.peakRss = Math.max(this.peakRss, r);
    // One probe at a time: a slow answer is measured whole, not hidden behind the next.
    if (this.busy) return;
    this.busy = true;
    const t0 = performance.now();
    try {
      const res = await fetch(this.url, { signal: AbortSignal.timeout(30_000) });
      await res.text();
      if (res.status !== 200) this.failures.push(`/healthz answered ${res.status}`);
    } catch (err) {
      this.failures.push(`/healthz: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      const ms = performance.now() - t0;
      this.worstMs = Math.max(this.worstMs, ms);
      this.maxMs = Math.max(this.maxMs, ms);
      this.busy = false;
    }
  }

  /** The window's slowest answer, failures and peak RSS; a new window starts. */
  take(): { worstMs: number; failures: string[]; peakRss: number } {
    const w = { worstMs: this.worstMs, failures: this.failures, peakRss: this.windowPeakRss };
    this.worstMs = 0;
    this.failures = [];
    this.windowPeakRss = 0;
    return w;
  }
}

export interface TrustDeps {
  readonly g: SyncGroup;
  readonly ctx: FuzzContext;
  readonly violation: (kind: string, detail: string) => void;
  readonly log: (line: string) => void;
  /** Whether a Warning Event on the object with that UID names the problem ('rate-limited': it may rightly have been left out). */
  readonly reported: (events: readonly CoreEvent[], uid: string, problem: string) => boolean | 'rate-limited';
}

/** An entry whose reach the victim must keep, as it was once the run was set up. */
interface HeldEntry {
  readonly cluster: string;
  readonly reach: string;
  readonly secret: { namespace: string; name: string };
  readonly target: string | undefined;
}

export class TrustAttacks {
  readonly figures: TrustFigures = { rewriteRounds: 0, rewritesRefused: 0, rewritesTakenSameServer: 0, oversizeRounds: 0, listenerRounds: 0, listenerRefused: 0, squatsTaken: 0, squatsRefused: 0, copiesChecked: 0, maxHealthzMs: 0, maxEventLoopMs: 0, peakRssMiB: 0, rssBoundMiB: 0 };
  private readonly d: TrustDeps;
  private monitor: Monitor | undefined;
  private rssBound = Infinity;
  private held: HeldEntry[] = [];
  /** The entry that speaks for each ID the victim describes, by ID. */
  private speakers = new Map<string, string>();
  private readonly victimLog: string;

  constructor(d: TrustDeps) {
    this.d = d;
    this.victimLog = join(d.g.sandbox.dir, 'logs', `${VICTIM}-controller.log`);
  }

  private get victim(): RestClient {
    return this.d.g.client(VICTIM);
  }

  private get peer(): RestClient {
    return this.d.g.client(PEER);
  }

  // ------------------------------------------------------------------ set up

  /**
   * Grants both controllers the kinds the attacks aim at (so that what refuses them is the trust
   * boundary, not RBAC), and makes what they need: the attacker's planted objects, the flood, the
   * entries of the member that is away and of the one that has not joined, the victim's foreign
   * credentials, the rule that caches NS.bulk. Then takes the victim's registry as the reference
   * and starts watching its controller.
   */
  async setUp(): Promise<void> {
    const { g, ctx } = this.d;
    await grantKinds(g, 'fuzz-trust-events', '', ['events']);
    // Secrets: the controllers write them anywhere (and may read them where a peer's entry could
    // name them); the readers read them only where the attacks put sources, never in kube-system.
    for (const c of g.names) {
      await g.client(c).create(CLUSTER_ROLES, undefined, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'fuzz-trust-secrets', labels: { [LABELS.controllerAggregated]: 'true' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }] });
      await g.client(c).create(ROLES, NS.src, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'fuzz-reader-secrets', namespace: NS.src }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }] });
      await g.client(c).create(ROLE_BINDINGS, NS.src, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'fuzz-reader-secrets', namespace: NS.src },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'fuzz-reader-secrets' },
        subjects: [{ kind: 'ServiceAccount', name: WELL_KNOWN.readerServiceAccountName, namespace: ctx.namespace }],
      });
    }
    await grantKinds(g, 'fuzz-trust-apps', 'apps', ['deployments']);
    await grantKinds(g, 'fuzz-trust-events-group', 'events.k8s.io', ['events']);
    await grantKinds(g, 'fuzz-trust-ours', API_GROUP, ['hubsyncrules', 'clusterfeatures']);
    for (const c of g.names) for (const ns of [NS.flood, NS.bulk]) await ensureNamespace(g.client(c), ns);
    const peer = this.peer;
    const victim = this.victim;
    const token = (what: string): string => `${ctx.tokenPrefix}${what}`;
    for (const s of PLANTED.secrets) {
      const data = 'data' in s ? Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, b64(v)])) : s.type === CLUSTER_SECRET.type || s.type === HUB_CREDENTIALS.type ? attackerCredentials(ctx, ctx.namespace, s.name, token(s.name.replaceAll('-', ''))).data : { k: b64('planted') };
      await peer.create(SECRETS, ctx.namespace, { apiVersion: 'v1', kind: 'Secret', metadata: { name: s.name, namespace: ctx.namespace, ...('labels' in s ? { labels: s.labels } : {}), ...('annotations' in s ? { annotations: s.annotations } : {}) }, type: s.type, data });
    }
    await peer.create(SECRETS, NS.src, { apiVersion: 'v1', kind: 'Secret', metadata: { name: PLANTED.srcSecret, namespace: NS.src }, type: 'Opaque', data: { k: b64('v') } });
    for (const name of PLANTED.configMaps) await peer.create(CONFIGMAPS, ctx.namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ctx.namespace }, data: { release: 'H4sI' } });
    await peer.create(DEPLOYMENTS, ctx.namespace, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: PLANTED.deployment, namespace: ctx.namespace },
      spec: { replicas: 1, selector: { matchLabels: { app: 'planted' } }, template: { metadata: { labels: { app: 'planted' } }, spec: { serviceAccountName: 'cluster-registry-controller', containers: [{ name: 'c', image: 'planted' }] } } },
    });
    // A source the API server named: its copy must still get a name of its own.
    await peer.create(CONFIGMAPS, NS.src, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-', namespace: NS.src }, data: { k: 'generated' } });
    await peer.create(HUB_SYNC_RULES, undefined, { apiVersion: API_GROUP_VERSION, kind: KINDS.hubSyncRule, metadata: { name: PLANTED.hubSyncRule }, spec: { hub: 'fz-no-such-hub', groupVersionKind: { version: 'v1', kind: 'ConfigMap' } } });
    await peer.create(CLUSTER_FEATURES, undefined, { apiVersion: API_GROUP_VERSION, kind: KINDS.clusterFeature, metadata: { name: PLANTED.feature }, spec: { featureName: 'offered-by-no-one' } });
    await this.plantEvent();
    for (let i = 0; i < FLOOD.sources; i++) await peer.create(CONFIGMAPS, NS.flood, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `flood-${i}`, namespace: NS.flood }, data: { i: String(i) } });
    // Caches all of NS.bulk and copies none of it (no object there has data.never).
    await victim.create(RESOURCE_SYNC_RULES, undefined, rule('fuzz-bulk-cache', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS.bulk], content: [{ key: 'data.never', value: 'x' }] }] }] }));
    await victim.create(SECRETS, PLANTED.foreign.namespace, { ...attackerCredentials(ctx, PLANTED.foreign.namespace, PLANTED.foreign.name, 'foreigntok-never-sent'), metadata: { ...PLANTED.foreign } });
    await this.plantEntries();
    await this.takeReference();
  }

  /** Events expire (an hour by default): the planted one is made again when it went. */
  async plantEvent(): Promise<void> {
    if (await getOrUndefined(this.peer, EVENTS, NS.src, PLANTED.event)) return;
    await this.peer.create(EVENTS, NS.src, { apiVersion: 'v1', kind: 'Event', metadata: { name: PLANTED.event, namespace: NS.src }, involvedObject: { kind: 'ConfigMap', namespace: NS.src, name: 'src-0' }, reason: 'Forged', message: 'forged', type: 'Warning' });
  }

  /**
   * The member that is away delivered its entry to both members before it went (owned by it,
   * recorded as read from it); its API server is gone now. The victim's admin has described a
   * cluster that will join later, first-hand, as `join` writes it. Their credentials lead nowhere;
   * the attacker's copy holds a token of its own, so what the attacker's own controller sends is
   * never taken for the victim's.
   */
  private async plantEntries(): Promise<void> {
    const { ctx } = this.d;
    const ca = b64((await generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] })).caCert);
    const kubeconfig = (token: string): string =>
      b64(JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: NOWHERE, 'certificate-authority-data': ca } }], users: [{ name: 'u', user: { token } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }));
    const delivered = (kind: string, group: string, name: string, namespace: string, ruleName: string): KubeObject['metadata'] => ({
      name,
      ...(namespace ? { namespace } : {}),
      labels: { [LABELS.ownership]: ctx.ghostID },
      annotations: { [ANNOTATIONS.ownership]: ctx.ghostID, [ANNOTATIONS.source]: formatSourceIdentity({ clusterID: ctx.ghostID, group, kind, namespace, name, rule: ruleName }) },
    });
    const entry = (name: string, id: string, metadata: KubeObject['metadata']): Cluster => ({
      apiVersion: API_GROUP_VERSION,
      kind: KINDS.cluster,
      metadata,
      spec: { clusterID: id, authInfo: { secretRef: { name, namespace: ctx.namespace } }, kubernetesApiEndpoints: [{ serverAddress: NOWHERE, caBundle: ca }] },
    });
    const credentials = (name: string, token: string, metadata: KubeObject['metadata']): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata, type: CLUSTER_SECRET.type, data: { [CLUSTER_SECRET.kubeconfigKey]: kubeconfig(token) } });
    for (const [rest, token] of [[this.victim, 'ghosttok-victims-copy'], [this.peer, `${ctx.tokenPrefix}ghostattackerscopy`]] as const) {
      await rest.create(SECRETS, ctx.namespace, credentials(GHOST, token, delivered('Secret', '', GHOST, ctx.namespace, `${BUILTIN_PREFIX}peer-credentials`)));
      await rest.create(CLUSTERS, undefined, entry(GHOST, ctx.ghostID, delivered(KINDS.cluster, API_GROUP, GHOST, '', `${BUILTIN_PREFIX}peer-cluster`)));
    }
    await this.victim.create(SECRETS, ctx.namespace, credentials(FUTURE, 'futuretok-never-sent', { name: FUTURE, namespace: ctx.namespace }));
    await this.victim.create(CLUSTERS, undefined, entry(FUTURE, ctx.futureID, { name: FUTURE }));
  }

  /** The victim's registry as the run starts: what it must keep. */
  private async takeReference(): Promise<void> {
    const { ctx } = this.d;
    const clusters = (await this.victim.listAll<Cluster>(CLUSTERS)).items;
    this.held = [];
    for (const name of [VICTIM, PEER, GHOST, FUTURE]) {
      const c = clusters.find((x) => x.metadata.name === name);
      const ref = c?.spec.authInfo?.secretRef;
      if (!c || !ref?.name || !ref.namespace) throw new Error(`${VICTIM} holds no entry ${name} naming its credentials`);
      const secret = await this.victim.get<Secret>(SECRETS, ref.namespace, ref.name);
      this.held.push({ cluster: name, reach: reach(c), secret: { namespace: ref.namespace, name: ref.name }, target: credentialsTarget(secret) });
    }
    this.speakers = new Map([ctx.victimID, ctx.peerID, ctx.ghostID, ctx.futureID].map((id) => [id, speakerFor(clusters, id)?.metadata.name ?? '']));
  }

  /** Starts watching the victim's controller: /healthz answers and RSS against its bound. */
  /**
   * Starts watching the victim's controller: /healthz answers and RSS against its bound, which is
   * what it held outside its heap once set up, its heap at the cap (the caches of peers within
   * their budget, templates within theirs, live there) and young generation, and what its
   * listeners may buffer outside the heap.
   */
  async startMonitor(healthAddr: string, pid: number): Promise<void> {
    this.monitor = new Monitor(`http://${healthAddr}/healthz`, pid);
    const baseline = rss(pid);
    const { heapTotal } = await this.scrape();
    this.rssBound = baseline - heapTotal + CHART_MEMORY.heapMiB * MiB + YOUNG_GENERATION + OFF_HEAP_GROWTH;
    this.figures.rssBoundMiB = Math.round(this.rssBound / MiB);
    // What the budgets allow must fit the chart's limit, or a pod would be killed within them.
    if (this.rssBound > CHART_MEMORY.limitMiB * MiB) this.d.violation('memory', `${VICTIM}'s budgets allow ${this.figures.rssBoundMiB} MiB resident, past the chart's ${CHART_MEMORY.limitMiB}Mi limit`);
    this.d.log(`  ${VICTIM}'s controller: ${(baseline / MiB).toFixed(0)} MiB resident once set up (heap ${(heapTotal / MiB).toFixed(0)} MiB); its bound ${this.figures.rssBoundMiB} MiB`);
    this.monitor.start();
  }

  stopMonitor(): void {
    this.monitor?.stop();
  }

  // ------------------------------------------------------------------ invariants

  /** Every invariant of the trust boundary on the victim; the window of healthz and RSS samples ends. */
  async check(): Promise<void> {
    const { violation } = this.d;
    if (this.monitor) {
      const w = this.monitor.take();
      // A controller that is gone has no metrics: the run reports the crash itself.
      const m = await this.scrape().catch(() => undefined);
      if (!m) return;
      const lagMs = Math.round(m.lagMaxSeconds * 1000);
      const memory = `heap ${(m.heapUsed / MiB).toFixed(0)}/${(m.heapTotal / MiB).toFixed(0)} MiB, external ${(m.external / MiB).toFixed(0)} MiB, ${m.peerObjects} objects of ${PEER} cached`;
      this.d.log(`  ${VICTIM}'s controller since the last look: ${(w.peakRss / MiB).toFixed(0)} MiB resident at most, event loop held ${lagMs} ms at most, /healthz within ${Math.round(w.worstMs)} ms; now ${memory}`);
      this.figures.maxHealthzMs = Math.max(this.figures.maxHealthzMs, Math.round(this.monitor.maxMs));
      this.figures.maxEventLoopMs = Math.max(this.figures.maxEventLoopMs, lagMs);
      this.figures.peakRssMiB = Math.max(this.figures.peakRssMiB, Math.round(this.monitor.peakRss / MiB));
      if (lagMs > FREEZE_MS) violation('freeze', `${VICTIM}'s controller held its event loop for ${lagMs} ms (more than ${FREEZE_MS} ms)`);
      if (w.worstMs > HEALTHZ_MS) violation('freeze', `${VICTIM}'s /healthz took ${Math.round(w.worstMs)} ms to answer (more than ${HEALTHZ_MS} ms; its event loop held at most ${lagMs} ms)`);
      if (w.failures.length > 0) violation('freeze', `${VICTIM}'s /healthz failed ${w.failures.length} times: ${w.failures.slice(0, 3).join('; ')}`);
      if (w.peakRss > this.rssBound) violation('memory', `${VICTIM}'s controller reached ${(w.peakRss / MiB).toFixed(0)} MiB resident, past the ${(this.rssBound / MiB).toFixed(0)} MiB its budgets allow (now ${memory})`);
    }
    await this.checkRegistry();
    await this.checkCopies();
  }

  /**
   * What the victim's controller says of itself now: its heap, buffers and cached objects of the
   * attacker, and how long its event loop was held at most since the last look (its metric starts
   * over at each scrape, and only the run scrapes it).
   */
  private async scrape(): Promise<{ heapUsed: number; heapTotal: number; external: number; peerObjects: number; lagMaxSeconds: number }> {
    const sum = async (name: string, labels: Record<string, string> = {}): Promise<number> => controllerMetric(this.d.g.sandbox, VICTIM, name, labels);
    const lagMaxSeconds = await sum('nodejs_eventloop_lag_max_seconds');
    return { heapUsed: await sum('nodejs_heap_size_used_bytes'), heapTotal: await sum('nodejs_heap_size_total_bytes'), external: await sum('nodejs_external_memory_bytes'), peerObjects: await sum('informer_objects', { cluster: PEER }), lagMaxSeconds };
  }

  /** Entries keep their reach, their credentials their server; no second entry of an ID second-hand; the same entries speak. */
  private async checkRegistry(): Promise<void> {
    const { violation, ctx } = this.d;
    const clusters = (await this.victim.listAll<Cluster>(CLUSTERS)).items;
    for (const h of this.held) {
      const c = clusters.find((x) => x.metadata.name === h.cluster);
      const now = reach(c);
      const secret = await getOrUndefined<Secret>(this.victim, SECRETS, h.secret.namespace, h.secret.name);
      const target = secret && credentialsTarget(secret);
      if (now === h.reach && target === h.target) continue;
      // A member may move itself (the hostile entry round does, and puts it back): first-hand.
      if (h.cluster === PEER && (await this.movedItself(now, target))) continue;
      if (now !== h.reach) violation('entry-moved', `${VICTIM}'s entry ${h.cluster} is reached at ${now} now, not ${h.reach}`);
      if (target !== h.target) violation('entry-moved', `${VICTIM}'s credentials ${h.secret.name} for ${h.cluster} send their token to ${String(target)} now, not ${String(h.target)}`);
    }
    for (const [id, name] of this.speakers) {
      const now = speakerFor(clusters, id)?.metadata.name ?? '';
      if (now !== name) violation('identity-squatted', `Cluster ${now} speaks for ${id} on ${VICTIM} now, not ${name}`);
      for (const c of clusters) {
        if (c.spec?.clusterID !== id || c.metadata.name === name) continue;
        const from = parseSourceIdentity(c.metadata.annotations?.[ANNOTATIONS.source])?.clusterID;
        // A member may describe itself twice (the newer one then fails); no one else may add an entry of it.
        if (from !== id) violation('identity-squatted', `${VICTIM} holds a second Cluster ${c.metadata.name ?? ''} for ${id === ctx.victimID ? 'itself' : id}, delivered by ${from ?? 'no one'}`);
      }
    }
  }

  /** Whether the attacker's own entry, as it has it now, is reached as `reach` with credentials for `target`. */
  private async movedItself(now: string, target: string | undefined): Promise<boolean> {
    const own = await this.peer.get<Cluster>(CLUSTERS, undefined, PEER);
    const ref = own.spec.authInfo?.secretRef;
    const secret = ref?.name && ref.namespace ? await getOrUndefined<Secret>(this.peer, SECRETS, ref.namespace, ref.name) : undefined;
    return reach(own) === now && (secret && credentialsTarget(secret)) === target;
  }

  /** Copies: named, within their rule's budget, never of our own kinds or Events, and into the controller namespace only what it may receive. */
  private async checkCopies(): Promise<void> {
    const { violation, ctx } = this.d;
    const v = this.victim;
    const copiesOf = async (ref: ResourceRef): Promise<KubeObject[]> => (await v.listAll(ref, { labelSelector: LABELS.ownership })).items;
    const [configMaps, secrets, deployments, events] = await Promise.all([copiesOf(CONFIGMAPS), copiesOf(SECRETS), copiesOf(DEPLOYMENTS), copiesOf(EVENTS)]);
    // Our own kinds are few: every one is looked at, marked or not.
    const [hubRules, features] = await Promise.all([v.listAll(HUB_SYNC_RULES), v.listAll(CLUSTER_FEATURES)]);
    const copies = [...configMaps, ...secrets, ...deployments];
    this.figures.copiesChecked += copies.length;
    // Per rule and peer, the copies it may have made (none older than the rule: those it took
    // over), by namespace; per peer, what all rules' copies from it hold.
    const ruleMade = new Map((await v.listAll(RESOURCE_SYNC_RULES)).items.map((r) => [r.metadata.name ?? '', r.metadata.creationTimestamp ?? '']));
    const perRule = new Map<string, Map<string, number>>();
    const perPeer = new Map<string, { objects: number; bytes: number }>();
    for (const o of copies) {
      const what = `${o.kind ?? ''} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
      if (o.metadata.generateName !== undefined) violation('nameless-copy', `${VICTIM} holds the copy ${what} written with generateName ${o.metadata.generateName}`);
      const source = parseSourceIdentity(o.metadata.annotations?.[ANNOTATIONS.source]);
      if (!source?.rule) continue;
      const p = perPeer.get(source.clusterID) ?? { objects: 0, bytes: 0 };
      perPeer.set(source.clusterID, { objects: p.objects + 1, bytes: p.bytes + JSON.stringify(o).length });
      // RFC 3339 in UTC with second precision: text order is time order.
      if ((o.metadata.creationTimestamp ?? '') < (ruleMade.get(source.rule) ?? '')) continue;
      const key = `${source.rule} from ${source.clusterID}`;
      const byNamespace = perRule.get(key) ?? new Map<string, number>();
      byNamespace.set(o.metadata.namespace ?? '', (byNamespace.get(o.metadata.namespace ?? '') ?? 0) + 1);
      perRule.set(key, byNamespace);
    }
    for (const [r, byNamespace] of perRule) {
      const n = [...byNamespace.values()].reduce((a, b) => a + b, 0);
      if (n > FLOOD.ruleMaxCopies + COPY_SLACK) violation('copy-budget', `rule ${r} holds ${n} copies on ${VICTIM} (${[...byNamespace].map(([ns, k]) => `${k} in ${ns}`).join(', ')}), past its budget of ${FLOOD.ruleMaxCopies} (and ${COPY_SLACK} creates on their way)`);
    }
    // Writes on their way when the budget filled may land past it, each at most an object's size.
    for (const [peer, p] of perPeer) {
      if (p.objects > PEER_CACHE.maxObjects + COPY_SLACK || p.bytes > PEER_CACHE.maxBytes + COPY_SLACK * 1.5 * MiB) {
        violation('copy-budget', `the copies ${VICTIM} holds from ${peer} come to ${p.objects} objects and ${(p.bytes / MiB).toFixed(1)} MiB, past the ${PEER_CACHE.maxObjects} objects and ${(PEER_CACHE.maxBytes / MiB).toFixed(0)} MiB its caches of a peer may hold (and ${COPY_SLACK} writes on their way)`);
      }
    }
    for (const o of [...events, ...hubRules.items, ...features.items]) {
      if (o.metadata.annotations?.[ANNOTATIONS.ownership] !== undefined || o.metadata.labels?.[LABELS.ownership] !== undefined) violation('own-kind-copied', `${VICTIM} holds a copy of ${o.kind ?? ''} ${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
    }
    // The controller namespace: everything there, marked or not, is looked at.
    const here = (await Promise.all([SECRETS, CONFIGMAPS, DEPLOYMENTS].map(async (ref) => (await v.listAll(ref, { namespace: ctx.namespace })).items))).flat();
    for (const o of here) {
      const problem = controllerNamespaceProblem(o, ctx);
      if (problem) violation('controller-namespace', `${VICTIM}'s controller namespace holds ${o.kind ?? ''} ${o.metadata.name ?? ''}: ${problem}`);
    }
  }

  /**
   * The squats a batch made, judged on the victim once its verdicts are in: a squat of an ID the
   * victim describes is left out and counted as not synced in the core rule's status; one of an ID
   * no one describes may be taken (second-hand entries introduce clusters never described here).
   */
  async checkSquats(squats: readonly { name: string; whose: Squatted }[]): Promise<void> {
    if (squats.length === 0) return;
    const described = squats.filter((s) => s.whose === 'ghost' || s.whose === 'future');
    let counted = 0;
    const settled = await until(async () => {
      const r = await this.victim.get<ResourceSyncRule>(RESOURCE_SYNC_RULES, undefined, CORE_RULE_NAMES.clusters);
      counted = r.status?.clusters?.find((c) => c.name === PEER)?.failed ?? 0;
      return counted >= described.length;
    }, 30_000);
    if (!settled) this.d.violation('unreported', `${described.length} Clusters of ${PEER} squat IDs ${VICTIM} describes, yet its rule ${CORE_RULE_NAMES.clusters} counts ${counted} objects from ${PEER} not synced`);
    for (const s of squats) {
      const taken = await getOrUndefined(this.victim, CLUSTERS, undefined, s.name);
      if (taken) this.figures.squatsTaken++;
      else this.figures.squatsRefused++;
    }
  }

  /** A squat the victim took is its own now: its admin deletes it, with its credentials, as an admin would. */
  async removeTakenSquats(names: readonly string[]): Promise<void> {
    for (const name of names) {
      for (const [ref, ns] of [[CLUSTERS, undefined], [SECRETS, this.d.ctx.namespace]] as const) {
        await this.victim.delete(ref, ns, name).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      }
    }
  }

  // ------------------------------------------------------------------ rounds

  /**
   * The attacker rewrites its copy of an entry it does not own (the away member's or the
   * victim's), keeping a fresh Ready heartbeat on it so that it seems to reach that cluster. The
   * victim must refuse whatever changes where and how that cluster is reached, and say so in its
   * log and the core rule's status; it may take a fresh token for the server already held.
   * Then the attacker's copies are put back.
   */
  async rewriteRound(r: EntryRewrite): Promise<void> {
    const { ctx } = this.d;
    this.figures.rewriteRounds++;
    const name = r.target === 'ghost' ? GHOST : VICTIM;
    const peer = this.peer;
    const cluster0 = await peer.get<Cluster>(CLUSTERS, undefined, name);
    const named = cluster0.spec.authInfo?.secretRef;
    if (!named?.name || !named.namespace) throw new Error(`${PEER}'s copy of ${name} names no credentials`);
    const ref = { name: named.name, namespace: named.namespace };
    const secret0 = await peer.get<Secret>(SECRETS, ref.namespace, ref.name);
    const victimsReader = (await this.victim.get<Cluster>(CLUSTERS, undefined, VICTIM)).spec.authInfo?.secretRef?.name ?? '';
    const token = `${ctx.tokenPrefix}rewrite${this.figures.rewriteRounds}`;
    const attacker = [{ serverAddress: ctx.tlsUrl, caBundle: ctx.tlsCaB64 }];
    const endpoints0 = cluster0.spec.kubernetesApiEndpoints ?? [];
    const spec: Partial<Cluster['spec']> | undefined = {
      endpoint: { kubernetesApiEndpoints: r.target === 'ghost' ? attacker : [{ serverAddress: NOWHERE, caBundle: ctx.tlsCaB64 }] },
      ca: { kubernetesApiEndpoints: endpoints0.map((e) => ({ ...e, caBundle: ctx.tlsCaB64 })) },
      'secret-ref': { authInfo: { secretRef: { namespace: ctx.namespace, name: 'fz-unnamed-credentials' } } },
      // Its copy of the victim's reader Secret: the credentials of another member (its endpoint stays where nothing listens).
      'secret-ref-of-another': { authInfo: { secretRef: { namespace: ctx.namespace, name: victimsReader } } },
      'secret-ref-elsewhere': { authInfo: { secretRef: { ...PLANTED.foreign } } },
      'endpoint-and-server': { kubernetesApiEndpoints: attacker },
      server: undefined,
      token: undefined,
    }[r.change];
    const sameServer = secret0.data?.[CLUSTER_SECRET.kubeconfigKey] && credentialsTarget(secret0);
    const data: Record<string, string> | undefined =
      r.change === 'server' || r.change === 'endpoint-and-server'
        ? attackerCredentials(ctx, ref.namespace, ref.name, token).data
        : r.change === 'token' && sameServer
          ? { [CLUSTER_SECRET.kubeconfigKey]: b64(retoken(Buffer.from(secret0.data?.[CLUSTER_SECRET.kubeconfigKey] ?? '', 'base64').toString(), token)) }
          : undefined;
    this.d.log(`  trust: ${PEER} rewrites its copy of ${name}'s entry (${r.change})`);
    const logFrom = logSize(this.victimLog);
    let beating = r.target === 'ghost';
    // Its own controller writes the status it sees; the attacker keeps writing a fresh Ready one over it.
    const heartbeat = (async () => {
      while (beating) {
        const now = await getOrUndefined<Cluster>(peer, CLUSTERS, undefined, name);
        if (now) await peer.updateStatus(CLUSTERS, undefined, { ...now, status: { ...now.status, ...readyStatus() } }).catch(() => undefined);
        await sleep(300);
      }
    })();
    try {
      // The Secret first: the attacker's own controller never pairs a victim's token with the attacker's server.
      if (data) await peer.patch(SECRETS, ref.namespace, ref.name, 'merge', { data });
      if (spec) await peer.patch(CLUSTERS, undefined, name, 'merge', { spec });
      if (r.target === 'victim') {
        // The victim never reads its own entry from a peer, so it says nothing. The attacker's own
        // controller, which reads the victim through that copy, shows the change went through: it
        // puts back the credentials it still reaches the victim with, and loses the victim when the
        // endpoint leads nowhere (then the copy is put back by hand below).
        const seen = await until(async () => {
          const [c, s] = await Promise.all([peer.get<Cluster>(CLUSTERS, undefined, name), peer.get<Secret>(SECRETS, ref.namespace, ref.name)]);
          return spec ? c.status?.state !== 'Ready' : JSON.stringify(s.data) === JSON.stringify(secret0.data);
        }, 60_000);
        if (!seen) this.d.log(`  trust: ${PEER}'s controller showed nothing of the rewrite of its copy of ${name} within 60 s`);
      } else if (r.change === 'token') {
        // A fresh token for the server already held may come second-hand.
        const taken = await until(async () => (await this.victim.get<Secret>(SECRETS, ref.namespace, ref.name)).data?.[CLUSTER_SECRET.kubeconfigKey] === data?.[CLUSTER_SECRET.kubeconfigKey], 60_000);
        if (taken) this.figures.rewritesTakenSameServer++;
        else this.d.violation('stall', `${VICTIM} did not take ${PEER}'s fresh token for ${name}'s server (the server it holds) within 60 s`);
      } else {
        const expected = REFUSALS[r.change];
        const said = await until(async () => this.refusalSaid(logFrom, name, expected), 60_000);
        if (said) this.figures.rewritesRefused++;
        else this.d.violation('unreported', `${VICTIM} did not report refusing ${PEER}'s rewrite of its copy of ${name} (${r.change}) within 60 s: no log line nor status matching ${String(expected)}`);
      }
    } finally {
      beating = false;
      await heartbeat;
      await peer.patch(CLUSTERS, undefined, name, 'merge', { spec: { kubernetesApiEndpoints: endpoints0, authInfo: cluster0.spec.authInfo ?? null } });
      await peer.patch(SECRETS, ref.namespace, ref.name, 'merge', { data: secret0.data });
    }
  }

  /** Whether the victim said it refused `name` for `why`: a log line of the failure, or the core rules' status (waits are said there only). */
  private async refusalSaid(logFrom: number, name: string, why: RegExp): Promise<boolean> {
    const text = readFileSync(this.victimLog).subarray(logFrom).toString('utf8');
    for (const line of text.split('\n')) if (line.includes('"msg":"object not synced"') && line.includes(`"peer":"${PEER}"`) && line.includes(`${name}:`) && why.test(line)) return true;
    for (const r of [CORE_RULE_NAMES.clusters, CORE_RULE_NAMES.clusterSecrets]) {
      const rule = await this.victim.get<ResourceSyncRule>(RESOURCE_SYNC_RULES, undefined, r);
      const last = rule.status?.clusters?.find((c) => c.name === PEER)?.lastError ?? '';
      if (last.includes(`${name}:`) && why.test(last)) return true;
    }
    return false;
  }

  /**
   * The attacker serves more than the victim's cache of it may hold: ConfigMaps near the 1 MiB
   * limit where a standing rule of the victim reads, and ClusterFeatures at the annotation limit.
   * The victim must say so on its Cluster of the attacker (condition and Warning Event), stay
   * within its memory bound and keep answering, and read the attacker again once it fits.
   */
  async oversizeRound(): Promise<void> {
    this.figures.oversizeRounds++;
    const peer = this.peer;
    this.d.log(`  trust: ${PEER} serves ${BULK.configMaps} ConfigMaps of ${(BULK.bytes / MiB).toFixed(2)} MiB and ${BULK.features} large ClusterFeatures`);
    const pad = 'b'.repeat(BULK.bytes);
    const features = Array.from({ length: BULK.features }, (_, i) => `fz-bulky-${i}`);
    try {
      for (const name of features) await peer.create(CLUSTER_FEATURES, undefined, { apiVersion: API_GROUP_VERSION, kind: KINDS.clusterFeature, metadata: { name, annotations: { pad: 'f'.repeat(250 * 1024) } }, spec: { featureName: name } });
      for (let i = 0; i < BULK.configMaps; i++) await peer.create(CONFIGMAPS, NS.bulk, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `bulk-${i}`, namespace: NS.bulk }, data: { pad } });
      const over = await untilValue(async () => {
        const c = await this.victim.get<Cluster>(CLUSTERS, undefined, PEER);
        return c.status?.conditions?.find((x) => x.type === 'PeerCacheWithinBudget' && x.status === 'False') ? c : undefined;
      }, 90_000);
      if (!over) this.d.violation('unreported', `${VICTIM} did not report ${PEER} past its cache budget (PeerCacheWithinBudget=False) within 90 s of ${((BULK.configMaps * BULK.bytes) / MiB).toFixed(0)} MiB served`);
      else {
        const message = over.status?.conditions?.find((x) => x.type === 'PeerCacheWithinBudget')?.message ?? '';
        let said: boolean | 'rate-limited' = false;
        await until(async () => {
          const events = (await this.victim.list<CoreEvent>(EVENTS, { namespace: 'default' })).items;
          said = this.d.reported(events, over.metadata.uid ?? '', message.slice(0, 100));
          return said !== false;
        }, 30_000);
        if (said === false) this.d.violation('unreported', `no Warning Event on ${VICTIM}'s Cluster ${PEER} naming its cache budget: ${message.slice(0, 200)}`);
      }
    } finally {
      for (let i = 0; i < BULK.configMaps; i++) await peer.delete(CONFIGMAPS, NS.bulk, `bulk-${i}`).catch(() => undefined);
      for (const name of features) await peer.delete(CLUSTER_FEATURES, undefined, name).catch(() => undefined);
    }
    const back = await until(async () => (await this.victim.get<Cluster>(CLUSTERS, undefined, PEER)).status?.conditions?.some((x) => x.type === 'PeerCacheWithinBudget' && x.status === 'True') ?? false, 180_000);
    if (!back) this.d.violation('stall', `${VICTIM} did not read ${PEER} within its cache budget again within 180 s of the bulk going`);
  }

  /**
   * Slow, large requests held open against the victim's webhook while a batch runs (its Cluster
   * writes go through that webhook). Returns the end of the attack: the requests still open are
   * dropped, and what the webhook refused is counted.
   */
  holdWebhook(): () => Promise<void> {
    this.figures.listenerRounds++;
    const controller = this.d.g.sandbox.cluster(VICTIM).extras[0];
    const port = Number(controller?.process.spec.args.find((a) => a.startsWith('--cluster-validator-webhook-port='))?.split('=')[1]);
    const head = (framing: string): string => `POST ${WELL_KNOWN.webhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
    const held: Held[] = Array.from({ length: SLOW.requests }, (_, i) => (i % 2 === 0 ? holdOpen(overTls(port), head(`Content-Length: ${WEBHOOK_LIMITS.maxBodyBytes - 1}`), SLOW.bytes, false) : holdOpen(overTls(port), head('Transfer-Encoding: chunked'), SLOW.bytes, true)));
    return async () => {
      for (const h of held) h.drop();
      for (const a of await Promise.all(held.map((h) => h.closed))) if (a.status === 503 || a.status === 408 || a.status === 413) this.figures.listenerRefused++;
    };
  }
}

/** What the victim says when it refuses each rewrite of the away member's entry. */
const REFUSALS: Record<EntryRewrite['change'], RegExp> = {
  endpoint: /changed only by that cluster itself/,
  ca: /changed only by that cluster itself/,
  'secret-ref': /changed only by that cluster itself/,
  'secret-ref-of-another': /the credentials of another member/,
  'secret-ref-elsewhere': /credentials are read only from the controller namespace/,
  server: /taken only from that cluster itself/,
  'endpoint-and-server': /changed only by that cluster itself|taken only from that cluster itself/,
  token: /$^/,
};

/** Why an object in the victim's controller namespace may not be there, or undefined. */
function controllerNamespaceProblem(o: KubeObject, ctx: FuzzContext): string | undefined {
  const name = o.metadata.name ?? '';
  if (name.startsWith('sh.helm.release.')) return "a name Helm keeps a release's state under";
  const owner = o.metadata.annotations?.[ANNOTATIONS.ownership];
  if (owner === undefined) return undefined;
  if (o.kind !== 'Secret') return 'a copy of a kind the controller namespace never receives';
  if (name === ctx.webhookSecret) return "a copy over the webhook's own Secret";
  const type = (o as Secret).type ?? 'Opaque';
  if (type === 'Opaque') return undefined;
  if (type !== CLUSTER_SECRET.type) return `a copy of type ${type}`;
  const by = parseSourceIdentity(o.metadata.annotations?.[ANNOTATIONS.source])?.rule;
  return by === undefined || by === CORE_RULE_NAMES.clusterSecrets || by === `${BUILTIN_PREFIX}peer-credentials` ? undefined : `registry credentials delivered by rule ${by}`;
}

/** The kubeconfig with its token replaced (the same server, CA and server name). */
function retoken(kubeconfig: string, token: string): string {
  const config = JSON.parse(kubeconfig) as { users?: { user?: Record<string, unknown> }[] };
  for (const u of config.users ?? []) if (u.user) u.user['token'] = token;
  return JSON.stringify(config);
}

function logSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Polls `check` every `everyMs` until it returns true or the deadline passes; false then. */
export async function until(check: () => Promise<boolean>, deadlineMs: number, everyMs = 1_000): Promise<boolean> {
  return (await untilValue(async () => ((await check()) ? true : undefined), deadlineMs, everyMs)) ?? false;
}

/** Polls `check` until it returns a value or the deadline passes; undefined then. */
async function untilValue<T>(check: () => Promise<T | undefined>, deadlineMs: number, everyMs = 1_000): Promise<T | undefined> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() >= end) return undefined;
    await sleep(everyMs);
  }
}

// The engine over the runtime it runs on (REST clients, informers, discovery), against API servers
// in memory: one here and one per peer, the peers announced, closed and made to answer by the test
// as the peer manager would. What the engine does is seen where a member sees it: copies and rule
// statuses on the local server, the Events it records, and the orphan collector's sweeps.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ANNOTATIONS, CLUSTERS, CORE_RULE_NAMES, coreClusterFeature, coreResourceSyncRules, formatSourceIdentity, LABELS, SYNC_EVENT_REASONS, type SourceIdentity } from '../core/api/index.ts';
import { BUILTIN_PREFIX, runThrough } from '../core/rules/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec, ResourceSyncRuleStatus, RuleClusterStatus } from '../core/api/types.ts';
import { chargedSize, Discovery, EventRecorder, InformerFactory, registry, silentLogger, type EventType, type Informer } from '../kube/index.ts';
import { eventually } from '../../test/support/eventually.ts';
import { MemoryApiServer, type ServedKind } from '../../test/support/sync-apiserver.ts';
import type { SyncPeer } from './binding.ts';
import { SyncEngine, type PeerSource, type SyncSettings } from './engine.ts';

const LOCAL_ID = 'local-uid';
const NAMESPACE = 'cluster-registry';
const REGISTRY = 'clusterregistry.k8s.cisco.com/v1alpha1';
const SETTINGS: SyncSettings = {
  workers: 2,
  rateLimit: { ratePerSecond: 1000, burst: 1000, maxKeys: 10_000 },
  gcGracePeriodMs: 300,
  gcIntervalMs: 50,
  statusIntervalMs: 50,
  maxCopiesPerRule: 100,
  copiesPerPeer: { maxObjects: 1000, maxBytes: 2 ** 30 },
  relaySettleMs: 0,
};
/** How long a condition the engine reaches by itself is waited for. */
const WAIT_MS = 10_000;
const WIDGETS: ServedKind = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };

/** The peers as the peer manager announces them: opened, closed, and which of them answer. */
class Peers implements PeerSource {
  private readonly alive = new Set<string>();
  private readonly open = new Map<string, SyncPeer>();
  private readonly listeners = new Set<Parameters<PeerSource['subscribe']>[0]>();

  subscribe(listener: Parameters<PeerSource['subscribe']>[0]): () => void {
    this.listeners.add(listener);
    for (const p of this.open.values()) listener.opened(p);
    return () => this.listeners.delete(listener);
  }
  aliveIDs(): ReadonlySet<string> {
    return this.alive;
  }
  opened(peer: SyncPeer): void {
    this.open.set(peer.name, peer);
    for (const l of this.listeners) l.opened(peer);
  }
  closed(name: string): void {
    this.open.delete(name);
    for (const l of this.listeners) l.closed(name);
  }
  /** The clusters with these IDs answer, and no other. */
  answering(...ids: string[]): void {
    this.alive.clear();
    for (const id of ids) this.alive.add(id);
    for (const l of this.listeners) l.healthChanged();
  }
}

/** The Events recorded, as (object, type, reason, message). */
class RecordedEvents extends EventRecorder {
  readonly seen: { object: string; type: EventType; reason: string; message: string }[] = [];
  override event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    this.seen.push({ object: obj.metadata.name ?? '', type, reason, message });
  }
}

/** A cluster's API server with clients over it (its informers running until `signal`). */
async function apiServer(name: string, signal: AbortSignal): Promise<{ server: MemoryApiServer; factory: InformerFactory; discovery: Discovery }> {
  const server = await MemoryApiServer.start();
  const discovery = new Discovery(server.rest);
  const factory = new InformerFactory({ cluster: name, rest: server.rest, discovery, logger: silentLogger });
  factory.start(signal);
  return { server, factory, discovery };
}

function cluster(name: string, id: string): Cluster {
  return { apiVersion: REGISTRY, kind: 'Cluster', metadata: { name }, spec: { clusterID: id } };
}

/** A Cluster that says its cluster was Ready at `heartbeat` (ms). */
function readyCluster(name: string, id: string, heartbeat: number): Cluster {
  const at = new Date(heartbeat).toISOString();
  return { ...cluster(name, id), status: { state: 'Ready', conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: at, lastTransitionTime: at }] } };
}

/** A rule taking every ConfigMap, unless `spec` says otherwise. */
function rule(name: string, spec: Partial<ResourceSyncRuleSpec> = {}): ResourceSyncRule {
  return { apiVersion: REGISTRY, kind: 'ResourceSyncRule', metadata: { name, generation: 1 }, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{}], ...spec } };
}

/** A rule taking the ConfigMaps of these namespaces. */
function ruleIn(name: string, namespaces: string[]): ResourceSyncRule {
  return rule(name, { rules: [{ match: [{ namespaces }] }] });
}

function configMap(name: string, o: { namespace?: string; owner?: string; deleting?: boolean } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: o.namespace ?? 'ns', name, ...(o.owner ? { annotations: { [ANNOTATIONS.ownership]: o.owner } } : {}), ...(o.deleting ? { deletionTimestamp: new Date().toISOString() } : {}) },
    data: { k: 'v' },
  };
}

/** The place of ConfigMap ns/`name` (in a request for it, or asking a server what it holds there). */
function place(name: string, namespace = 'ns'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name } };
}

/**
 * How many times a binding of a rule reading `resource` tried to start on the peer: each attempt
 * asks the peer first whether it may get that resource.
 */
function attempts(peer: { server: MemoryApiServer }, resource: string): number {
  return peer.server.requests.filter((r) => {
    const review = r.body as { spec?: { resourceAttributes?: { resource?: string; verb?: string } } } | undefined;
    return r.path.endsWith('/selfsubjectaccessreviews') && review?.spec?.resourceAttributes?.resource === resource && review.spec.resourceAttributes.verb === 'get';
  }).length;
}

/** Orphan sweeps completed so far in this process. */
async function sweeps(): Promise<number> {
  return (await registry.getSingleMetric('cluster_registry_orphan_sweeps_total')?.get())?.values[0]?.value ?? 0;
}

interface Member {
  readonly server: MemoryApiServer;
  readonly peer: SyncPeer;
}

/** A sync engine over a local API server, with members the test registers, opens, closes and makes answer. */
class Harness {
  readonly local: MemoryApiServer;
  readonly engine: SyncEngine;
  readonly peers = new Peers();
  readonly events: RecordedEvents;
  /** The registry's informer the engine is given. */
  readonly clusters: Informer<Cluster>;
  private readonly settings: SyncSettings;
  private readonly stop: AbortController;
  private readonly members: Member[] = [];
  private readonly running: Promise<void>;

  private constructor(local: Awaited<ReturnType<typeof apiServer>>, stop: AbortController, settings: SyncSettings) {
    this.local = local.server;
    this.settings = settings;
    this.stop = stop;
    this.events = new RecordedEvents({ rest: local.server.rest, component: 'test' });
    this.clusters = local.factory.forResource<Cluster>({ ...CLUSTERS });
    this.engine = new SyncEngine({
      local: local.server.rest,
      localFactory: local.factory,
      localDiscovery: local.discovery,
      localClusterID: LOCAL_ID,
      namespace: NAMESPACE,
      reserved: [],
      closedNamespaces: [],
      peers: this.peers,
      clusters: this.clusters,
      events: this.events,
      settings,
      log: silentLogger,
    });
    this.running = this.engine.start(stop.signal);
  }

  /** `before` runs on the local API server before the engine starts. */
  static async start(o: { settings?: Partial<SyncSettings>; before?: (local: MemoryApiServer) => void } = {}): Promise<Harness> {
    const stop = new AbortController();
    const local = await apiServer('local', stop.signal);
    for (const ns of ['ns', 'other']) local.server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    o.before?.(local.server);
    return new Harness(local, stop, { ...SETTINGS, ...o.settings });
  }

  /** A member of the group with that name and ID: registered here unless told, not yet a peer. */
  async member(name: string, o: { id?: string; registered?: boolean } = {}): Promise<Member> {
    const id = o.id ?? `${name}-uid`;
    const { server, factory, discovery } = await apiServer(name, this.stop.signal);
    const m = { server, peer: { name, id, clients: { rest: server.rest, informers: factory, discovery } } };
    this.members.push(m);
    if (o.registered ?? true) this.local.put(cluster(name, id));
    return m;
  }

  /** A member registered here, opened as a peer and answering (with those that already answer). */
  async peer(name: string, o: { id?: string } = {}): Promise<Member> {
    const m = await this.member(name, o);
    this.peers.opened(m.peer);
    this.peers.answering(...this.engine.aliveIDs(), m.peer.id);
    return m;
  }

  /** Rule r bound on peers a and b, active on both. */
  async boundOnTwoPeers(): Promise<void> {
    await this.peer('a');
    await this.peer('b');
    this.local.put(rule('r'));
    await eventually('the rule active on both peers', () => this.phases('r') === 'a:active,b:active', WAIT_MS);
  }

  /** Peer a, its ConfigMap ns/x, and the copy rule r made of it here. */
  async copied(): Promise<Member> {
    const a = await this.peer('a');
    a.server.put(configMap('x'));
    this.local.put(rule('r'));
    await eventually('the copy made', () => this.copy('x'), WAIT_MS);
    return a;
  }

  /** Every binding of the rule, as `peer:phase`, sorted. */
  phases(ruleName: string): string {
    return this.engine
      .bindingsOf(ruleName)
      .map((b) => `${b.peer.name}:${b.phase}`)
      .sort()
      .join();
  }

  /** The local copy at ns/`name`, if there is one. */
  copy(name: string, namespace = 'ns'): KubeObject | undefined {
    return this.local.get(place(name, namespace));
  }

  /** The rule's status as last written here. */
  status(ruleName: string): ResourceSyncRuleStatus | undefined {
    return (this.local.get({ apiVersion: REGISTRY, kind: 'ResourceSyncRule', metadata: { name: ruleName } }) as ResourceSyncRule | undefined)?.status;
  }

  /** The rule's status for that peer, as last written here. */
  statusOn(ruleName: string, peer: string): RuleClusterStatus | undefined {
    return this.status(ruleName)?.clusters?.find((c) => c.name === peer);
  }

  /**
   * Waits until a whole grace period from now is over and the orphan collector has swept twice
   * since: what it would collect of what is there now, it has collected.
   */
  async swept(): Promise<void> {
    const graceOver = Date.now() + this.settings.gcGracePeriodMs;
    await eventually('the grace period over', () => Date.now() > graceOver, WAIT_MS);
    const target = (await sweeps()) + 2;
    await eventually('two more sweeps', async () => (await sweeps()) >= target, WAIT_MS);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.running;
    for (const m of this.members) m.server.close();
    this.local.close();
  }
}

/** The copy ns/`name` is still there, and nothing was deleted here. */
function assertKept(h: Harness, name: string): void {
  assert.ok(h.copy(name), 'the copy is still there');
  assert.deepEqual(
    h.local.requests.filter((r) => r.method === 'DELETE').map((r) => r.path),
    [],
  );
}

/** Runs `body` over a fresh engine, stopped whatever happens. */
async function withEngine(body: (h: Harness) => Promise<void>, o: Parameters<typeof Harness.start>[0] = {}): Promise<void> {
  const h = await Harness.start(o);
  try {
    await body(h);
  } finally {
    await h.close();
  }
}

/** What the peer's copy of `name` records, and the copy itself as we would hold it at `at`. */
function recorded(peer: Member, name: string, o: { rule?: string; at?: string; owner?: string } = {}): { id: SourceIdentity; copy: KubeObject } {
  const id: SourceIdentity = { clusterID: peer.peer.id, group: '', kind: 'ConfigMap', namespace: 'ns', name, ...(o.rule === '' ? {} : { rule: o.rule ?? 'r' }) };
  const owner = o.owner ?? peer.peer.id;
  const copy: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: 'ns', name: o.at ?? name, labels: { [LABELS.ownership]: owner }, annotations: { [ANNOTATIONS.ownership]: owner, [ANNOTATIONS.source]: formatSourceIdentity(id) } },
  };
  return { id, copy };
}

describe('SyncEngine', () => {
  describe('rules', () => {
    it('binds a rule made here on every open peer', () =>
      withEngine(async (h) => {
        await h.boundOnTwoPeers();
      }));

    it('binds a rule whose spec changed again on every peer, as the new spec says', () =>
      withEngine(async (h) => {
        await h.boundOnTwoPeers();
        const before = h.engine.bindingsOf('r');
        h.local.put(ruleIn('r', ['ns']));
        await eventually('the changed rule active on both peers', () => h.phases('r') === 'a:active,b:active' && h.engine.bindingsOf('r').every((b) => !before.includes(b)), WAIT_MS);
        for (const b of h.engine.bindingsOf('r')) assert.deepEqual(b.rule.spec.rules, [{ match: [{ namespaces: ['ns'] }] }], b.peer.name);
      }));

    it('keeps the bindings of a rule whose metadata alone changed', () =>
      withEngine(async (h) => {
        await h.peer('a');
        h.local.put(rule('r'));
        await eventually('the rule active', () => h.phases('r') === 'a:active', WAIT_MS);
        const before = h.engine.binding('r', 'a');
        h.local.put({ ...rule('r'), metadata: { name: 'r', generation: 1, labels: { team: 'x' } } });
        await eventually('the new labels seen', () => h.engine.rule('r')?.object?.metadata.labels?.['team'] === 'x', WAIT_MS);
        assert.equal(h.engine.binding('r', 'a'), before);
      }));

    it('unbinds a rule deleted here from every peer', () =>
      withEngine(async (h) => {
        await h.boundOnTwoPeers();
        h.local.remove(rule('r'));
        await eventually('the rule gone', () => h.engine.rule('r') === undefined, WAIT_MS);
        assert.deepEqual(h.engine.bindingsOf('r'), []);
      }));

    it('binds an invalid rule nowhere', () =>
      withEngine(async (h) => {
        await h.peer('a');
        h.local.put(rule('r', { rules: [{ match: [{ content: [{ key: '', value: 'x' }] }] }] }));
        await eventually('the rule read', () => h.engine.rule('r'), WAIT_MS);
        assert.equal(h.engine.rule('r')?.compiled, undefined);
        assert.deepEqual(h.engine.bindingsOf('r'), []);
      }));

    it('warns of an invalid rule with an Event that names its issues', () =>
      withEngine(async (h) => {
        h.local.put(rule('r', { rules: [{ match: [{ content: [{ key: '', value: 'x' }] }] }] }));
        const warning = await eventually('the warning', () => h.events.seen.find((e) => e.object === 'r'), WAIT_MS);
        assert.deepEqual({ type: warning.type, reason: warning.reason }, { type: 'Warning', reason: 'InvalidRule' });
        assert.match(warning.message, /spec\.rules\[0\]\.match\[0\]\.content\[0\]\.key.*must be a non-empty gjson path/);
      }));

    it('binds the built-in rules on every peer, with no ResourceSyncRule of them here', () =>
      withEngine(async (h) => {
        await h.peer('a');
        await eventually('the built-in rules active', () => h.phases('builtin/peer-cluster') === 'a:active' && h.phases('builtin/peer-credentials') === 'a:active', WAIT_MS);
      }));

    it('retries at once a binding waiting for a kind here when its CustomResourceDefinition becomes established', (t) =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.serve(WIDGETS);
        h.local.put(rule('r', { groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' } }));
        const waiting = await eventually('the binding failed', () => {
          const b = h.engine.binding('r', 'a');
          return b?.phase === 'failed' && b;
        }, WAIT_MS);
        // Until the engine tells the binding to retry, it may not start here: what makes it active is
        // that retry (which is immediate: see the binding's tests), never its own backoff.
        const retries = t.mock.method(waiting, 'retry');
        h.local.allow = (review) => review.resource !== 'widgets' || retries.mock.callCount() > 0;
        const crd = {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'widgets.example.com' },
          spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced', versions: [{ name: 'v1', served: true, storage: true }] },
        };
        h.local.put(crd);
        h.local.serve(WIDGETS);
        h.local.put({ ...crd, status: { conditions: [{ type: 'Established', status: 'True' }] } });
        await eventually('the binding active', () => h.phases('r') === 'a:active', WAIT_MS);
      }));
  });

  describe('peers', () => {
    it('binds every rule on a peer opened later', () =>
      withEngine(async (h) => {
        h.local.put(rule('r'));
        h.local.put(rule('s'));
        await eventually('the rules read', () => h.engine.rule('r') && h.engine.rule('s'), WAIT_MS);
        await h.peer('a');
        await eventually('both rules active there', () => h.phases('r') === 'a:active' && h.phases('s') === 'a:active', WAIT_MS);
      }));

    it('unbinds every rule from a peer closed', () =>
      withEngine(async (h) => {
        await h.boundOnTwoPeers();
        h.peers.closed('b');
        assert.equal(h.phases('r'), 'a:active');
        assert.equal(h.phases('builtin/peer-cluster'), 'a:active');
      }));

    it('keeps the copies made from a peer closed', () =>
      withEngine(async (h) => {
        await h.copied();
        h.peers.closed('a');
        h.peers.answering();
        await h.swept();
        assertKept(h, 'x');
      }));

    it('keeps the copies made from a peer closed while its cluster still answers (its connection being replaced)', () =>
      withEngine(async (h) => {
        await h.copied();
        h.peers.closed('a');
        await h.swept();
        assertKept(h, 'x');
      }));

    it('binds every rule again on a peer opened again, over its new clients', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        h.local.put(rule('r'));
        await eventually('the rule active', () => h.phases('r') === 'a:active', WAIT_MS);
        const again = await h.member('a2', { registered: false });
        const reopened: SyncPeer = { ...again.peer, name: 'a', id: a.peer.id };
        h.peers.opened(reopened);
        assert.equal(h.engine.bindingsOf('r').length, 1);
        assert.equal(h.engine.binding('r', 'a')?.peer, reopened);
        await eventually('the rule active over the new clients', () => h.phases('r') === 'a:active', WAIT_MS);
      }));

    it('makes again the copies deleted here while their peer did not answer, once it answers', () =>
      withEngine(async (h) => {
        const a = await h.copied();
        h.peers.answering();
        h.local.remove(place('x'));
        await eventually('the copy waiting for its peer', () => h.statusOn('r', 'a')?.synced === 0 && h.statusOn('r', 'a')?.matched === 1, WAIT_MS);
        assert.equal(h.copy('x'), undefined);
        h.peers.answering(a.peer.id);
        await eventually('the copy made again', () => h.copy('x'), WAIT_MS);
      }));
  });

  describe('health', () => {
    /** Peer a with rule r bound there, and cluster c, which a last saw ready a second ago: both answered, then c stopped. */
    const lostC = async (h: Harness): Promise<{ a: Member; c: Member; reaches: () => boolean | undefined }> => {
      const a = await h.peer('a');
      const c = await h.member('c');
      a.server.put(readyCluster('c', c.peer.id, Date.now() - 1000));
      h.local.put(rule('r'));
      h.peers.answering(a.peer.id, c.peer.id);
      const reaches = (): boolean | undefined => h.engine.binding('r', 'a')?.reaches(c.peer.id);
      await eventually('the peer reaching c', reaches, WAIT_MS);
      h.peers.answering(a.peer.id);
      return { a, c, reaches };
    };

    it('holds a cluster it lost unreached through a peer until the peer has newer word of it', () =>
      withEngine(async (h) => {
        const { a, c, reaches } = await lostC(h);
        assert.equal(reaches(), false, 'the peer word is older than our loss');
        a.server.put(readyCluster('c', c.peer.id, Date.now() + 1000));
        await eventually('the peer reaching c again', reaches, WAIT_MS);
      }));

    it('takes a peer word of a cluster again once that cluster answers again', () =>
      withEngine(async (h) => {
        const { a, c, reaches } = await lostC(h);
        assert.equal(reaches(), false);
        h.peers.answering(a.peer.id, c.peer.id);
        assert.equal(reaches(), true);
      }));

    it('looks again at the objects of a peer that answers again as of who answers now, a third cluster lost at that moment holding nothing back', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        const c = await h.member('c');
        // c's object, passed on by a into a namespace not made here: each look at it says so in an Event.
        a.server.put(configMap('x', { namespace: 'later', owner: c.peer.id }));
        const looks = (): number => h.events.seen.filter((e) => e.object === 'r' && e.reason === SYNC_EVENT_REASONS.missingNamespace).length;
        h.local.put(rule('r'));
        await eventually('a first look', () => looks() === 1, WAIT_MS);
        h.peers.answering(c.peer.id);
        // In one change a answers again and c is lost: nothing waits for c's death any more, so x must be looked at now.
        h.peers.answering(a.peer.id);
        await eventually('a second look', () => looks() === 2, WAIT_MS);
      }));

    it('copies what a peer passes on for a third cluster once that cluster stops answering', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        const c = await h.member('c');
        // a has fresh word of c, whenever we lose it.
        a.server.put(readyCluster('c', c.peer.id, Date.now() + 60_000));
        a.server.put(configMap('x', { owner: c.peer.id }));
        h.peers.answering(a.peer.id, c.peer.id);
        h.local.put(rule('r'));
        await eventually('the rule active', () => h.phases('r') === 'a:active', WAIT_MS);
        await h.swept();
        assert.equal(h.copy('x'), undefined, 'c itself delivers it while it answers');
        h.peers.answering(a.peer.id);
        const copy = await eventually('the copy made', () => h.copy('x'), WAIT_MS);
        assert.equal(copy.metadata.annotations?.[ANNOTATIONS.ownership], c.peer.id);
      }));

    it("leaves a peer's copies of a settled owner's objects out of its watches, and follows them again once that owner stops answering", () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        const c = await h.peer('c');
        // a holds its copy of c's object, labelled for c as every copy is.
        const relayed = (data: string): KubeObject => ({ ...configMap('x', { owner: c.peer.id }), metadata: { ...configMap('x', { owner: c.peer.id }).metadata, labels: { [LABELS.ownership]: c.peer.id } }, data: { k: data } });
        a.server.put(readyCluster('c', c.peer.id, Date.now() + 60_000));
        a.server.put(relayed('v'));
        c.server.put(configMap('x'));
        h.local.put(rule('r'));
        await eventually('the rule active', () => h.phases('r') === 'a:active,c:active', WAIT_MS);
        await eventually('c settled: its objects left out of the watches on a', () => h.engine.binding('r', 'a')?.watchesOwner(c.peer.id) === false || undefined, WAIT_MS);
        await eventually('the copy made from c', () => h.copy('x'), WAIT_MS);
        h.peers.answering(a.peer.id);
        await eventually("c's objects watched again on a", () => h.engine.binding('r', 'a')?.watchesOwner(c.peer.id) === true || undefined, WAIT_MS);
        // What a passes on for c now reaches the copy.
        a.server.put(relayed('changed on a'));
        await eventually('the change a passed on', () => ((h.copy('x') as { data?: Record<string, string> } | undefined)?.data?.['k'] === 'changed on a') || undefined, WAIT_MS);
      }));
    it("watches the registry's credentials on a peer once, for the built-in and the core rule, leaving out what the core rule settles", () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        const c = await h.peer('c');
        for (const m of [a, c]) m.server.put(coreClusterFeature());
        const core = coreResourceSyncRules(NAMESPACE).find((r) => r.metadata.name === CORE_RULE_NAMES.clusterSecrets)!;
        h.local.put({ ...core, metadata: { ...core.metadata, generation: 1 } });
        const builtin = `${BUILTIN_PREFIX}peer-credentials`;
        const both = (): boolean | undefined => (h.engine.binding(builtin, 'a')?.watchesOwner(c.peer.id) === false && h.engine.binding(CORE_RULE_NAMES.clusterSecrets, 'a')?.watchesOwner(c.peer.id) === false) || undefined;
        await eventually("c settled: its credentials left out of both rules' watches on a", both, WAIT_MS);
        await eventually('one watch of the Secrets on a, shared', () => a.server.openWatches('secrets', NAMESPACE) === 1 || undefined, WAIT_MS);
        // c stops advertising the core feature: the core rule no longer takes it first-hand, so both watch it on a again.
        c.server.remove(coreClusterFeature());
        await eventually("c's credentials watched again on a by both rules", () => (h.engine.binding(builtin, 'a')?.watchesOwner(c.peer.id) === true && h.engine.binding(CORE_RULE_NAMES.clusterSecrets, 'a')?.watchesOwner(c.peer.id) === true) || undefined, WAIT_MS);
        await eventually('still one watch of the Secrets on a', () => a.server.openWatches('secrets', NAMESPACE) === 1 || undefined, WAIT_MS);
      }));
  });

  describe('the local registry', () => {
    it('copies what a peer owns once its Cluster is registered here', () =>
      withEngine(async (h) => {
        const a = await h.member('a', { registered: false });
        h.peers.opened(a.peer);
        h.peers.answering(a.peer.id);
        a.server.put(configMap('x'));
        h.local.put(rule('r'));
        await eventually('the object waiting for its owner', () => h.statusOn('r', 'a')?.matched === 1, WAIT_MS);
        assert.equal(h.copy('x'), undefined);
        h.local.put(cluster('a', a.peer.id));
        await eventually('the copy made', () => h.copy('x'), WAIT_MS);
      }));

    it('copies an object into a namespace once the namespace is made here', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.put(configMap('x', { namespace: 'later' }));
        h.local.put(rule('r'));
        await eventually('the object waiting for its namespace', () => h.statusOn('r', 'a')?.matched === 1, WAIT_MS);
        assert.equal(h.copy('x', 'later'), undefined);
        h.local.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'later' } });
        await eventually('the copy made', () => h.copy('x', 'later'), WAIT_MS);
      }));

    it('copies what a peer passes on for a third cluster once the peer says it reaches that cluster', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        const c = await h.member('c');
        a.server.put(configMap('x', { owner: c.peer.id }));
        h.local.put(rule('r'));
        await eventually('the object waiting for the peer to reach c', () => h.statusOn('r', 'a')?.matched === 1, WAIT_MS);
        assert.equal(h.copy('x'), undefined);
        a.server.put(readyCluster('c', c.peer.id, Date.now()));
        await eventually('the copy made', () => h.copy('x'), WAIT_MS);
      }));
  });

  describe("a rule's copies", () => {
    it('collects the copies of a rule deleted here once the grace period is over', () =>
      withEngine(async (h) => {
        await h.copied();
        h.local.remove(rule('r'));
        await eventually('the copy collected', () => h.copy('x') === undefined, WAIT_MS);
      }));

    it('stops watching the copies of a rule deleted here once they are collected', () =>
      withEngine(async (h) => {
        await h.copied();
        h.local.remove(rule('r'));
        await eventually('the copy collected', () => h.copy('x') === undefined, WAIT_MS);
        await eventually('no watch of copies left', () => h.local.openWatches('configmaps') === 0, WAIT_MS);
      }));

    it('keeps watching the copies of a rule deleted here while a copy still records it', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.put(configMap('x'));
        h.local.put(rule('r'));
        const made = await eventually('the copy made', () => h.copy('x'), WAIT_MS);
        // A copy that is no orphan yet: its peer does not answer.
        h.peers.answering();
        h.local.remove(rule('r'));
        await eventually('the rule gone', () => h.engine.rule('r') === undefined, WAIT_MS);
        await h.swept();
        await h.swept();
        assert.equal(h.local.openWatches('configmaps'), 1);
        assert.equal(h.copy('x')?.metadata.uid, made.metadata.uid);
      }, { settings: { gcGracePeriodMs: 0 } }));

    it('collects the copies a rule no longer takes once it is narrowed to other namespaces', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.put(configMap('x'));
        h.local.put(ruleIn('r', ['ns']));
        await eventually('the copy made', () => h.copy('x'), WAIT_MS);
        h.local.put(ruleIn('r', ['other']));
        await eventually('the copy collected', () => h.copy('x') === undefined, 5_000);
      }));

    it('stops watching the namespaces a rule left once the grace period is over, when no copy records it', () =>
      withEngine(async (h) => {
        await h.peer('a');
        h.local.put(ruleIn('r', ['ns']));
        await eventually('the copies of ns watched', () => h.local.openWatches('configmaps', 'ns') === 1, WAIT_MS);
        h.local.put(ruleIn('r', ['other']));
        await eventually('the copies of other watched', () => h.local.openWatches('configmaps', 'other') === 1, WAIT_MS);
        await eventually('the copies of ns no longer watched', () => h.local.openWatches('configmaps', 'ns') === 0, 5_000);
      }));
  });

  describe('copy watches a rule no longer has', () => {
    const draining = (h: Harness): number => (h.engine as unknown as { draining: unknown[] }).draining.length;
    /** Rule `r` has made copy `x` in `ns`; rule `bad` copies ConfigMaps into `namespaces`, and this controller may not list them in `other`. */
    const copyBesideForbidden = async (h: Harness, namespaces: string[]): Promise<void> => {
      h.local.denyList = (resource, namespace) => resource === 'configmaps' && namespace === 'other';
      const a = await h.peer('a');
      a.server.put(configMap('x'));
      h.local.put(ruleIn('r', ['ns']));
      await eventually('the copy made', () => h.copy('x'), WAIT_MS);
      h.local.put(ruleIn('bad', namespaces));
      await eventually('bad known', () => h.engine.rule('bad') !== undefined, WAIT_MS);
    };

    it('lets go the copy watch of a deleted rule whose kind is not served here', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.serve(WIDGETS);
        h.local.put(rule('w', { groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' } }));
        await eventually('the rule known', () => h.engine.rule('w') !== undefined, WAIT_MS);
        h.local.remove(rule('w'));
        await eventually('the rule gone', () => h.engine.rule('w') === undefined, WAIT_MS);
        await h.swept();
        await h.swept();
        assert.equal(draining(h), 0, 'the drained watch of the unserved kind is let go');
      }));

    it('collects a copy a narrowed rule left where another rule watched, once that rule went too and the peer answers again', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.put(configMap('x'));
        h.local.put(ruleIn('r1', ['ns', 'other']));
        await eventually('the copy made', () => h.copy('x'), WAIT_MS);
        h.local.put(rule('r2', { rules: [{ match: [{ namespaces: ['ns'], objectKey: { name: 'z' } }] }] }));
        await eventually('r2 active', () => h.phases('r2') === 'a:active', WAIT_MS);
        h.peers.answering();
        h.local.put(ruleIn('r1', ['other']));
        await h.swept();
        await h.swept();
        assert.ok(h.copy('x'), 'kept while its peer does not answer');
        h.local.remove(rule('r2'));
        await eventually('r2 gone', () => h.engine.rule('r2') === undefined, WAIT_MS);
        await h.swept();
        await h.swept();
        h.peers.answering(a.peer.id);
        await eventually('the copy collected', () => h.copy('x') === undefined, 5_000);
      }));

    it('keeps a Namespace copy, and the copies in it, when its rule is deleted and made again under its name for another kind', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } });
        a.server.put(configMap('c', { namespace: 'team' }));
        h.local.put(rule('nsrule', { groupVersionKind: { version: 'v1', kind: 'Namespace' }, rules: [{ match: [{ objectKey: { name: 'team' } }] }] }));
        await eventually('the namespace copied', () => h.local.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }), WAIT_MS);
        h.local.put(ruleIn('cm', ['team']));
        await eventually('the configmap copied', () => h.copy('c', 'team'), WAIT_MS);
        h.local.remove(rule('nsrule'));
        await eventually('the rule gone', () => h.engine.rule('nsrule') === undefined, WAIT_MS);
        h.local.put(rule('nsrule', { groupVersionKind: { version: 'v1', kind: 'Secret' } }));
        await eventually('the rule back', () => h.engine.rule('nsrule') !== undefined, WAIT_MS);
        await h.swept();
        await h.swept();
        await h.swept();
        assert.deepEqual(h.local.requests.filter((r) => r.method === 'DELETE').map((r) => r.path), [], 'nothing deleted');
        assert.ok(h.local.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }), 'the namespace is still here');
      }));

    it('holds at most eight old watches for a rule that keeps changing its scope', () =>
      withEngine(async (h) => {
        await h.peer('a');
        for (let i = 0; i < 12; i++) {
          h.local.put(ruleIn('r', [`ns${i}`]));
          await eventually(`edit ${i} taken`, () => h.local.openWatches('configmaps', `ns${i}`) === 1, WAIT_MS);
        }
        assert.equal(draining(h), 8);
        assert.equal(h.local.openWatches('configmaps', 'ns0'), 0, 'the oldest let go');
        assert.equal(h.local.openWatches('configmaps', 'ns10'), 1, 'the newest kept');
        const warning = await eventually('the warning', () => h.events.seen.find((e) => e.object === 'r' && e.reason === 'CopiesLeftUncollected'), WAIT_MS);
        assert.match(warning.message, /left in place \(never deleted\)/);
      }, { settings: { gcGracePeriodMs: 600_000 } }));

    it("collects a copy a narrowed rule left once another rule, whose copies of that kind may not be listed in one namespace, goes", () =>
      withEngine(async (h) => {
        await copyBesideForbidden(h, ['other']);
        h.local.put(ruleIn('r', ['ns2']));
        await h.swept();
        await h.swept();
        assert.ok(h.copy('x'), 'kept while copies of its kind are not all known');
        assert.equal(h.local.openWatches('configmaps', 'ns'), 1, 'the watch that sees it kept');
        h.local.remove(rule('bad'));
        await eventually('the copy collected', () => h.copy('x') === undefined, 5_000);
      }));

    for (const change of ['narrowed', 'deleted'] as const) {
      it(`collects copies of a kind again once a rule whose copies may not be listed in one namespace is ${change}`, () =>
        withEngine(async (h) => {
          await copyBesideForbidden(h, ['ns', 'other']);
          await h.swept();
          if (change === 'narrowed') h.local.put(rule('bad', { groupVersionKind: { version: 'v1', kind: 'Secret' } }));
          else h.local.remove(rule('bad'));
          await h.swept();
          await h.swept();
          h.local.remove(rule('r'));
          await eventually('the copy collected', () => h.copy('x') === undefined, 5_000);
        }));
    }
  });

  describe('listed', () => {
    /** Whether the engine says it is listed while `held` is not listed yet and `other` is (its watch open). */
    const listedWithout = async (held: string, other: string): Promise<boolean> => {
      let listed: boolean | undefined;
      await withEngine(
        async (h) => {
          await eventually(`${other} listed`, () => h.local.requests.some((r) => r.path.endsWith(`/${other}`) && r.query.get('watch') === '1'), WAIT_MS);
          listed = h.engine.listed();
        },
        { before: (local) => void local.hold(held) },
      );
      return listed ?? true;
    };

    it('is not listed before the rules are', async () => assert.equal(await listedWithout('resourcesyncrules', 'clusters'), false));

    it('is not listed before the registry is', async () => assert.equal(await listedWithout('clusters', 'resourcesyncrules'), false));

    it('is listed once the rules and the registry are', () =>
      withEngine(async (h) => {
        await eventually('listed', () => h.engine.listed(), WAIT_MS);
      }));
  });

  describe('recordedSourceLive', () => {
    let h: Harness;
    let a: Member;
    let b: Member;
    let slow: Member;
    let quiet: Member;
    let c: Member;
    before(async () => {
      h = await Harness.start();
      a = await h.peer('a');
      // Registered and answering, but no peer of ours.
      b = await h.member('b');
      // A peer whose ConfigMaps are being listed.
      slow = await h.member('slow');
      slow.server.hold('configmaps');
      h.peers.opened(slow.peer);
      // A peer that does not answer (its caches still hold what it had).
      quiet = await h.member('quiet');
      h.peers.opened(quiet.peer);
      quiet.server.put(configMap('x'));
      c = await h.member('c');
      h.peers.answering(a.peer.id, b.peer.id, slow.peer.id);
      a.server.put(configMap('x'));
      a.server.put(configMap('dying', { deleting: true }));
      a.server.put(configMap('third', { owner: c.peer.id }));
      h.local.put(rule('r'));
      h.local.put(rule('invalid', { rules: [{ match: [{ content: [{ key: '', value: 'x' }] }] }] }));
      h.local.put(rule('gated', { clusterFeatureMatch: [{ featureName: 'absent' }] }));
      h.local.put(rule('templated', { rules: [{ mutations: { overrides: [{ type: 'replace', path: '/data/k', value: '{{ "y" }}' }] } }] }));
      await eventually('the rules bound', () => h.phases('r') === 'a:active,quiet:active,slow:starting' && h.phases('gated') === 'a:featuresUnmet,quiet:featuresUnmet,slow:featuresUnmet' && h.engine.binding('r', 'a')?.synced && h.engine.binding('templated', 'a')?.synced, WAIT_MS);
    });
    after(() => h.close());

    const live = (p: () => Member, name: string, o: Parameters<typeof recorded>[2] = {}): boolean => {
      const { id, copy } = recorded(p(), name, o);
      return runThrough(h.engine.recordedSourceLive(id, copy));
    };

    it('holds live a source the rule takes to the very place of the copy', () => assert.equal(live(() => a, 'x'), true));
    it('holds dead a copy that records no rule', () => assert.equal(live(() => a, 'x', { rule: '' }), false));
    it('holds dead a source whose peer does not answer', () => assert.equal(live(() => quiet, 'x'), false));
    it('holds dead a source of a rule it does not know', () => assert.equal(live(() => a, 'x', { rule: 'unknown' }), false));
    it('holds dead a source of an invalid rule', () => assert.equal(live(() => a, 'x', { rule: 'invalid' }), false));
    it('holds dead a source on a cluster that answers but is no peer of ours', () => assert.equal(live(() => b, 'x'), false));
    it('holds dead a source of a rule the peer lacks the features for', () => assert.equal(live(() => a, 'x', { rule: 'gated' }), false));
    it('holds live a source whose peer is still listing', () => assert.equal(live(() => slow, 'x'), true));
    it('holds dead a source the listed peer does not have', () => assert.equal(live(() => a, 'absent'), false));
    it('holds dead a source being deleted', () => assert.equal(live(() => a, 'dying'), false));
    it('holds dead a source of a third cluster the peer does not reach', () => assert.equal(live(() => a, 'third', { owner: c.peer.id }), false));
    it('holds dead a source the rule takes to another place than the copy', () => assert.equal(live(() => a, 'x', { at: 'elsewhere' }), false));
    it("says, when its rule's templates must say where the source goes, that it holds the source meanwhile", async () => {
      const { id, copy } = recorded(a, 'x', { rule: 'templated' });
      // The sync rendered it already and remembers where it goes; a change to the registry forgets
      // that. Asked by a handler of the registry's informer that runs after the engine's, the
      // engine has forgotten and the sync has not rendered it again yet.
      const said = await new Promise<unknown[]>((resolve) => {
        const off = h.clusters.addEventHandler({
          onUpdate: (_, c) => {
            if (c.metadata.name !== 'a' || !c.metadata.labels?.['relabelled']) return;
            off();
            resolve([...h.engine.recordedSourceLive(id, copy)]);
          },
        });
        const registered = cluster('a', a.peer.id);
        h.local.put({ ...registered, metadata: { ...registered.metadata, labels: { relabelled: 'yes' } } });
      });
      const cached = h.engine.binding('templated', 'a')?.get('ns', 'x');
      assert.ok(cached);
      assert.deepEqual(said.filter((v) => v !== undefined), [chargedSize(cached)]);
    });
  });

  describe('status', () => {
    it("reports each peer's binding in its rule's status", () =>
      withEngine(async (h) => {
        await h.peer('a');
        await h.peer('b');
        h.local.put(rule('r'));
        await eventually('both peers active in the status', () => h.status('r')?.clusters?.every((c) => c.state === 'Active') && h.status('r')?.clusters?.length === 2, WAIT_MS);
        assert.deepEqual(h.status('r')?.clusters, [
          { name: 'a', clusterID: 'a-uid', state: 'Active', matched: 0, synced: 0, failed: 0 },
          { name: 'b', clusterID: 'b-uid', state: 'Active', matched: 0, synced: 0, failed: 0 },
        ]);
      }));

    it('reports a binding that cannot run as failed on its peer, with the reason', () =>
      withEngine(async (h) => {
        await h.peer('a');
        h.local.put(rule('r', { groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' } }));
        const failed = await eventually('the peer failed in the status', () => (h.statusOn('r', 'a')?.state === 'Failed' ? h.statusOn('r', 'a') : undefined), WAIT_MS);
        assert.match(failed.message ?? '', /^kind Widget of example\.com\/v1 is not served on the peer/);
        const synced = h.status('r')?.conditions?.find((c) => c.type === 'Synced');
        assert.equal(synced?.status, 'False');
        assert.equal(synced?.message, `a: ${failed.message ?? ''}`);
      }));

    it('warns with an Event of a binding that cannot run, once however often it tries again', () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        // Served on the peer, not here: each attempt asks the peer before it fails.
        a.server.serve(WIDGETS);
        h.local.put(rule('r', { groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' } }));
        await eventually('two failed attempts', () => attempts(a, 'widgets') >= 2 && h.engine.binding('r', 'a')?.phase === 'failed', WAIT_MS);
        const warnings = h.events.seen.filter((e) => e.object === 'r');
        assert.deepEqual(
          warnings.map((e) => [e.type, e.reason, e.message]),
          [['Warning', 'RuleFailedOnPeer', 'a: kind Widget of example.com/v1 is not served here (is its CustomResourceDefinition installed?)']],
        );
      }));

    it("reports a peer whose credentials may not read the rule's kind as not permitted", () =>
      withEngine(async (h) => {
        const a = await h.peer('a');
        a.server.allow = (attr) => attr.resource !== 'configmaps';
        h.local.put(rule('r'));
        const permitted = await eventually('the denial in the status', () => h.status('r')?.conditions?.find((c) => c.type === 'Permitted' && c.status === 'False'), WAIT_MS);
        assert.match(permitted.message, /^a: the peer's credentials may not get configmaps cluster-wide/);
      }));

    it('reports a peer that lacks the features a rule asks for as pending', () =>
      withEngine(async (h) => {
        await h.peer('a');
        h.local.put(rule('r', { clusterFeatureMatch: [{ featureName: 'absent' }] }));
        const pending = await eventually('the peer in the status', () => h.statusOn('r', 'a'), WAIT_MS);
        assert.equal(pending.state, 'Pending');
        assert.match(pending.message ?? '', /does not advertise the ClusterFeatures/);
      }));

    it("drops a peer closed from its rules' statuses", () =>
      withEngine(async (h) => {
        await h.peer('a');
        await h.peer('b');
        h.local.put(rule('r'));
        await eventually('both peers in the status', () => h.status('r')?.clusters?.length === 2, WAIT_MS);
        h.peers.closed('b');
        await eventually('b gone from the status', () => h.status('r')?.clusters?.map((c) => c.name).join() === 'a', WAIT_MS);
      }));
  });
});

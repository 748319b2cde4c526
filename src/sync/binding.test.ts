import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { LABELS } from '../core/api/index.ts';
import type { Cluster, ClusterFeature, ClusterFeatureMatch, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec, SyncRuleMatch } from '../core/api/types.ts';
import { ruleState, type RuleState } from '../core/rules/index.ts';
import { chargedSize, Discovery, InformerFactory, RestClient, silentLogger, type ApiResource, type InformerLease } from '../kube/index.ts';
import type { ResourceAttributes } from '../kube/rest.ts';
import { eventually } from '../../test/support/eventually.ts';
import { TcpProxy } from '../../test/support/tcp-proxy.ts';
import { MemoryApiServer, STANDARD_KINDS, type ServedKind } from '../../test/support/sync-apiserver.ts';
import { configMap, LOCAL_ID, NAMESPACE } from '../../test/support/sync-fakes.ts';
import { Binding, inStep, kindNotServed, type BindingOptions } from './binding.ts';
import type { BoundPeer } from './view.ts';
import { PeerFeatures } from './features.ts';
import { syncKey, type SyncKey } from './keys.ts';

const PEER = { name: 'p1', id: 'p1-uid' };
const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };
const WIDGETS: ServedKind = { ...WIDGET, resource: 'widgets', namespaced: true };
/** Retries quick enough for a test to see several. */
const QUICK = { initialMs: 5, maxMs: 20 };
const WAIT_MS = 10_000;

/** A rule `name` reading ConfigMaps (or `kind`) on the peer: every object unless `match` says which, gated on `features`. */
function rule(name: string, o: { kind?: typeof WIDGET; match?: SyncRuleMatch[]; features?: ClusterFeatureMatch[]; core?: boolean } = {}): RuleState {
  const spec: ResourceSyncRuleSpec = { groupVersionKind: o.kind ?? { version: 'v1', kind: 'ConfigMap' }, rules: [o.match ? { match: o.match } : {}], ...(o.features ? { clusterFeatureMatch: o.features } : {}) };
  const object: ResourceSyncRule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name, uid: `rule-${name}` }, spec };
  return o.core ? ruleState(name, spec, undefined, NAMESPACE, {}) : ruleState(name, spec, object, NAMESPACE);
}

function feature(featureName: string): ClusterFeature {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: `feature-${featureName}` }, spec: { featureName } };
}

/** A ConfigMap `namespace/name` on the peer (owned by `owner` when given). */
function source(namespace: string, name: string, owner?: string): KubeObject {
  const o = configMap(name, owner ? { owner } : {});
  return { ...o, metadata: { ...o.metadata, namespace } };
}

/** The peer's Cluster of the cluster `id`, in `state`, its last heartbeat at `heartbeat`. */
function registered(name: string, id: string, heartbeat: number, state = 'Ready'): Cluster {
  return {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'Cluster',
    metadata: { name },
    spec: { clusterID: id },
    status: { state, conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date(heartbeat).toISOString() }] } as Cluster['status'],
  };
}

const keyOf = (r: RuleState, o: KubeObject): SyncKey => syncKey(r.name, PEER.name, o.metadata.namespace, o.metadata.name ?? '');

/** The access reviews a server was asked, in order. */
function reviews(srv: MemoryApiServer): ResourceAttributes[] {
  return srv.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/selfsubjectaccessreviews')).map((r) => (r.body as { spec: { resourceAttributes: ResourceAttributes } }).spec.resourceAttributes);
}

/** The lists and watches of a resource a server was asked, in order. */
function reads(srv: MemoryApiServer, resource: string): { verb: string; namespace: string | undefined; fieldSelector: string | undefined; labelSelector: string | undefined }[] {
  return srv.requests
    .filter((r) => r.method === 'GET' && r.path.split('/').at(-1) === resource)
    .map((r) => ({ verb: r.query.get('watch') === '1' ? 'watch' : 'list', namespace: /\/namespaces\/([^/]+)\//.exec(r.path)?.[1], fieldSelector: r.query.get('fieldSelector') ?? undefined, labelSelector: r.query.get('labelSelector') ?? undefined }));
}

/** How often a server's discovery was read. */
const refreshes = (srv: MemoryApiServer): number => srv.requests.filter((r) => r.path === '/api').length;

/** Discovery whose answers wait until `gate` resolves. */
class GatedDiscovery extends Discovery {
  private readonly gate: Promise<void>;
  /** Look-ups waiting for the gate or done. */
  asked = 0;

  constructor(rest: RestClient, gate: Promise<void>) {
    super(rest, { missTtlMs: 0 });
    this.gate = gate;
  }

  override async resourceFor(gvk: { group: string; version: string; kind: string }): Promise<ApiResource> {
    this.asked++;
    await this.gate;
    return super.resourceFor(gvk);
  }
}

/** A binding as the test sees it through its callbacks. */
interface Bound {
  readonly binding: Binding;
  /** `phase: message` at each onPhase. */
  readonly phases: string[];
  readonly queued: { key: SyncKey; source: KubeObject | undefined }[];
  /** What the binding held at each onActive. */
  readonly activations: { synced: boolean; readable: boolean; objects: string[] }[];
  /** The owners its watches came to leave out without listing, each time. */
  readonly leftOut: string[][];
}

/**
 * A peer and our cluster as in-memory API servers, the peer reached through a proxy a test can
 * cut, its clients real (REST client, discovery, informers); and the bindings made on them. All
 * closed after the test.
 */
class Setup {
  readonly peer: MemoryApiServer;
  readonly local: MemoryApiServer;
  /** Between the peer's clients and the peer. */
  readonly proxy: TcpProxy;
  readonly informers: InformerFactory;
  readonly features: PeerFeatures;
  /** When we lost a cluster ourselves, by its ID. */
  readonly lost = new Map<string, number>();
  /** The owners the engine would call settled (see BindingOptions.settledOwners). */
  readonly settled = new Set<string>();
  private readonly rest: RestClient;
  readonly peerDiscovery: Discovery;
  private readonly localDiscovery: Discovery;
  private readonly stop = new AbortController();
  private readonly bindings: Binding[] = [];

  private constructor(peer: MemoryApiServer, local: MemoryApiServer, proxy: TcpProxy, discoveryGate: Promise<void> | undefined) {
    this.peer = peer;
    this.local = local;
    this.proxy = proxy;
    // Read-only, as a peer's client is; no retries, so a failure shows at once.
    this.rest = new RestClient({ server: new URL(`http://127.0.0.1:${proxy.port}`), tls: {}, authHeaders: () => Promise.resolve({}), invalidate: () => undefined }, { readOnly: true, maxRetries: 0 });
    // Misses are not remembered: each retry of a binding reads discovery again.
    this.peerDiscovery = discoveryGate ? new GatedDiscovery(this.rest, discoveryGate) : new Discovery(this.rest, { missTtlMs: 0 });
    this.localDiscovery = new Discovery(local.rest, { missTtlMs: 0 });
    this.informers = new InformerFactory({ cluster: PEER.name, rest: this.rest, discovery: this.peerDiscovery, logger: silentLogger });
    this.features = new PeerFeatures(this.informers);
  }

  /** Informers on the peer start at once unless `informersLater`; the peer serves `peerKinds`; its discovery answers once `discoveryGate` resolves. */
  static async create(t: TestContext, o: { informersLater?: boolean; peerKinds?: readonly ServedKind[]; discoveryGate?: Promise<void> } = {}): Promise<Setup> {
    const peer = await MemoryApiServer.start(o.peerKinds);
    const local = await MemoryApiServer.start();
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(peer.rest.server.port) });
    const s = new Setup(peer, local, proxy, o.discoveryGate);
    t.after(() => s.close());
    if (!o.informersLater) s.startInformers();
    return s;
  }

  startInformers(): void {
    this.informers.start(this.stop.signal);
  }

  /** Starts a binding of `r` to the peer. */
  bind(r: RuleState, o: { retry?: BindingOptions['retry']; onActive?: (b: BoundPeer) => void } = {}): Bound {
    const phases: string[] = [];
    const queued: Bound['queued'] = [];
    const activations: Bound['activations'] = [];
    const leftOut: Bound['leftOut'] = [];
    const binding = new Binding({
      rule: r,
      peer: { ...PEER, clients: { rest: this.rest, informers: this.informers, discovery: this.peerDiscovery } },
      features: this.features,
      local: this.local.rest,
      localDiscovery: this.localDiscovery,
      localClusterID: LOCAL_ID,
      rateLimit: { ratePerSecond: 100, burst: 100, maxKeys: 100 },
      events: {
        sourceChanged: (_rule, _peer, key, source) => queued.push({ key, source }),
        everythingOf: (b) => {
          activations.push({ synced: b.synced, readable: b.readable, objects: b.list().map((x) => x.metadata.name ?? '') });
          o.onActive?.(b);
        },
        leftOut: (_b, owners) => leftOut.push([...owners]),
      },
      onPhase: (b) => phases.push(`${b.phase}: ${b.message}`),
      lostAt: (id) => this.lost.get(id),
      settledOwners: () => this.settled,
      log: silentLogger,
      retry: o.retry ?? QUICK,
    });
    this.bindings.push(binding);
    binding.start();
    return { binding, phases, queued, activations, leftOut };
  }

  private async close(): Promise<void> {
    for (const b of this.bindings) b.close();
    this.features.close();
    this.stop.abort();
    this.rest.close();
    await this.proxy.stop();
    this.peer.close();
    this.local.close();
  }
}

const phaseIs = (b: Binding, phase: Binding['phase']): boolean => b.phase === phase;
const until = (what: string, check: () => boolean): Promise<boolean> => eventually(what, check, WAIT_MS);

describe('inStep', () => {
  type State = { complete: boolean; lastError?: string; lastResourceVersion: string };
  const filter = (...leftOut: string[]) => ({ labelSelector: `${LABELS.ownership} notin (${leftOut.join(',')})`, leftOut });
  const narrower = filter(LOCAL_ID, 'a');
  const sources = (...states: [string, State][]) => ({ filter: narrower, leases: new Map(states.map(([ns, informer]) => [ns, { informer, release: () => undefined } as unknown as InformerLease])) });
  const wider = (s: ReturnType<typeof sources>) => ({ ...s, filter: filter(LOCAL_ID) });
  const ok: State = { complete: true, lastResourceVersion: '7' };
  const cases: [string, ReturnType<typeof sources>, ReturnType<typeof sources>, boolean][] = [
    ['a narrower filter, in step', sources(['a', ok]), wider(sources(['a', ok])), true],
    ['the same filter, in step', sources(['a', ok]), sources(['a', ok]), true],
    ['a wider filter, even in step (it may hold what the sync was never told of)', wider(sources(['a', ok])), sources(['a', ok]), false],
    ['both complete at one version in every namespace', sources(['a', ok], ['b', ok]), sources(['a', ok], ['b', ok]), true],
    ['one namespace at another version (a shared cache ahead or behind)', sources(['a', ok], ['b', { ...ok, lastResourceVersion: '8' }]), sources(['a', ok], ['b', ok]), false],
    ['the new cache not listed yet', sources(['a', { ...ok, complete: false }]), sources(['a', ok]), false],
    ['the current cache missing what its budget refused', sources(['a', ok]), sources(['a', { ...ok, complete: false }]), false],
    ['the new watches failing', sources(['a', { ...ok, lastError: '403' }]), sources(['a', ok]), false],
    ['the current watches failing', sources(['a', ok]), sources(['a', { ...ok, lastError: '403' }]), false],
    ['a namespace the current watches lack', sources(['a', ok], ['b', ok]), sources(['a', ok]), false],
  ];
  for (const [what, next, current, want] of cases) it(`${want ? 'holds' : 'does not hold'} ${what}`, () => assert.equal(inStep(next, current), want));
});

// Each test has servers of its own and spends most of its time waiting for a binding's next look: they run side by side.
describe('Binding phases', { concurrency: true }, () => {
  it("stays starting, asking the peer nothing about the rule, until the peer's ClusterFeatures are listed", async (t) => {
    const s = await Setup.create(t, { informersLater: true });
    const { binding } = s.bind(rule('r'));
    await until('the binding waiting for the features', () => binding.message === "reading the peer's ClusterFeatures");
    assert.equal(binding.phase, 'starting');
    assert.deepEqual({ discoveries: refreshes(s.peer), reviews: reviews(s.peer), reads: reads(s.peer, 'configmaps') }, { discoveries: 0, reviews: [], reads: [] });
    s.startInformers();
    await until('active once the features are listed', () => phaseIs(binding, 'active'));
  });

  it("goes on without the peer's ClusterFeatures when it is a core rule", async (t) => {
    const s = await Setup.create(t, { peerKinds: STANDARD_KINDS.filter((k) => k.resource !== 'clusterfeatures') });
    const { binding } = s.bind(rule('core', { core: true }));
    await until('the core rule active', () => phaseIs(binding, 'active'));
    assert.equal(s.features.advertised(), undefined, 'the features are still unknown');
  });

  it('is featuresUnmet, and watches nothing, while the peer does not advertise what clusterFeatureMatch asks for', async (t) => {
    const s = await Setup.create(t);
    s.peer.put(feature('other'));
    const { binding } = s.bind(rule('r', { features: [{ featureName: 'istio' }] }));
    await until('featuresUnmet', () => phaseIs(binding, 'featuresUnmet'));
    assert.equal(binding.message, 'the peer does not advertise the ClusterFeatures clusterFeatureMatch asks for');
    assert.deepEqual(reads(s.peer, 'configmaps'), []);
  });

  it('becomes active as soon as the peer advertises the feature its rule asks for', async (t) => {
    const s = await Setup.create(t);
    const { binding } = s.bind(rule('r', { features: [{ featureName: 'istio' }] }));
    await until('featuresUnmet', () => phaseIs(binding, 'featuresUnmet'));
    s.peer.put(feature('istio'));
    // Well before its minute-long wait would end by itself.
    await until('active once advertised', () => phaseIs(binding, 'active'));
  });

  it('turns featuresUnmet and lets go of its watches when the peer withdraws the feature', async (t) => {
    const s = await Setup.create(t);
    const istio = s.peer.put(feature('istio'));
    s.peer.put(source('ns', 'a'));
    const { binding } = s.bind(rule('r', { features: [{ featureName: 'istio' }] }));
    await until('active', () => phaseIs(binding, 'active') && s.peer.openWatches('configmaps') === 1);
    s.peer.remove(istio);
    await until('featuresUnmet', () => phaseIs(binding, 'featuresUnmet'));
    assert.deepEqual(binding.lookup('ns', 'a'), { inScope: false });
    await until('its watch closed', () => s.peer.openWatches('configmaps') === 0);
  });

  it("says it is listing the rule's objects until their first list arrives", async (t) => {
    const s = await Setup.create(t);
    const release = s.peer.hold('configmaps');
    const { binding } = s.bind(rule('r'));
    await until('the binding listing', () => binding.message === "listing the rule's objects on the peer");
    assert.equal(binding.phase, 'starting');
    release();
    await until('active once listed', () => phaseIs(binding, 'active'));
  });

  it('is active, readable and synced once its watches have listed', async (t) => {
    const s = await Setup.create(t);
    s.peer.put(source('ns', 'a'));
    const { binding, phases } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active'));
    assert.deepEqual({ readable: binding.readable, synced: binding.synced, message: binding.message, denied: binding.denied }, { readable: true, synced: true, message: '', denied: false });
    assert.equal(phases.at(-1), 'active: ');
  });
});

describe('Binding failures', { concurrency: true }, () => {
  /** A binding of `r` made where `arrange` set what is allowed and served, once it failed. */
  const failedWhere = async (t: TestContext, arrange: (s: Setup) => void, r = rule('r')): Promise<{ s: Setup; binding: Binding }> => {
    const s = await Setup.create(t);
    arrange(s);
    const { binding } = s.bind(r);
    await until('failed', () => phaseIs(binding, 'failed'));
    return { s, binding };
  };

  it('turns failed with the reason when the peer denies list, and active once it allows', async (t) => {
    const { s, binding } = await failedWhere(t, (s) => (s.peer.allow = (a) => a.verb !== 'list'));
    assert.equal(binding.message, "the peer's credentials may not list configmaps cluster-wide (grant it to the reader with a ClusterRole labelled cluster-registry.k8s.cisco.com/reader-aggregated=true on the peer)");
    assert.equal(binding.denied, true);
    s.peer.allow = () => true;
    await until('active once allowed', () => phaseIs(binding, 'active'));
    assert.equal(binding.denied, false);
  });

  it("checks the peer's permissions only in the namespaces its rule reads", async (t) => {
    const s = await Setup.create(t);
    s.peer.allow = (a) => a.namespace === 'a' || a.namespace === 'b';
    const { binding } = s.bind(rule('r', { match: [{ namespaces: ['a', 'b'] }] }));
    await until('active', () => phaseIs(binding, 'active'));
    const asked = new Set(reviews(s.peer).map((r) => `${r.verb} ${r.resource} in ${r.namespace ?? '(all)'}`));
    assert.deepEqual([...asked].sort(), ['get configmaps in a', 'get configmaps in b', 'list configmaps in a', 'list configmaps in b', 'watch configmaps in a', 'watch configmaps in b']);
  });

  it('names the namespace in which the peer denies a read', async (t) => {
    const { binding } = await failedWhere(t, (s) => (s.peer.allow = (a) => !(a.verb === 'watch' && a.namespace === 'b')), rule('r', { match: [{ namespaces: ['a', 'b'] }] }));
    assert.match(binding.message, /^the peer's credentials may not watch configmaps in namespace b /);
  });

  it('turns failed, denied, when this controller may not write here what its rule makes, before it reads anything on the peer', async (t) => {
    const { s, binding } = await failedWhere(t, (s) => (s.local.allow = (a) => a.verb !== 'create'));
    assert.equal(binding.message, 'this controller may not create configmaps cluster-wide here (grant it with a ClusterRole labelled cluster-registry.k8s.cisco.com/controller-aggregated=true)');
    assert.equal(binding.denied, true);
    assert.deepEqual(reads(s.peer, 'configmaps'), []);
  });

  it("turns failed when its rule's kind is not served on the peer, and active once it is", async (t) => {
    const { s, binding } = await failedWhere(t, (s) => s.local.serve(WIDGETS), rule('r', { kind: WIDGET }));
    assert.equal(binding.message, kindNotServed(WIDGET, 'on the peer'));
    assert.equal(binding.denied, false);
    s.peer.serve(WIDGETS);
    await until('active once the CRD is installed there', () => phaseIs(binding, 'active'));
  });

  it('turns failed when the kind its rule makes is not served here', async (t) => {
    const { binding } = await failedWhere(t, (s) => s.peer.serve(WIDGETS), rule('r', { kind: WIDGET }));
    assert.equal(binding.message, kindNotServed(WIDGET, 'here'));
  });

  it('retries at once when told to, however long its backoff', async (t) => {
    const s = await Setup.create(t);
    s.local.serve(WIDGETS);
    const { binding } = s.bind(rule('r', { kind: WIDGET }), { retry: { initialMs: 600_000, maxMs: 600_000 } });
    await until('failed', () => phaseIs(binding, 'failed'));
    s.peer.serve(WIDGETS);
    binding.retry();
    await until('active on the retry', () => phaseIs(binding, 'active'));
  });

  it('retries a failure at least every maxMs, however long it has been failing', async (t) => {
    const s = await Setup.create(t);
    const { binding } = s.bind(rule('r', { kind: WIDGET }), { retry: { initialMs: 5, maxMs: 40 } });
    // Each retry reads the peer's discovery again; doubling from 5 ms without a cap, the 30th would be days away.
    await until('30 retries', () => refreshes(s.peer) >= 30);
    assert.equal(binding.phase, 'failed');
  });

  it('tells onPhase of a failure once, however often its retries fail the same way', async (t) => {
    const s = await Setup.create(t);
    s.peer.allow = (a) => a.verb !== 'list';
    const { phases } = s.bind(rule('r'));
    await until('10 retries', () => reviews(s.peer).filter((r) => r.verb === 'list').length >= 10);
    assert.equal(phases.filter((p) => p.startsWith('failed')).length, 1, phases.join('\n'));
  });

  it('turns failed while the peer cannot be reached, and active once it answers', async (t) => {
    const s = await Setup.create(t);
    await until("the peer's features listed", () => s.features.advertised() !== undefined);
    s.proxy.garble();
    const { binding } = s.bind(rule('r'));
    await until('failed', () => phaseIs(binding, 'failed'));
    assert.match(binding.message, /^GET \/api: 503 /);
    assert.equal(binding.denied, false);
    s.proxy.unblock();
    await until('active once reached', () => phaseIs(binding, 'active'));
  });

  it('turns failed with the error when its watch on the peer starts failing, keeping what it read readable but no longer synced', async (t) => {
    const s = await Setup.create(t);
    s.peer.put(source('ns', 'a'));
    const { binding } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active') && s.peer.openWatches('configmaps') === 1);
    s.proxy.garble();
    await until('failed', () => phaseIs(binding, 'failed'));
    assert.match(binding.message, /^reading the rule's objects on the peer fails: ./);
    assert.deepEqual({ readable: binding.readable, synced: binding.synced, a: binding.get('ns', 'a')?.metadata.name }, { readable: true, synced: false, a: 'a' });
  });

  it('turns active again, and calls onActive again, once its failing watch on the peer recovers', async (t) => {
    const s = await Setup.create(t);
    const { binding, activations } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active') && s.peer.openWatches('configmaps') === 1);
    s.proxy.garble();
    // Its health check would see the failure within seconds; the test asks for it at once.
    await until('failed', () => {
      binding.retry();
      return phaseIs(binding, 'failed');
    });
    s.proxy.unblock();
    // The watch says it is well again with its first event.
    s.peer.put(source('ns', 'a'));
    await eventually('active again', () => phaseIs(binding, 'active'), 30_000);
    assert.equal(activations.length, 2);
  });

  it('takes a fault of its own loop for an internal error, lets go of its watches and starts over', async (t) => {
    const s = await Setup.create(t);
    s.peer.put(source('ns', 'a'));
    let faults = 0;
    const { binding, activations } = s.bind(rule('r'), {
      onActive: () => {
        if (faults++ === 0) throw new Error('boom');
      },
    });
    await until('failed', () => phaseIs(binding, 'failed'));
    assert.equal(binding.message, 'internal error: boom');
    assert.deepEqual(binding.lookup('ns', 'a'), { inScope: false });
    binding.retry();
    await until('active again', () => phaseIs(binding, 'active') && activations.length === 2);
    assert.equal(binding.get('ns', 'a')?.metadata.name, 'a');
  });

  it('names a kind not served with its group and version, a core kind by its version alone', () => {
    assert.equal(kindNotServed(WIDGET, 'here'), 'kind Widget of example.com/v1 is not served here (is its CustomResourceDefinition installed?)');
    assert.equal(kindNotServed({ group: '', version: 'v1', kind: 'ConfigMap' }, 'on the peer'), 'kind ConfigMap of v1 is not served on the peer (is its CustomResourceDefinition installed?)');
  });
});

describe('Binding queue', { concurrency: true }, () => {
  it('queues each source object on the peer under its rule, peer, namespace and name, with the object', async (t) => {
    const s = await Setup.create(t);
    const a = s.peer.put(source('ns', 'a'));
    const r = rule('r');
    const { binding, queued } = s.bind(r);
    await until('active', () => phaseIs(binding, 'active'));
    const b = s.peer.put(source('other', 'b'));
    await until('both queued', () => queued.length === 2);
    assert.deepEqual(queued, [
      { key: keyOf(r, a), source: a },
      { key: keyOf(r, b), source: b },
    ]);
  });

  it('does not queue an object carrying our own ownership mark: the echo of a copy we made', async (t) => {
    const s = await Setup.create(t);
    const r = rule('r');
    const { binding, queued } = s.bind(r);
    await until('active', () => phaseIs(binding, 'active'));
    s.peer.put(source('ns', 'echo', LOCAL_ID));
    const theirs = s.peer.put(source('ns', 'theirs', 'p1-uid'));
    await until("the peer's own queued", () => queued.length > 0);
    assert.deepEqual(
      queued.map((q) => q.key),
      [keyOf(r, theirs)],
    );
  });

  it('queues the deletion of any object, ours included, with no source to look at', async (t) => {
    const s = await Setup.create(t);
    const ours = s.peer.put(source('ns', 'echo', LOCAL_ID));
    const r = rule('r');
    const { binding, queued } = s.bind(r);
    await until('active', () => phaseIs(binding, 'active'));
    s.peer.remove(ours);
    await until('the deletion queued', () => queued.length > 0);
    assert.deepEqual(queued, [{ key: keyOf(r, ours), source: undefined }]);
  });

  it('does not queue an update that changes only what a copy never carries', async (t) => {
    const s = await Setup.create(t);
    const a = s.peer.put(source('ns', 'a'));
    const b = s.peer.put(source('ns', 'b'));
    const r = rule('r');
    const { binding, queued } = s.bind(r);
    await until('both listed', () => phaseIs(binding, 'active') && queued.length === 2);
    s.peer.put({ ...a, status: { seen: true } });
    const changed = s.peer.put({ ...b, data: { k: 'changed' } });
    await until('the change queued', () => queued.length === 3);
    assert.deepEqual(queued[2], { key: keyOf(r, b), source: changed });
  });

  it('calls onActive each time it becomes active, with its cache listed', async (t) => {
    const s = await Setup.create(t);
    const istio = s.peer.put(feature('istio'));
    s.peer.put(source('ns', 'a'));
    const { binding, activations } = s.bind(rule('r', { features: [{ featureName: 'istio' }] }));
    await until('active', () => phaseIs(binding, 'active'));
    s.peer.remove(istio);
    await until('featuresUnmet', () => phaseIs(binding, 'featuresUnmet'));
    s.peer.put(feature('istio'));
    await until('active again', () => phaseIs(binding, 'active') && activations.length === 2);
    assert.deepEqual(activations, [
      { synced: true, readable: true, objects: ['a'] },
      { synced: true, readable: true, objects: ['a'] },
    ]);
  });
});

describe('Binding cache', { concurrency: true }, () => {
  it('answers every lookup as out of its scope, and lists nothing, while its watches are not open', async (t) => {
    const s = await Setup.create(t);
    s.peer.put(source('ns', 'a'));
    const { binding } = s.bind(rule('r', { features: [{ featureName: 'istio' }] }));
    await until('featuresUnmet', () => phaseIs(binding, 'featuresUnmet'));
    assert.deepEqual({ lookup: binding.lookup('ns', 'a'), get: binding.get('ns', 'a'), list: binding.list(), readable: binding.readable }, { lookup: { inScope: false }, get: undefined, list: [], readable: false });
  });

  it("looks a source up in the peer's cache: the object when the peer has it, none when it has not", async (t) => {
    const s = await Setup.create(t);
    const a = s.peer.put(source('ns', 'a'));
    const { binding } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active'));
    const found = binding.lookup('ns', 'a');
    assert.ok(found.inScope);
    assert.deepEqual(found.object, a);
    // Its cache here has no budget: what working on it holds is its size as JSON.
    assert.equal(found.bytes(), chargedSize(a));
    const missing = binding.lookup('ns', 'missing');
    assert.ok(missing.inScope);
    assert.equal(missing.object, undefined);
    assert.equal(missing.bytes(), 0);
  });

  it('watches only the namespaces its rule reads, one watch each, and answers others as out of scope', async (t) => {
    const s = await Setup.create(t);
    const a = s.peer.put(source('a', 'x'));
    const b = s.peer.put(source('b', 'y'));
    s.peer.put(source('c', 'z'));
    const { binding } = s.bind(rule('r', { match: [{ namespaces: ['a', 'b'] }] }));
    await until('active', () => phaseIs(binding, 'active'));
    const watched = reads(s.peer, 'configmaps').filter((r) => r.verb === 'watch').map((r) => r.namespace);
    assert.deepEqual(watched.sort(), ['a', 'b']);
    assert.deepEqual(binding.list().sort((p, q) => (p.metadata.name ?? '').localeCompare(q.metadata.name ?? '')), [a, b]);
    assert.deepEqual(binding.get('b', 'y'), b);
    assert.deepEqual(binding.lookup('c', 'z'), { inScope: false });
  });

  it('watches only the object its rule names, through a field selector', async (t) => {
    const s = await Setup.create(t);
    const wanted = s.peer.put(source('ns', 'wanted'));
    s.peer.put(source('ns', 'other'));
    const { binding } = s.bind(rule('r', { match: [{ objectKey: { name: 'wanted' } }] }));
    await until('active', () => phaseIs(binding, 'active'));
    assert.deepEqual(
      reads(s.peer, 'configmaps').map((r) => r.fieldSelector),
      ['metadata.name=wanted', 'metadata.name=wanted'],
    );
    assert.deepEqual(binding.list(), [wanted]);
    assert.deepEqual(binding.lookup('ns', 'other'), { inScope: false });
  });

  it('leaves out of its watches what the peer copied from us, and what it passes on for settled owners', async (t) => {
    const s = await Setup.create(t);
    const labelled = (name: string, owner: string): KubeObject => {
      const o = source('ns', name, owner);
      return { ...o, metadata: { ...o.metadata, labels: { [LABELS.ownership]: owner } } };
    };
    const own = s.peer.put(source('ns', 'own'));
    const relayed = s.peer.put(labelled('relayed', 'third-uid'));
    const settledRelay = s.peer.put(labelled('settled-relay', 'settled-uid'));
    s.peer.put(labelled('ours', LOCAL_ID));
    s.settled.add('settled-uid');
    // The peer itself is never left out, even when it counts as settled.
    s.settled.add(PEER.id);
    const ownLabelled = s.peer.put(labelled('own-labelled', PEER.id));
    const { binding, activations } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active'));
    const selectors = () => new Set(s.peer.requests.filter((r) => r.path.endsWith('/configmaps')).map((r) => r.query.get('labelSelector')));
    assert.deepEqual(selectors(), new Set([`${LABELS.ownership} notin (${LOCAL_ID},settled-uid)`]));
    const names = () => binding.list().map((o) => o.metadata.name).sort();
    assert.deepEqual(names(), [own, relayed, ownLabelled].map((o) => o.metadata.name).sort());
    assert.equal(binding.synced, true);
    assert.deepEqual([LOCAL_ID, 'settled-uid', 'third-uid', PEER.id, ''].map((id) => binding.watchesOwner(id)), [false, false, true, true, true]);
    // What the watches leave out is still there when the peer is asked; what went is not.
    const signal = new AbortController().signal;
    assert.equal(await binding.goneFromPeer('ns', 'settled-relay', signal), false);
    assert.equal(await binding.goneFromPeer('ns', 'never-there', signal), true);

    // The settled owner stops answering: the peer's copies of its objects are listed beside the
    // current watches, which answer meanwhile (what they leave out still counts as unseen).
    s.settled.delete('settled-uid');
    const before = activations.length;
    binding.retry();
    await until('the relays watched again', () => names().includes('settled-relay'));
    assert.deepEqual(names(), [own, relayed, settledRelay, ownLabelled].map((o) => o.metadata.name).sort());
    assert.equal(binding.synced, true);
    assert.equal(binding.watchesOwner('settled-uid'), true);
    assert.ok(selectors().has(`${LABELS.ownership} notin (${LOCAL_ID})`));
    // Everything is looked at again once the new watches took over.
    assert.equal(activations.length, before + 1);
    assert.equal(s.peer.openWatches('configmaps'), 1, 'the old watch let go');
  });

  it('narrows its watches without listing when an owner settles: the new ones start from what the current hold and take over at once', async (t) => {
    const s = await Setup.create(t);
    const labelled = (name: string, owner: string): KubeObject => {
      const o = source('ns', name, owner);
      return { ...o, metadata: { ...o.metadata, labels: { [LABELS.ownership]: owner } } };
    };
    s.peer.put(source('ns', 'own'));
    s.peer.put(labelled('relayed', 'third-uid'));
    const { binding, activations, queued, leftOut } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active'));
    const lists = () => reads(s.peer, 'configmaps').filter((r) => r.verb === 'list').length;
    const names = () => binding.list().map((o) => o.metadata.name).sort();
    assert.deepEqual([lists(), names(), activations.length], [1, ['own', 'relayed'], 1]);
    const told = queued.length;

    s.settled.add('third-uid');
    binding.retry();
    await until('the settled owner left out', () => !binding.watchesOwner('third-uid'));
    assert.deepEqual(names(), ['own'], 'what the peer passes on for the settled owner left the cache');
    assert.equal(binding.synced, true);
    assert.equal(lists(), 1, 'the new watches listed nothing');
    assert.equal(activations.length, 1, 'nothing is looked at again');
    assert.equal(queued.length, told, 'the sync is told of nothing it knew');
    assert.deepEqual(leftOut, [['third-uid']], 'only of the copies made from what is now left out');
    await until('the old watch let go, the new one open', () => s.peer.openWatches('configmaps') === 1 && reads(s.peer, 'configmaps').some((r) => r.verb === 'watch' && r.labelSelector?.includes('third-uid') === true));
    // The new watch goes on from where the old one was: what changes next is seen.
    s.peer.put(source('ns', 'later'));
    await until('a later object seen', () => names().includes('later'));
    assert.ok(queued.slice(told).some((q) => q.key[3] === 'later'));
    assert.equal(lists(), 1);
  });

  it('widens its watches onto a cache another rule listed already, and is told of all it holds', async (t) => {
    const s = await Setup.create(t);
    const o = source('ns', 'relayed', 'third-uid');
    s.peer.put({ ...o, metadata: { ...o.metadata, labels: { [LABELS.ownership]: 'third-uid' } } });
    s.peer.put(source('ns', 'own'));
    s.settled.add('third-uid');
    const one = s.bind(rule('one'));
    const two = s.bind(rule('two'));
    await until('both active', () => phaseIs(one.binding, 'active') && phaseIs(two.binding, 'active'));
    assert.equal(two.binding.watchesOwner('third-uid'), false);
    // The owner stops answering: the first rule's wider watches list; the second's find them listed,
    // at the very version its own narrower ones are at.
    s.settled.delete('third-uid');
    one.binding.retry();
    await until('the first rule widened', () => one.binding.watchesOwner('third-uid'));
    // The case that matters: the wider cache complete, and at the narrower one's version.
    const versions = new Set(s.informers.all().filter((i) => i.store.getByName('ns', 'own')).map((i) => i.complete && i.lastResourceVersion));
    assert.equal(versions.size, 1, `the caches at one version: ${[...versions].join()}`);
    two.binding.retry();
    await until('the second rule widened', () => two.binding.watchesOwner('third-uid'));
    assert.ok(two.binding.list().some((x) => x.metadata.name === 'relayed'));
    assert.ok(two.queued.some((q) => q.key[3] === 'relayed'), 'the second rule is told of what it did not see before');
  });

  it('keeps its watches answering until the ones with a new filter have listed', async (t) => {
    const s = await Setup.create(t);
    s.peer.put(source('ns', 'own'));
    s.settled.add('gone-uid');
    const { binding } = s.bind(rule('r'));
    await until('active', () => phaseIs(binding, 'active'));
    // The new watches cannot list: the current ones stay, and so does what they leave out.
    s.peer.denyList = (resource) => resource === 'configmaps';
    s.settled.delete('gone-uid');
    binding.retry();
    await until('the new listing tried', () => s.peer.requests.filter((r) => r.path.endsWith('/configmaps') && r.query.get('watch') !== '1').length >= 2);
    assert.equal(binding.watchesOwner('gone-uid'), false);
    assert.equal(binding.readable, true);
    assert.deepEqual(binding.list().map((o) => o.metadata.name), ['own']);
  });

  it('shares one watch with another rule reading the same kind and scope on that peer, until both let it go', async (t) => {
    const s = await Setup.create(t);
    const a = s.peer.put(source('ns', 'a'));
    const one = s.bind(rule('one'));
    const two = s.bind(rule('two'));
    await until('both active', () => phaseIs(one.binding, 'active') && phaseIs(two.binding, 'active'));
    assert.equal(reads(s.peer, 'configmaps').filter((r) => r.verb === 'list').length, 1, 'one list');
    assert.equal(s.peer.openWatches('configmaps'), 1);
    one.binding.close();
    assert.deepEqual(two.binding.get('ns', 'a'), a, 'the other keeps its cache');
    s.peer.put(source('ns', 'b'));
    await until('the other still watching', () => two.binding.get('ns', 'b') !== undefined);
    two.binding.close();
    await until('the watch closed', () => s.peer.openWatches('configmaps') === 0);
  });

  it(
    'reports no phase once closed while it was still looking its kind up',
    async (t) => {
      let answer!: () => void;
      const s = await Setup.create(t, { discoveryGate: new Promise<void>((r) => (answer = r)) });
      // A rule with an empty rule list reads no namespace at all.
      const spec: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [] };
      const { binding, phases } = s.bind(ruleState('empty', spec, undefined, NAMESPACE));
      await until('looking the kind up', () => s.peerDiscovery instanceof GatedDiscovery && s.peerDiscovery.asked === 1);
      const witness = s.bind(rule('w'));
      binding.close();
      const reported = phases.length;
      answer();
      await until('the other one active', () => phaseIs(witness.binding, 'active'));
      assert.deepEqual(phases.slice(reported), []);
    },
  );

  it('reports no phase once closed', async (t) => {
    const s = await Setup.create(t);
    const istio = s.peer.put(feature('istio'));
    const gated = rule('r', { features: [{ featureName: 'istio' }] });
    const closed = s.bind(gated);
    const witness = s.bind(rule('w', { features: [{ featureName: 'istio' }] }));
    await until('both active', () => phaseIs(closed.binding, 'active') && phaseIs(witness.binding, 'active'));
    closed.binding.close();
    const reported = closed.phases.length;
    s.peer.remove(istio);
    await until('the other one featuresUnmet', () => phaseIs(witness.binding, 'featuresUnmet'));
    assert.equal(closed.phases.length, reported);
    assert.equal(closed.binding.phase, 'active');
  });
});

describe('Binding reach', { concurrency: true }, () => {
  const NOW = Date.parse('2030-01-01T12:00:00Z');
  const MINUTE = 60_000;

  /** A binding whose peer's registry holds `clusters`, listed. */
  async function withRegistry(t: TestContext, clusters: Cluster[]): Promise<{ s: Setup; binding: Binding }> {
    const s = await Setup.create(t);
    for (const c of clusters) s.peer.put(c);
    s.peer.put(registered('marker', 'marker-uid', NOW));
    const { binding } = s.bind(rule('r'));
    await until("the peer's registry listed", () => binding.reaches('marker-uid', NOW));
    return { s, binding };
  }

  it("reaches its own peer whatever the peer's registry says", async (t) => {
    const { binding } = await withRegistry(t, [registered('p1', PEER.id, NOW - 60 * MINUTE, 'Failed')]);
    assert.equal(binding.reaches(PEER.id, NOW), true);
  });

  it("reaches a cluster the peer's registry shows Ready with a recent heartbeat", async (t) => {
    const { binding } = await withRegistry(t, [registered('c3', 'c3-uid', NOW - MINUTE)]);
    assert.equal(binding.reaches('c3-uid', NOW), true);
  });

  it('does not take a Ready older than the freshness window, nor a cluster not Ready, for reach', async (t) => {
    const { binding } = await withRegistry(t, [registered('stale', 'stale-uid', NOW - 11 * MINUTE), registered('down', 'down-uid', NOW, 'Failed')]);
    assert.equal(binding.reaches('stale-uid', NOW), false);
    assert.equal(binding.reaches('down-uid', NOW), false);
    assert.equal(binding.reaches('unknown-uid', NOW), false);
  });

  it("does not take the peer's word from before we lost that cluster ourselves, only newer word", async (t) => {
    const { s, binding } = await withRegistry(t, [registered('c3', 'c3-uid', NOW - MINUTE)]);
    s.lost.set('c3-uid', NOW - MINUTE / 2);
    assert.equal(binding.reaches('c3-uid', NOW), false, 'its heartbeat is older than our loss');
    s.lost.set('c3-uid', NOW - 2 * MINUTE);
    assert.equal(binding.reaches('c3-uid', NOW), true, 'its heartbeat is newer than our loss');
  });

  it("finds the peer's own Cluster in the peer's registry by the peer's name", async (t) => {
    const own = registered('p1', PEER.id, NOW);
    const { binding } = await withRegistry(t, [own]);
    assert.deepEqual({ id: binding.peerRef.id, name: binding.peerRef.name, own: binding.peerRef.ownCluster()?.spec.clusterID }, { id: PEER.id, name: PEER.name, own: PEER.id });
  });
});

// The resource sync: every rule bound to every verified peer, one work queue of (rule, peer,
// object) keys, the local copies watched once per kind, a collector for copies that outlived
// their source, and rule status. It runs for one leader term; nothing of it outlives the term.
import { CLUSTER_STATES, CLUSTERS, CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, RESOURCE_SYNC_RULES, sourceIdentityOf, type FullGVK, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { LABELS } from '../core/api/index.ts';
import { ownerOf, sourceScope, targetNamespaces } from '../core/rules/index.ts';
import {
  Controller,
  type Discovery,
  type EventRecorder,
  type Informer,
  type InformerFactory,
  type Logger,
  type RestClient,
} from '../kube/index.ts';
import { Binding, type SyncPeer } from './binding.ts';
import { Collector } from './collector.ts';
import { LocalCopies } from './copies.ts';
import { PeerFeatures } from './features.ts';
import { SYNC_KEY_CODEC, syncKey, type SyncKey } from './keys.ts';
import { SyncReconciler } from './reconciler.ts';
import { BUILTIN_PREFIX, RuleBook, builtinRules, type RuleState } from './rules.ts';
import { RuleStatusReporter } from './status.ts';
import { CopyWriter } from './writer.ts';

/** Where verified peers come from (the peer manager, through an adapter). */
export interface PeerSource {
  subscribe(listener: { opened(peer: SyncPeer): void; closed(name: string): void; healthChanged(): void }): () => void;
  aliveIDs(): ReadonlySet<string>;
}

export interface SyncSettings {
  /** Concurrent reconciles. */
  readonly workers: number;
  /** Per object and binding, as upstream's syncController.rateLimit settings. */
  readonly rateLimit: { ratePerSecond: number; burst: number; maxKeys: number };
  /** How long a copy stays after it became an orphan. */
  readonly gcGracePeriodMs: number;
  /** How often orphans are looked for. */
  readonly gcIntervalMs: number;
  /** At most one status write per rule this often. */
  readonly statusIntervalMs: number;
}

export interface SyncEngineOptions {
  readonly local: RestClient;
  readonly localFactory: InformerFactory;
  readonly localDiscovery: Discovery;
  readonly localClusterID: string;
  /** The controller namespace (the core and built-in rules read credentials there). */
  readonly namespace: string;
  readonly peers: PeerSource;
  /** The local registry's Clusters. */
  readonly clusters: Informer<Cluster>;
  /** Records on ResourceSyncRules (upstream's `cluster-controller` recorder). */
  readonly events: EventRecorder;
  readonly settings: SyncSettings;
  readonly log: Logger;
}

export class SyncEngine {
  private readonly o: SyncEngineOptions;
  private readonly log: Logger;
  private readonly bindings = new Map<string, Map<string, Binding>>();
  private readonly peers = new Map<string, { peer: SyncPeer; features: PeerFeatures; unsubscribe: () => void }>();
  private readonly namespaceWaiters = new Map<string, Set<string>>();
  private readonly deathWaiters = new Map<string, Set<string>>();
  /** By `<peer>|<clusterID>`: keys waiting for a peer to reach another cluster. */
  private readonly reachWaiters = new Map<string, Set<string>>();
  /** What each rule's copies are watched as, to release exactly that. */
  private readonly copyWatches = new Map<string, { gvks: readonly FullGVK[]; namespaces: readonly string[] | undefined }>();
  private rules!: RuleBook;
  private copies!: LocalCopies;
  private controller!: Controller<SyncKey>;
  private status!: RuleStatusReporter;
  private collector!: Collector;
  private namespaces!: Informer;

  constructor(opts: SyncEngineOptions) {
    this.o = opts;
    this.log = opts.log.child({ component: 'sync' });
  }

  /** Runs until the signal aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const o = this.o;
    const rulesInformer = o.localFactory.forResource<ResourceSyncRule>({ ...RESOURCE_SYNC_RULES });
    this.namespaces = o.localFactory.forResource({ ...NAMESPACES });
    this.rules = new RuleBook(rulesInformer, builtinRules(o.namespace));
    this.copies = new LocalCopies({ factory: o.localFactory, discovery: o.localDiscovery, onEvent: (copy) => this.routeCopy(copy), log: this.log });
    this.status = new RuleStatusReporter({ rest: o.local, log: this.log });
    const writer = new CopyWriter(o.local);
    const reconciler = new SyncReconciler({
      rules: this.rules,
      binding: (rule, peer) => this.bindings.get(rule)?.get(peer),
      copies: this.copies,
      writer,
      localDiscovery: o.localDiscovery,
      localClusterID: o.localClusterID,
      clusters: () => o.clusters.store.list(),
      aliveIDs: () => o.peers.aliveIDs(),
      recordedSourceLive: (id) => this.recordedSourceLive(id),
      namespaceExists: (name) => this.namespaces.store.getByName(undefined, name) !== undefined,
      awaitNamespace: (name, key) => this.await(this.namespaceWaiters, name, key),
      awaitDeath: (id, key) => this.await(this.deathWaiters, id, key),
      awaitReach: (peer, id, key) => this.await(this.reachWaiters, `${peer}|${id}`, key),
      status: this.status,
      events: o.events,
      log: this.log,
    });
    this.controller = new Controller<SyncKey>({ name: 'sync', codec: SYNC_KEY_CODEC, reconcile: reconciler.reconcile, workers: o.settings.workers, logger: this.log });
    this.collector = new Collector({
      engine: this,
      copies: this.copies,
      writer,
      localDiscovery: o.localDiscovery,
      localClusterID: o.localClusterID,
      clusters: () => o.clusters.store.list(),
      registeredIDs: () => new Set(o.clusters.store.list().map((c) => c.spec?.clusterID ?? '')),
      aliveIDs: () => o.peers.aliveIDs(),
      graceMs: o.settings.gcGracePeriodMs,
      enqueue: (k) => this.controller.enqueue(k),
      events: o.events,
      log: this.log,
    });

    // A kind a rule needs here may be installed later: bindings waiting for it try again at once.
    const crds = o.localFactory.forResource<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>({ ...CUSTOM_RESOURCE_DEFINITIONS });
    const established = (c: KubeObject & { status?: { conditions?: { type: string; status: string }[] } }): boolean => c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ?? false;
    const cleanup: (() => void)[] = [];
    cleanup.push(
      crds.addEventHandler({
        onUpdate: (a, b) => {
          if (!established(a) && established(b)) void o.localDiscovery.refresh().then(() => this.retryFailed(), () => undefined);
        },
      }),
      this.namespaces.addEventHandler({ onAdd: (ns) => this.release(this.namespaceWaiters, ns.metadata.name ?? '') }),
      this.rules.subscribe((name, state) => this.setRule(name, state)),
      this.rules.start(),
      o.peers.subscribe({
        opened: (peer) => this.addPeer(peer),
        closed: (name) => this.removePeer(name),
        healthChanged: () => {
          const alive = o.peers.aliveIDs();
          for (const id of [...this.deathWaiters.keys()]) if (!alive.has(id)) this.release(this.deathWaiters, id);
          this.collector.kick();
        },
      }),
    );
    try {
      await Promise.all([
        this.controller.start(signal, [rulesInformer, o.clusters, this.namespaces]),
        this.status.run(() => this.rules.all(), o.settings.statusIntervalMs, signal),
        this.collector.run(o.settings.gcIntervalMs, signal),
      ]);
    } finally {
      for (const c of cleanup) c();
      for (const name of [...this.peers.keys()]) this.removePeer(name);
      this.copies.close();
    }
  }

  // ------------------------------------------------------------------ what the collector asks

  rule(name: string): RuleState | undefined {
    return this.rules.get(name);
  }

  allRules(): RuleState[] {
    return this.rules.all();
  }

  bindingsOf(rule: string): Binding[] {
    return [...(this.bindings.get(rule)?.values() ?? [])];
  }

  /** Wakes every binding waiting to retry (a kind may be served now). */
  retryFailed(): void {
    for (const m of this.bindings.values()) for (const b of m.values()) if (b.phase === 'failed') b.retry();
  }

  /**
   * Whether a copy's recorded source can still deliver it: its peer alive, its rule bound there,
   * the object present and matching (while the binding is still listing, it is given the benefit
   * of the doubt, so a restart never hands copies around).
   */
  recordedSourceLive(id: SourceIdentity): boolean {
    if (!id.rule || !this.o.peers.aliveIDs().has(id.clusterID)) return false;
    const rule = this.rules.get(id.rule);
    const b = this.bindingsOf(id.rule).find((x) => x.peer.id === id.clusterID);
    if (!rule?.compiled || !b || b.phase === 'featuresUnmet' || b.phase === 'failed') return false;
    if (!b.synced) return true;
    const source = b.get(id.namespace, id.name);
    if (!source || source.metadata.deletionTimestamp || ownerOf(source) === this.o.localClusterID || sourceIdentityOf(source)?.clusterID === this.o.localClusterID) return false;
    const owner = ownerOf(source);
    if (owner && owner !== b.peer.id && !b.reaches(owner)) return false;
    if (rule.accepts && !rule.accepts(source, b.peer.id)) return false;
    return rule.compiled.match(source).matched;
  }

  // ------------------------------------------------------------------ rules and peers

  private setRule(name: string, state: RuleState | undefined): void {
    for (const b of this.bindings.get(name)?.values() ?? []) b.close();
    this.bindings.delete(name);
    const watched = this.copyWatches.get(name);
    this.copyWatches.delete(name);
    for (const g of watched?.gvks ?? []) this.copies.release(g, watched?.namespaces);
    if (!state) {
      this.status.drop(name);
      this.collector.kick();
      return;
    }
    this.status.drop(name);
    const namespaces = targetNamespaces(state.spec, sourceScope(state.spec, true));
    this.copyWatches.set(name, { gvks: state.targetGVKs, namespaces });
    for (const g of state.targetGVKs) this.copies.acquire(g, namespaces);
    if (!state.compiled) {
      this.log.warn({ rule: name, issues: state.issues }, 'invalid rule; it syncs nothing until fixed');
      if (state.object) this.o.events.event(state.object, 'Warning', 'InvalidRule', state.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
      this.bindings.set(name, new Map());
      return;
    }
    const m = new Map<string, Binding>();
    this.bindings.set(name, m);
    for (const { peer, features } of this.peers.values()) m.set(peer.name, this.bind(state, peer, features));
    this.collector.kick();
  }

  private addPeer(peer: SyncPeer): void {
    this.removePeer(peer.name);
    const features = new PeerFeatures(peer.clients.informers);
    // What the peer reaches gates what it may pass on: a cluster it starts to reach unblocks keys.
    const reached = (c: Cluster): void => {
      if (c.status?.state === CLUSTER_STATES.ready) this.release(this.reachWaiters, `${peer.name}|${c.spec?.clusterID ?? ''}`);
    };
    const unsubscribe = peer.clients.informers.forResource<Cluster>({ ...CLUSTERS }).addEventHandler({ onAdd: reached, onUpdate: (_a, b) => reached(b) });
    this.peers.set(peer.name, { peer, features, unsubscribe });
    for (const [name, m] of this.bindings) {
      const rule = this.rules.get(name);
      if (rule?.compiled) m.set(peer.name, this.bind(rule, peer, features));
    }
  }

  private removePeer(name: string): void {
    const p = this.peers.get(name);
    if (!p) return;
    this.peers.delete(name);
    for (const [rule, m] of this.bindings) {
      m.get(name)?.close();
      m.delete(name);
      this.status.drop(rule, name);
    }
    p.features.close();
    p.unsubscribe();
    for (const k of [...this.reachWaiters.keys()]) if (k.startsWith(`${name}|`)) this.reachWaiters.delete(k);
    this.collector?.kick();
  }

  private bind(rule: RuleState, peer: SyncPeer, features: PeerFeatures): Binding {
    const b = new Binding({
      rule,
      peer,
      features,
      local: this.o.local,
      localDiscovery: this.o.localDiscovery,
      localClusterID: this.o.localClusterID,
      rateLimit: this.o.settings.rateLimit,
      enqueue: (k) => this.controller.enqueue(k),
      onPhase: (x) => {
        this.status.phase(x);
        if (x.phase === 'featuresUnmet') this.collector.kick();
      },
      onActive: (x) => this.antiEntropy(x),
      log: this.log,
    });
    this.status.phase(b);
    b.start();
    return b;
  }

  /**
   * On every (re)start of a binding: every source object it sees, and every copy recorded as made
   * from that peer by that rule, so deletes that happened while no one watched are found.
   */
  private antiEntropy(b: Binding): void {
    for (const o of b.list()) this.controller.enqueue(syncKey(b.rule.name, b.peer.name, o.metadata.namespace, o.metadata.name ?? ''));
    for (const gvk of b.rule.targetGVKs) {
      for (const copy of this.copies.all(gvk)) {
        const id = sourceIdentityOf(copy);
        if (id?.clusterID === b.peer.id && (id.rule ?? b.rule.name) === b.rule.name) this.controller.enqueue(syncKey(b.rule.name, b.peer.name, id.namespace, id.name));
      }
    }
  }

  // ------------------------------------------------------------------ events on local copies

  /** A copy changed or went: look at the source it records, through the rule and peer that made it. */
  private routeCopy(copy: KubeObject): void {
    const id = sourceIdentityOf(copy);
    if (id) {
      const rules = id.rule ? [id.rule] : this.rulesFrom(id.group, id.kind);
      for (const r of rules) for (const b of this.bindingsOf(r)) if (b.peer.id === id.clusterID) this.controller.enqueue(syncKey(r, b.peer.name, id.namespace, id.name));
      return;
    }
    // Made by another implementation: upstream's labels and the owner say where it came from.
    const owner = ownerOf(copy);
    const name = copy.metadata.labels?.[LABELS.originalName] ?? copy.metadata.name ?? '';
    const namespace = copy.metadata.labels?.[LABELS.originalNamespace] ?? copy.metadata.namespace ?? '';
    for (const [r, m] of this.bindings) {
      for (const b of m.values()) if (b.peer.id === owner && !r.startsWith(BUILTIN_PREFIX)) this.controller.enqueue(syncKey(r, b.peer.name, namespace, name));
    }
  }

  private rulesFrom(group: string, kind: string): string[] {
    return this.rules.all().filter((r) => r.sourceGVK.group === group && r.sourceGVK.kind === kind).map((r) => r.name);
  }

  private await(waiters: Map<string, Set<string>>, on: string, key: SyncKey): void {
    let set = waiters.get(on);
    if (!set) waiters.set(on, (set = new Set()));
    set.add(SYNC_KEY_CODEC.encode(key));
  }

  private release(waiters: Map<string, Set<string>>, on: string): void {
    const set = waiters.get(on);
    if (!set) return;
    waiters.delete(on);
    for (const k of set) this.controller.enqueue(SYNC_KEY_CODEC.decode(k));
  }
}

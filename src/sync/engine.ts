// The resource sync: every rule bound to every verified peer, one work queue of (rule, peer,
// object) keys, the local copies watched once per kind, a collector for copies that outlived
// their source, and rule status. It runs for one leader term; nothing of it outlives the term.
import {
  CLUSTERS,
  CUSTOM_RESOURCE_DEFINITIONS,
  crdEstablished,
  NAMESPACES,
  RESOURCE_SYNC_RULES,
  SYNC_EVENT_REASONS,
  type SourceIdentity,
} from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../core/api/types.ts';
import { changedBeyondHeartbeats } from '../core/registry/index.ts';
import { CopyTargets, drainedWatchNeeded, formatIssue, ownerOf, type CopyWatch, type RuleState, sourceScope, standsAt, targetNamespaces } from '../core/rules/index.ts';
import type { ObjectPlace, TrustFacts } from '../core/trust/index.ts';
import { Controller, holding, SliceDriver, sleep, type Steps, type CacheLimits, type Discovery, type EventRecorder, type Informer, InformerFactory, type Logger, type AccessReviewer, type ObjectClient } from '../kube/index.ts';
import { credentialsTarget } from '../peers/connection.ts';
import { Binding, liveSource, type SyncPeer } from './binding.ts';
import { Collector, type SweptCopies } from './collector.ts';
import { LocalCopies, trimCopyManagedFields } from './copies.ts';
import { PeerFeatures } from './features.ts';
import { SYNC_KEY_CODEC, type SyncKey } from './keys.ts';
import { SyncReconciler } from './reconciler.ts';
import { EventRouter } from './routing.ts';
import { RuleBook } from './rule-book.ts';
import { phaseWarning, RuleStatusReporter } from './status.ts';
import { Waiters } from './waiters.ts';
import type { SyncView } from './view.ts';
import { CopyWriter } from './writer.ts';

/** Where verified peers come from (the peer manager, through an adapter). */
export interface PeerSource {
  subscribe(listener: { opened(peer: SyncPeer): void; closed(name: string): void; healthChanged(): void }): () => void;
  aliveIDs(): ReadonlySet<string>;
}

/** How often, and how far apart, discovery is read again until an established CRD's kind shows in it. */
const DISCOVERY_LAG_ATTEMPTS = 10;
const DISCOVERY_LAG_PAUSE_MS = 300;

/**
 * How long a cluster must have answered us before what peers pass on for it is left out of their
 * watches: a cluster that comes and goes keeps its relays watched, instead of every binding
 * listing its peer again at each turn.
 */
export const RELAY_SETTLE_MS = 30_000;

/** Old copy watches one rule may hold at once while its copies are collected (see drain). */
const MAX_DRAINED_PER_RULE = 8;

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
  /** Copies one rule may make here from one peer. */
  readonly maxCopiesPerRule: number;
  /** What the copies all rules make from one peer may hold together. */
  readonly copiesPerPeer: CacheLimits;
  /** How long an owner answers us before peers' copies of its objects are left out of their watches (RELAY_SETTLE_MS). */
  readonly relaySettleMs: number;
}

export interface SyncEngineOptions {
  readonly local: ObjectClient & AccessReviewer;
  readonly localFactory: InformerFactory;
  readonly localDiscovery: Discovery;
  readonly localClusterID: string;
  /** The controller namespace (the core and built-in rules read credentials there). */
  readonly namespace: string;
  /** What the controller keeps for itself here (its webhook's serving Secret): never a copy. */
  readonly reserved: readonly ObjectPlace[];
  /** Namespaces of ours nothing is ever delivered into (the hub credentials'). */
  readonly closedNamespaces: readonly string[];
  readonly peers: PeerSource;
  /** The local registry's Clusters. */
  readonly clusters: Informer<Cluster>;
  /** Records on ResourceSyncRules (upstream's `cluster-controller` recorder). */
  readonly events: EventRecorder;
  readonly settings: SyncSettings;
  readonly log: Logger;
}

export class SyncEngine implements SyncView {
  private readonly o: SyncEngineOptions;
  private readonly log: Logger;
  private readonly bindings = new Map<string, Map<string, Binding>>();
  private readonly peers = new Map<string, { peer: SyncPeer; features: PeerFeatures; unsubscribe: () => void }>();
  /** What each rule's copies are watched as, to release exactly that. */
  private readonly copyWatches = new Map<string, CopyWatch>();
  /**
   * Watches of rules that went or changed scope, kept so their copies stay visible to the
   * collector until they are collected (or the grace period is over and none records the rule).
   */
  private readonly draining: { rule: string; watch: CopyWatch; since: number }[] = [];
  private alive = new Set<string>();
  /** When each cluster we reached stopped answering us (see Binding.reaches). */
  private readonly lostAt = new Map<string, number>();
  /** Since when each cluster that answers us has, without a break. */
  private readonly aliveSince = new Map<string, number>();
  /** Since when each binding has had its caches listed, without a break. */
  private readonly readableSince = new WeakMap<Binding, number>();
  private rules!: RuleBook;
  private copies!: LocalCopies;
  private targets!: CopyTargets;
  private waiters!: Waiters;
  private controller!: Controller<SyncKey>;
  private status!: RuleStatusReporter;
  private collector!: Collector;
  private router!: EventRouter;
  private namespaces!: Informer;
  private rulesInformer!: Informer<ResourceSyncRule>;

  constructor(opts: SyncEngineOptions) {
    this.o = opts;
    this.log = opts.log.child({ component: 'sync' });
  }

  /** Runs until the signal aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const o = this.o;
    const rulesInformer = (this.rulesInformer = o.localFactory.forResource<ResourceSyncRule>({ ...RESOURCE_SYNC_RULES }));
    this.namespaces = o.localFactory.forResource({ ...NAMESPACES });
    this.controller = new Controller<SyncKey>({ name: 'sync', codec: SYNC_KEY_CODEC, reconcile: (k, s) => reconciler.reconcile(k, s), workers: o.settings.workers, logger: this.log });
    this.waiters = new Waiters((k) => this.controller.enqueue(k));
    this.rules = new RuleBook(rulesInformer, o.namespace);
    // The copies' watches are the sync's own (a label selector no one else uses), trimmed to what it reads.
    const copiesFactory = new InformerFactory({ cluster: 'local-copies', rest: o.local, discovery: o.localDiscovery, transform: trimCopyManagedFields, logger: this.log });
    copiesFactory.start(signal);
    this.copies = new LocalCopies({ factory: copiesFactory, discovery: o.localDiscovery, perPeer: o.settings.copiesPerPeer, log: this.log });
    this.targets = new CopyTargets(o.localClusterID);
    // One driver for both: the reconciles' renders and the sweep's take turns with each other.
    const renders = new SliceDriver();
    this.status = new RuleStatusReporter({ rest: o.local, log: this.log });
    const writer = new CopyWriter(o.local, o.localDiscovery);
    this.router = new EventRouter({ view: this, queue: this.controller, waiters: this.waiters, copies: this.copies, writer, status: this.status, maxCopiesPerRule: o.settings.maxCopiesPerRule, alive: () => this.alive });
    this.copies.listen(this.router);
    writer.listen(this.router);
    const reconciler = new SyncReconciler({
      view: this,
      copies: this.copies,
      writer,
      targets: this.targets,
      renders,
      localDiscovery: o.localDiscovery,
      maxCopiesPerRule: o.settings.maxCopiesPerRule,
      waiters: this.waiters,
      status: this.status,
      events: o.events,
      log: this.log,
    });
    this.collector = new Collector({
      view: this,
      copies: this.copies,
      targets: this.targets,
      renders,
      writer,
      localDiscovery: o.localDiscovery,
      graceMs: o.settings.gcGracePeriodMs,
      enqueue: (k) => this.controller.enqueue(k),
      swept: (copies) => this.releaseDrained(copies),
      events: o.events,
      log: this.log,
    });

    // A kind a rule needs here may be installed later: bindings waiting for it try again at once.
    const crds = o.localFactory.forResource({ ...CUSTOM_RESOURCE_DEFINITIONS });
    // A Cluster joining, changing or leaving may unblock copies of what it owns, credentials it
    // names, and templates reading it.
    const registryChanged = (c: Cluster): void => {
      this.targets.registryChanged();
      this.router.registryChanged(c);
    };
    const cleanup: (() => void)[] = [() => this.router.close()];
    cleanup.push(
      crds.addEventHandler({
        onUpdate: (a, b) => {
          if (!crdEstablished(a) && crdEstablished(b)) void this.kindInstalled(b, signal);
        },
      }),
      o.clusters.addEventHandler({ onAdd: registryChanged, onUpdate: (a, b) => changedBeyondHeartbeats(a, b) && registryChanged(b), onDelete: registryChanged }),
      this.namespaces.addEventHandler({ onAdd: (ns) => this.router.namespaceAdded(ns.metadata.name ?? '') }),
      this.rules.subscribe((name, state) => this.setRule(name, state)),
      this.rules.start(),
      o.peers.subscribe({
        opened: (peer) => this.addPeer(peer),
        closed: (name) => this.removePeer(name),
        healthChanged: () => this.healthChanged(),
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

  // ------------------------------------------------------------------ the view the reconciler and the collector read

  get localClusterID(): string {
    return this.o.localClusterID;
  }

  rule(name: string): RuleState | undefined {
    return this.rules.get(name);
  }

  allRules(): RuleState[] {
    return this.rules.all();
  }

  binding(rule: string, peer: string): Binding | undefined {
    return this.bindings.get(rule)?.get(peer);
  }

  bindingsOf(rule: string): Binding[] {
    return [...(this.bindings.get(rule)?.values() ?? [])];
  }

  aliveIDs(): ReadonlySet<string> {
    return this.o.peers.aliveIDs();
  }

  clusters(): readonly Cluster[] {
    return this.o.clusters.store.list();
  }

  namespaceExists(name: string): boolean {
    return this.namespaces.store.getByName(undefined, name) !== undefined;
  }

  trust(): TrustFacts {
    const o = this.o;
    return { localClusterID: o.localClusterID, namespace: o.namespace, clusters: this.clusters(), reserved: o.reserved, closedNamespaces: o.closedNamespaces, credentialsTarget };
  }

  listed(): boolean {
    return this.rulesInformer.hasSynced() && this.o.clusters.hasSynced();
  }

  /**
   * Whether a copy's recorded source can still deliver it: its peer alive, its rule bound there,
   * the object present, taken by the rule to this very place, and (for another cluster's object)
   * the peer still reaching that owner. While the binding is still listing it is given the
   * benefit of the doubt, so a restart never hands copies around.
   */
  *recordedSourceLive(id: SourceIdentity, copy: KubeObject): Steps<boolean> {
    if (!id.rule || !this.o.peers.aliveIDs().has(id.clusterID)) return false;
    const rule = this.rules.get(id.rule);
    const b = this.bindingsOf(id.rule).find((x) => x.peer.id === id.clusterID);
    if (!rule?.compiled || !b || b.phase === 'featuresUnmet' || b.phase === 'failed') return false;
    if (!b.synced) return true;
    const source = liveSource(b, id.namespace, id.name);
    // The copy's owner, which for an entry passed on for the cluster it describes is not the source's.
    if (!source || !b.reaches(ownerOf(copy) || b.peer.id)) return false;
    // Remembered per source version: this is asked for every copy on every sweep.
    return standsAt(copy, yield* holding(source.bytes, this.targets.finding(rule, b.peerRef, source.object, () => this.clusters())));
  }

  // ------------------------------------------------------------------ rules and peers

  /**
   * A CRD just became established: discovery is refreshed until it serves the CRD's kind (the
   * apiserver publishes it a moment after the condition), then whatever waits for a kind retries.
   */
  private async kindInstalled(crd: KubeObject, signal: AbortSignal): Promise<void> {
    const spec = crd['spec'] as { group?: string; names?: { kind?: string }; versions?: { name?: string; served?: boolean }[] } | undefined;
    const version = spec?.versions?.find((v) => v.served)?.name;
    const served = (r: { group: string; version: string; kind: string }): boolean => r.group === spec?.group && r.version === version && r.kind === spec.names?.kind;
    for (let attempt = 1; attempt <= DISCOVERY_LAG_ATTEMPTS; attempt++) {
      try {
        await this.o.localDiscovery.refresh();
        if (!version || (await this.o.localDiscovery.all()).some(served)) break;
      } catch (err) {
        this.log.warn({ err, attempt }, 'refreshing discovery after a CRD was established failed');
      }
      await sleep(DISCOVERY_LAG_PAUSE_MS, signal);
      if (signal.aborted) return;
    }
    // Even when the kind never showed, the waiting bindings and watches try now (and back off after).
    this.retryFailed();
  }

  /** Wakes every binding and copies' watch waiting to retry (a kind may be served now). */
  private retryFailed(): void {
    this.copies.retry();
    for (const m of this.bindings.values()) for (const b of m.values()) if (b.phase === 'failed') b.retry();
  }

  private setRule(name: string, state: RuleState | undefined): void {
    // The new watches and bindings come up before the old go, so a rule edit shares what it can
    // (no relist of unchanged watches).
    const oldBindings = this.bindings.get(name);
    const oldWatch = this.copyWatches.get(name);
    this.bindings.delete(name);
    this.copyWatches.delete(name);
    this.status.drop(name);
    if (state) {
      const watch: CopyWatch = { gvks: state.targetGVKs, namespaces: targetNamespaces(state.spec, sourceScope(state.spec, true)) };
      this.copyWatches.set(name, watch);
      for (const g of watch.gvks) this.copies.acquire(g, watch.namespaces);
      const m = new Map<string, Binding>();
      this.bindings.set(name, m);
      if (state.compiled) {
        for (const { peer, features } of this.peers.values()) m.set(peer.name, this.bind(state, peer, features));
      } else {
        this.log.warn({ rule: name, issues: state.issues }, 'invalid rule; it syncs nothing until fixed');
        if (state.object) this.o.events.event(state.object, 'Warning', 'InvalidRule', state.issues.map(formatIssue).join('; '));
      }
    }
    for (const b of oldBindings?.values() ?? []) b.close();
    if (oldWatch) this.drain(name, oldWatch);
    this.collector.kick();
  }

  /**
   * Keeps a watch the rule no longer has until its copies are collected, within a budget per
   * rule: a rule edited again and again (a peer may relay such edits) holds at most
   * MAX_DRAINED_PER_RULE old watches, the oldest let go first. Copies seen only through one let
   * go early are left in place (never deleted), until a restart watches them again.
   */
  private drain(rule: string, watch: CopyWatch): void {
    const held = this.draining.filter((d) => d.rule === rule);
    if (held.length >= MAX_DRAINED_PER_RULE) {
      const oldest = held[0]!;
      this.draining.splice(this.draining.indexOf(oldest), 1);
      for (const g of oldest.watch.gvks) this.copies.release(g, oldest.watch.namespaces);
      const message = `the rule changed its scope more than ${MAX_DRAINED_PER_RULE} times within the orphan grace period: copies it no longer makes, seen only by its oldest scope, are left in place (never deleted) until the controller restarts`;
      this.log.warn({ rule }, message);
      const object = this.rules.get(rule)?.object;
      if (object) this.o.events.event(object, 'Warning', SYNC_EVENT_REASONS.copiesLeft, message);
    }
    this.draining.push({ rule, watch, since: Date.now() });
  }

  /** After a sweep: watches kept for rules that went or changed are let go once nothing needs them. */
  private releaseDrained(swept: SweptCopies): void {
    // Any rule's copies count: one that lies where only this watch sees it would be seen no more.
    const facts = { nowMs: Date.now(), graceMs: this.o.settings.gcGracePeriodMs, current: [...this.copyWatches.values()], unknownKinds: swept.unknownKinds, recorded: swept.recorded };
    for (let i = this.draining.length - 1; i >= 0; i--) {
      const d = this.draining[i]!;
      if (drainedWatchNeeded({ watch: d.watch, sinceMs: d.since }, facts)) continue;
      this.draining.splice(i, 1);
      for (const g of d.watch.gvks) this.copies.release(g, d.watch.namespaces);
    }
  }

  private addPeer(peer: SyncPeer): void {
    this.removePeer(peer.name);
    const features = new PeerFeatures(peer.clients.informers);
    // What the peer reaches gates what it may pass on: a cluster it starts to reach unblocks keys.
    const unsubscribe = peer.clients.informers.forResource<Cluster>({ ...CLUSTERS }).addEventHandler({
      onAdd: (c) => this.router.peerRegistryChanged(peer.name, c),
      onUpdate: (_a, c) => this.router.peerRegistryChanged(peer.name, c),
    });
    this.peers.set(peer.name, { peer, features, unsubscribe });
    for (const [name, m] of this.bindings) {
      const rule = this.rules.get(name);
      if (rule?.compiled) m.set(peer.name, this.bind(rule, peer, features));
    }
    this.healthChanged();
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
    this.router.peerClosed(name);
    this.collector?.kick();
    // A peer that left (not one replaced by a new connection) no longer counts as settled.
    if (!this.o.peers.aliveIDs().has(p.peer.id) && this.aliveSince.delete(p.peer.id)) this.rewatchRelays();
  }

  /** Who answers changed: when each peer was lost is noted, and the router wakes what waited on it. */
  private healthChanged(): void {
    const was = this.alive;
    const alive = new Set(this.o.peers.aliveIDs());
    // Taken before anything is looked at again: a key deferred now waits only on a death still to come.
    this.alive = alive;
    const now = Date.now();
    for (const id of was) {
      if (alive.has(id)) continue;
      this.lostAt.set(id, now);
      this.aliveSince.delete(id);
    }
    for (const id of alive) {
      this.lostAt.delete(id);
      if (!this.aliveSince.has(id)) this.aliveSince.set(id, now);
    }
    this.router.aliveChanged(was, alive);
    this.collector?.kick();
    if ([...was].some((id) => !alive.has(id))) this.rewatchRelays();
  }

  /**
   * An owner stopped counting as settled (for one rule and those settled by it, or for all): the
   * bindings watch what their peers pass on for it again, at once.
   */
  private rewatchRelays(rule?: string): void {
    const affected = (name: string): boolean => rule === undefined || this.settlingRule(name) === rule;
    // Only active bindings filter their watches; a failing one keeps its backoff.
    for (const [name, m] of this.bindings) if (affected(name)) for (const b of m.values()) if (b.phase === 'active') b.retry();
  }

  /** The rule whose bindings settle owners for this one: the one it settles with while that one is here, else itself. */
  private settlingRule(name: string): string {
    const by = this.rules.get(name)?.settlesWith;
    return by !== undefined && this.rules.get(by) ? by : name;
  }

  /**
   * The owners whose objects of the rule come to us first-hand, and have for relaySettleMs at least:
   * they answer us, and the rule's binding to them has its caches listed (see BindingOptions.settledOwners).
   * Asked by each binding at its health checks, not per reconcile: worked out afresh each time.
   * A rule that settles with another takes that one's (see settlingRule).
   */
  private settledOwners(rule: string): ReadonlySet<string> {
    const now = Date.now();
    const owners = new Set<string>();
    const settled = (since: number | undefined): boolean => since !== undefined && now - since >= this.o.settings.relaySettleMs;
    for (const b of this.bindings.get(this.settlingRule(rule))?.values() ?? []) {
      if (settled(this.aliveSince.get(b.peer.id)) && settled(this.readableSince.get(b))) owners.add(b.peer.id);
    }
    return owners;
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
      events: this.router,
      onPhase: (x) => {
        // A binding whose caches went (features withdrawn, watches closed) no longer brings its
        // peer's objects first-hand: the rule's other bindings watch them again. Watches that
        // merely fail keep their caches, and the peer its place.
        if (x.readable) {
          if (!this.readableSince.has(x)) this.readableSince.set(x, Date.now());
        } else if (this.readableSince.delete(x)) this.rewatchRelays(rule.name);
        this.status.phase(x);
        const warning = phaseWarning(x);
        if (warning && x.rule.object) this.o.events.event(x.rule.object, 'Warning', warning.reason, warning.message);
        if (x.phase === 'featuresUnmet') this.collector.kick();
      },
      lostAt: (id) => this.lostAt.get(id),
      settledOwners: () => this.settledOwners(rule.name),
      log: this.log,
    });
    this.status.phase(b);
    b.start();
    return b;
  }
}

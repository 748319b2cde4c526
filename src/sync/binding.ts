// One rule on one peer: the rule reads its kind there once the peer advertises what the rule's
// clusterFeatureMatch asks for, the peer's credentials may read it and ours may write what it
// makes here. Until then it waits, and retries what failed with capped, jittered backoff for as
// long as both exist; a watch that starts failing later (permission revoked, kind removed on the
// peer) turns it back to failed with the reason. Its watches are the peer's shared informers for
// the rule's scope, so two rules reading the same kind and scope on a peer share one watch.
import { ANNOTATIONS, CLUSTERS } from '../core/api/index.ts';
import { registryReaches } from '../core/registry/index.ts';
import type { Cluster } from '../core/api/types.ts';
import { copyRelevantChange, errorMessage, featuresSatisfied, inScope, narrows, peerWatchFilter, sourceScope, targetNamespaces, type PeerRef, type PeerWatchFilter, type RuleState, type SourceScope } from '../core/rules/index.ts';
import { Backoff, chargedSize, GcraRateLimiter, isNotFound, NoKindMatchError, objectKey, type ApiResource, type Discovery, type InformerLease, type KubeObject, type Logger, type AccessReviewer, type ResourceRef } from '../kube/index.ts';
import type { PeerClients } from '../peers/connection.ts';
import { firstDenied } from './access.ts';
import type { PeerFeatures } from './features.ts';
import { syncKey, type SyncKey } from './keys.ts';
import type { SourceEvents } from './routing.ts';
import { Wakeup } from './wakeup.ts';

/** A verified peer as the sync sees it. */
export interface SyncPeer {
  /** Name of its Cluster here. */
  readonly name: string;
  /** Its kube-system UID (verified before any binding exists). */
  readonly id: string;
  readonly clients: PeerClients;
}

export type BindingPhase =
  /** Starting: features, permissions or the first list not known yet. */
  | 'starting'
  /** The peer does not advertise what clusterFeatureMatch asks for. */
  | 'featuresUnmet'
  /** Cannot run: permission denied, kind not served, its watches failing; retried. */
  | 'failed'
  | 'active';

/**
 * A source as the rule's watches show it, and what working on it holds: what its cache was
 * charged for it (its size as JSON), asked only when needed; a cache without a budget (none of a
 * peer's) charged nothing, and the object is measured then.
 */
export type SourceLookup = { readonly inScope: false } | { readonly inScope: true; readonly object: KubeObject | undefined; readonly bytes: () => number };

/** A source the rule's watches show and that is not being deleted, with what working on it holds. */
export interface LiveSource {
  readonly object: KubeObject;
  readonly bytes: () => number;
}

/** The live source at that name, as the binding's watches show it; undefined when there is none. */
export function liveSource(b: { lookup(namespace: string, name: string): SourceLookup }, namespace: string, name: string): LiveSource | undefined {
  const seen = b.lookup(namespace, name);
  return seen.inScope && seen.object && !seen.object.metadata.deletionTimestamp ? { object: seen.object, bytes: seen.bytes } : undefined;
}

export interface BindingOptions {
  readonly rule: RuleState;
  readonly peer: SyncPeer;
  readonly features: PeerFeatures;
  /** Asked whether we may write here what the rule makes. */
  readonly local: AccessReviewer;
  readonly localDiscovery: Discovery;
  readonly localClusterID: string;
  readonly rateLimit: { ratePerSecond: number; burst: number; maxKeys: number };
  /** Told of every source event (as keys), and when the binding becomes active with synced caches (anti-entropy). */
  readonly events: SourceEvents;
  /** Called on every phase change. */
  readonly onPhase: (b: Binding) => void;
  /** When we lost the cluster with that ID ourselves (undefined while we reach it, or never did). */
  readonly lostAt: (clusterID: string) => number | undefined;
  /**
   * The clusters whose objects of this rule come to us first-hand, and have for a while: what a
   * peer passes on for them is left out of its watches (see peerWatchFilter). The binding is told
   * to look again when one stops counting.
   */
  readonly settledOwners: () => ReadonlySet<string>;
  readonly log: Logger;
  readonly retry?: { initialMs: number; maxMs: number };
}

const PEER_READ_VERBS = ['get', 'list', 'watch'];
const LOCAL_VERBS = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];
/** How often an active binding looks at its watches' health. */
const HEALTH_CHECK_MS = 5_000;
const RESTART_AFTER_FAULT_MS = 5_000;
/** How long a peer is given to say whether it still has an object its filtered watches do not show. */
const GONE_CHECK_MS = 3_000;

/** A rule's watches on the peer: one per namespace of its scope, all with the same filter. */
interface Sources {
  readonly ref: ResourceRef;
  readonly scope: SourceScope;
  readonly filter: PeerWatchFilter | undefined;
  readonly leases: Map<string, InformerLease>;
  unsubscribe: (() => void)[];
  /** Why its watches last failed to list (said once per reason while they are new). */
  failing?: string;
}
export function kindNotServed(gvk: { group: string; version: string; kind: string }, where: string): string {
  return `kind ${gvk.kind} of ${gvk.group ? `${gvk.group}/` : ''}${gvk.version} is not served ${where} (is its CustomResourceDefinition installed?)`;
}

export class Binding {
  readonly rule: RuleState;
  readonly peer: SyncPeer;
  /** The peer as rules see it. */
  readonly peerRef: PeerRef;
  readonly limiter: GcraRateLimiter;
  phase: BindingPhase = 'starting';
  message = 'starting';
  /** Failed because a permission pre-check said no (rather than a kind not served or failing watches). */
  denied = false;
  private readonly o: BindingOptions;
  private readonly wake = new Wakeup();
  private readonly stop = new AbortController();
  private sources: Sources | undefined;
  /**
   * Watches with the filter the owners' health now asks for, listing while the current ones
   * still answer lookups; they take over once listed.
   */
  private next: Sources | undefined;
  private unsubscribeFeatures: (() => void) | undefined;
  /** A goneFromPeer question is on its way. */
  private asking = false;

  constructor(opts: BindingOptions) {
    this.o = opts;
    this.rule = opts.rule;
    this.peer = opts.peer;
    const clusters = opts.peer.clients.informers.forResource<Cluster>({ ...CLUSTERS });
    this.peerRef = { id: opts.peer.id, name: opts.peer.name, ownCluster: () => clusters.store.getByName(undefined, opts.peer.name) };
    this.limiter = new GcraRateLimiter(opts.rateLimit);
  }

  /** Runs until `close`. */
  start(): void {
    this.unsubscribeFeatures = this.o.features.subscribe(() => this.wake.kick());
    void this.supervise();
  }

  close(): void {
    this.stop.abort();
    this.unsubscribeFeatures?.();
    this.releaseSources();
  }

  /** Retry now what failed (e.g. a CRD was just installed). */
  retry(): void {
    this.wake.kick();
  }

  /** The source object as the peer's cache has it, or that the rule does not watch that object at all. */
  lookup(namespace: string, name: string): SourceLookup {
    const s = this.sources;
    if (!s || !inScope(s.scope, namespace, name)) return { inScope: false };
    const inf = s.leases.get(s.scope.namespaces ? namespace : '')?.informer;
    const object = inf?.store.getByName(namespace || undefined, name);
    return { inScope: true, object, bytes: () => (object ? (inf?.chargedFor(objectKey(object)) ?? chargedSize(object)) : 0) };
  }

  /** The source object from the peer's cache, if the rule watches it and it is there. */
  get(namespace: string, name: string): KubeObject | undefined {
    const l = this.lookup(namespace, name);
    return l.inScope ? l.object : undefined;
  }

  /** Whether the peer reaches the cluster with that ID, as its registry says (see registryReaches). */
  reaches(clusterID: string, now = Date.now()): boolean {
    if (clusterID === this.peer.id) return true;
    const clusters = this.peer.clients.informers.forResource<Cluster>({ ...CLUSTERS });
    return registryReaches(clusters.store.list(), clusterID, this.o.lostAt(clusterID) ?? -Infinity, now);
  }

  /** Every cached source object. */
  list(): KubeObject[] {
    return [...(this.sources?.leases.values() ?? [])].flatMap((l) => l.informer.store.list());
  }

  /**
   * Its cache can be read: the watches are open and have listed once. While they fail (the peer
   * unreachable) it keeps the last objects it saw, so a copy changed here is put back as it was;
   * nothing is created or deleted on that word alone.
   */
  get readable(): boolean {
    return (this.phase === 'active' || this.phase === 'failed') && this.sources !== undefined && [...this.sources.leases.values()].every((l) => l.informer.hasSynced());
  }

  /**
   * Active, and every watch has listed and holds all it was sent since: absence from the cache
   * is then the peer's word (not so for a cache whose budget refused an object it was sent),
   * for the objects of every owner its watches do not leave out (see watchesOwner).
   */
  get synced(): boolean {
    return this.phase === 'active' && [...(this.sources?.leases.values() ?? [])].every((l) => l.informer.complete);
  }

  /**
   * Whether the watches see what the peer holds of that owner's (its own objects, `''`, always):
   * for an owner they leave out, absence from the cache says nothing, even while synced.
   */
  watchesOwner(owner: string): boolean {
    return !this.sources?.filter?.leftOut.includes(owner);
  }

  /**
   * Whether the peer, asked directly, no longer has the object (or is deleting it): what filtered
   * watches do not show may still be there, under an ownership label they leave out (a label a
   * source carries is kept by every copy, so it need not name the owner the annotation does).
   * Unfiltered watches show everything: their word stands. Throws when the peer cannot be asked.
   */
  async goneFromPeer(namespace: string, name: string, signal: AbortSignal): Promise<boolean> {
    const s = this.sources;
    if (!s) return false;
    if (!s.filter) return true;
    // One question at a time per binding: a peer slow to answer (or many deletions at once) holds
    // one worker, not all of them; the others are asked again later.
    if (this.asking) throw new Error('the peer is already being asked about another object');
    this.asking = true;
    try {
      // A worker waits on the answer: a peer that is slow to give it holds one only briefly.
      const obj = await this.peer.clients.rest.get(s.ref, namespace || undefined, name, { signal: AbortSignal.any([signal, AbortSignal.timeout(GONE_CHECK_MS)]) });
      return obj.metadata.deletionTimestamp !== undefined;
    } catch (err) {
      if (isNotFound(err)) return true;
      throw err;
    } finally {
      this.asking = false;
    }
  }

  private setPhase(phase: BindingPhase, message: string, denied = false): void {
    if (phase === this.phase && message === this.message && denied === this.denied) return;
    this.phase = phase;
    this.message = message;
    this.denied = denied;
    this.o.log.info({ rule: this.rule.name, peer: this.peer.name, phase, message }, 'rule binding changed');
    this.o.onPhase(this);
  }

  /** A fault in the loop is a bug, not bad input: said loudly, and the binding starts over. */
  private async supervise(): Promise<void> {
    const signal = this.stop.signal;
    while (!signal.aborted) {
      try {
        await this.run();
      } catch (err) {
        if (signal.aborted) return;
        this.o.log.error({ rule: this.rule.name, peer: this.peer.name, error: errorMessage(err) }, 'rule binding failed unexpectedly; starting it over');
        this.releaseSources();
        try {
          this.setPhase('failed', `internal error: ${errorMessage(err)}`);
        } catch {
          // Reported above already; the retry below is what matters.
        }
        await this.wake.wait(RESTART_AFTER_FAULT_MS, signal);
      }
    }
  }

  private async run(): Promise<void> {
    const signal = this.stop.signal;
    const backoff = new Backoff(this.o.retry ?? { initialMs: 1000, maxMs: 60_000 });
    while (!signal.aborted) {
      if (!this.rule.ignoresFeatures) {
        const features = this.o.features.advertised();
        if (!features) {
          this.setPhase('starting', "reading the peer's ClusterFeatures");
          await this.wake.wait(60_000, signal);
          continue;
        }
        if (!featuresSatisfied(this.rule.spec.clusterFeatureMatch, features)) {
          this.releaseSources();
          this.setPhase('featuresUnmet', 'the peer does not advertise the ClusterFeatures clusterFeatureMatch asks for');
          await this.wake.wait(60_000, signal);
          continue;
        }
      }
      if (!this.sources) {
        try {
          await this.openSources(signal);
          backoff.reset();
        } catch (err) {
          if (signal.aborted) break;
          this.setPhase('failed', errorMessage(err), err instanceof AccessDenied);
          await this.wake.wait(backoff.next(), signal);
          continue;
        }
      }
      const leases = [...(this.sources?.leases.values() ?? [])];
      const failing = leases.map((l) => l.informer.lastError).find((e) => e !== undefined);
      if (failing) {
        // The watches keep retrying by themselves; the binding says why nothing moves meanwhile.
        this.setPhase('failed', `reading the rule's objects on the peer fails: ${failing}`);
      } else if (!leases.every((l) => l.informer.hasSynced())) {
        this.setPhase('starting', "listing the rule's objects on the peer");
      } else if (this.phase !== 'active') {
        this.setPhase('active', '');
        this.o.events.everythingOf(this);
      } else {
        this.refilter();
      }
      await this.wake.wait(this.phase === 'active' ? HEALTH_CHECK_MS : 1_000, signal);
    }
  }

  private async openSources(signal: AbortSignal): Promise<void> {
    const { rule, peer } = this;
    const resource = await resolve(peer.clients.discovery, rule.sourceGVK, 'on the peer');
    const scope = sourceScope(rule.spec, resource.namespaced);
    const deniedThere = await firstDenied(peer.clients.rest, resource, PEER_READ_VERBS, scope.namespaces, signal);
    if (deniedThere) throw new AccessDenied(`the peer's credentials may not ${deniedThere} (grant it to the reader with a ClusterRole labelled cluster-registry.k8s.cisco.com/reader-aggregated=true on the peer)`);
    for (const gvk of rule.targetGVKs) {
      const target = await resolve(this.o.localDiscovery, gvk, 'here');
      const deniedHere = await firstDenied(this.o.local, target, LOCAL_VERBS, targetNamespaces(rule.spec, scope), signal);
      if (deniedHere) throw new AccessDenied(`this controller may not ${deniedHere} here (grant it with a ClusterRole labelled cluster-registry.k8s.cisco.com/controller-aggregated=true)`);
    }
    // Closed while looking up: opening nothing is not having opened the watches.
    signal.throwIfAborted();
    this.sources = this.listen(this.watch({ group: resource.group, version: resource.version, resource: resource.resource }, scope, this.wantedFilter()));
  }

  private wantedFilter(): PeerWatchFilter | undefined {
    return peerWatchFilter(this.rule, this.o.localClusterID, this.peer.id, this.o.settledOwners());
  }

  /**
   * The watches of `scope` with `filter` (shared with any other rule asking for the same); those
   * made now start from the caches of `wider`, watches of the same scope whose filter `filter` narrows.
   */
  private watch(ref: ResourceRef, scope: SourceScope, filter: PeerWatchFilter | undefined, wider?: Sources): Sources {
    const leases = new Map<string, InformerLease>();
    for (const ns of scope.namespaces ?? ['']) {
      const scoped = { ...ref, namespace: ns || undefined, fieldSelector: scope.fieldSelector, labelSelector: filter?.labelSelector };
      leases.set(ns, this.peer.clients.informers.acquire(scoped, wider?.leases.get(ns)?.informer));
    }
    return { ref, scope, filter, leases, unsubscribe: [] };
  }

  /**
   * Routes the watches' events to the sync. An informer already listed replays what it holds as
   * adds, unless `replay` is false: the sync was told of all of it already (see inStep).
   */
  private listen(s: Sources, replay = true): Sources {
    const { rule, peer } = this;
    const key = (o: KubeObject): SyncKey => syncKey(rule.name, peer.name, o.metadata.namespace, o.metadata.name ?? '');
    // Objects that came from us are never copied back (upstream's loop guard); skip them early
    // (the watches leave most of them out already, by their label).
    const fromUs = (o: KubeObject): boolean => o.metadata.annotations?.[ANNOTATIONS.ownership] === this.o.localClusterID;
    const enqueue = (o: KubeObject): void => {
      if (!fromUs(o)) this.o.events.sourceChanged(rule, peer, key(o), o);
    };
    s.unsubscribe = [...s.leases.values()].map((l) =>
      l.informer.addEventHandler(
        {
          onAdd: enqueue,
          onUpdate: (a, b) => copyRelevantChange(a, b, rule.syncsStatus) && enqueue(b),
          onDelete: (o) => this.o.events.sourceChanged(rule, peer, key(o), undefined),
        },
        { replay },
      ),
    );
    return s;
  }

  /**
   * Follows the owners' health: once another filter is wanted, watches with it list beside the
   * current ones and take over when listed; then everything is looked at again, so objects that
   * came or went between the two are decided on. Until then the current watches answer, and the
   * absence of an object of an owner they leave out decides nothing (see watchesOwner).
   *
   * A filter that leaves out more (an owner settled, as happens to every binding a while after
   * a member starts or a peer comes back) usually lists nothing: its watches start from what the
   * current ones hold and take over at once, in step with them (see inStep), so the sync need
   * not go through the peer's objects again; only copies made from what is now left out are.
   */
  private refilter(): void {
    const current = this.sources;
    if (!current) return;
    const wanted = this.wantedFilter();
    if (wanted?.labelSelector === current.filter?.labelSelector) {
      release(this.next);
      this.next = undefined;
      return;
    }
    let next = this.next;
    if (!next || next.filter?.labelSelector !== wanted?.labelSelector) {
      release(next);
      next = this.next = this.watch(current.ref, current.scope, wanted, narrows(current.filter, wanted) ? current : undefined);
      if (inStep(next, current)) {
        this.next = undefined;
        this.sources = this.listen(next, false);
        release(current);
        this.o.events.leftOut(this, next.filter?.leftOut.filter((id) => !current.filter?.leftOut.includes(id)) ?? []);
        return;
      }
      // Taken over as soon as listed, not at the next health check.
      void Promise.all([...next.leases.values()].map((l) => l.informer.waitForSync(this.stop.signal))).then(() => this.wake.kick());
    }
    const failing = [...next.leases.values()].map((l) => l.informer.lastError).find((e) => e !== undefined);
    if (failing !== undefined && failing !== next.failing) {
      // The current watches go on answering; the new ones keep trying (the peer's cache budget
      // may not hold both at once: then what they would add stays unread until it does).
      this.o.log.warn({ rule: this.rule.name, peer: this.peer.name, error: failing }, "listing the peer's objects with a new filter fails; the current watches go on");
    }
    next.failing = failing;
    if (![...next.leases.values()].every((l) => l.informer.hasSynced() && l.informer.lastError === undefined)) return;
    this.next = undefined;
    this.sources = this.listen(next);
    release(current);
    this.o.events.everythingOf(this);
  }

  private releaseSources(): void {
    release(this.sources);
    release(this.next);
    this.sources = undefined;
    this.next = undefined;
  }
}

class AccessDenied extends Error {}

/**
 * Whether the sync, told of everything `current` holds, need be told nothing of `next`'s: next's
 * filter narrows current's (a wider cache, say one another rule listed, may hold what this rule
 * was never told of), and each of its caches is current's as far as that filter goes, with
 * nothing either has seen that the other has not: both complete and at the same version of the
 * peer's objects (as a cache seeded from the other is, before any watch event reached it).
 */
export function inStep(next: Pick<Sources, 'leases' | 'filter'>, current: Pick<Sources, 'leases' | 'filter'>): boolean {
  if (!narrows(current.filter, next.filter)) return false;
  return [...next.leases].every(([ns, l]) => {
    const c = current.leases.get(ns)?.informer;
    const n = l.informer;
    return c !== undefined && c.complete && n.complete && c.lastError === undefined && n.lastError === undefined && n.lastResourceVersion === c.lastResourceVersion;
  });
}

function release(s: Sources | undefined): void {
  for (const u of s?.unsubscribe ?? []) u();
  for (const l of s?.leases.values() ?? []) l.release();
}


async function resolve(discovery: Discovery, gvk: { group: string; version: string; kind: string }, where: string): Promise<ApiResource> {
  try {
    return await discovery.resourceFor(gvk);
  } catch (err) {
    if (err instanceof NoKindMatchError) throw new Error(kindNotServed(gvk, where), { cause: err });
    throw err;
  }
}

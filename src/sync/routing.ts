// Where events become the sync's keys: the file to open first. A source object's event becomes
// its key (or waits for its owner's death); a copy's event becomes the key of the source it
// records, through the rule and peer that made it; a binding that becomes active (or a peer that
// comes back) has everything it holds looked at again; and what parked keys wait for (room in a
// copy budget, a cluster registered or reached, a namespace, an owner's death) wakes them here.
// The reconciler then reads everything else from the caches.
import { CLUSTER_STATES, LABELS, gvkOf, sameGVK, sourceIdentityOf, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { BUILTIN_PREFIX, ownerOf, type RuleState } from '../core/rules/index.ts';
import { copiesPerRuleAndPeer } from '../core/trust/index.ts';
import { objectName, syncKey, type SyncKey } from './keys.ts';
import type { RuleStatusReporter } from './status.ts';
import type { BoundPeer, CopiesView, CopyWrites, PeerName, SyncView } from './view.ts';
import { WAIT, type Waiters } from './waiters.ts';

/** What a binding tells of its peer's objects. */
export interface SourceEvents {
  sourceChanged(rule: RuleState, peer: PeerName, key: SyncKey, source: KubeObject | undefined): void;
  /** The binding became active with its caches listed: everything it holds is looked at again. */
  everythingOf(b: BoundPeer): void;
  /** The binding's watches now leave out what the peer holds of these owners', without listing again. */
  leftOut(b: BoundPeer, owners: readonly string[]): void;
}

/** What the local copies and their writer tell. */
export interface CopyEvents {
  copyChanged(copy: KubeObject, deleted: boolean): void;
  budgetFreed(rule: string, peerID: string): void;
}

/**
 * How far apart keys waiting on the registry (a template failing on a Cluster, a refusal it may
 * lift) and the objects of rules whose templates read it are looked at again: however often a
 * peer changes the entries it relays, what they cost to render again is spent at most once per this.
 */
const REGISTRY_SETTLE_MS = 1000;

export interface RouterDeps {
  readonly view: SyncView;
  readonly queue: { enqueue(key: SyncKey): void };
  readonly waiters: Waiters;
  readonly copies: CopiesView;
  readonly writer: CopyWrites;
  readonly status: Pick<RuleStatusReporter, 'forget'>;
  /** Copies one rule may make here from one peer. */
  readonly maxCopiesPerRule: number;
  /** The peers alive as the engine last took stock of their health. */
  readonly alive: () => ReadonlySet<string>;
}

export class EventRouter implements SourceEvents, CopyEvents {
  private readonly d: RouterDeps;
  private settling: NodeJS.Timeout | undefined;

  constructor(deps: RouterDeps) {
    this.d = deps;
  }

  /** Stops the registry's settle timer. */
  close(): void {
    clearTimeout(this.settling);
  }

  /** A Cluster here joined, changed or left: what it owns, the credentials it names and templates reading it may move. */
  registryChanged(cluster: Cluster): void {
    this.d.waiters.release(WAIT.registered(cluster.spec?.clusterID ?? ''));
    this.settling ??= setTimeout(() => {
      this.settling = undefined;
      this.d.waiters.release(WAIT.clusters);
      // A copy a template made from a Cluster (an address its annotation gives) follows it, and
      // one the API server refused for what the template made of it is tried again.
      for (const rule of this.d.view.allRules()) {
        if (rule.readsRegistry) for (const b of this.d.view.bindingsOf(rule.name)) if (b.synced) this.everythingOf(b);
      }
    }, REGISTRY_SETTLE_MS);
  }

  namespaceAdded(name: string): void {
    this.d.waiters.release(WAIT.namespace(name));
  }

  /** A peer's own registry changed: a cluster it now reaches lets what it passes on of that cluster through. */
  peerRegistryChanged(peer: string, cluster: Cluster): void {
    if (cluster.status?.state === CLUSTER_STATES.ready) this.d.waiters.release(WAIT.reach(peer, cluster.spec?.clusterID ?? ''));
  }

  /** A peer went: nothing waits any longer on what it reaches. */
  peerClosed(peer: string): void {
    this.d.waiters.releaseWhere((e) => e.startsWith(WAIT.reach(peer, '')));
  }

  /**
   * Who answers changed (`alive` already taken as the engine's): a peer dying releases what waited
   * for its death; one coming back is looked at whole again (anti-entropy), since what happened
   * meanwhile (a copy deleted here, a source deleted there) may have left no event to go by.
   */
  aliveChanged(was: ReadonlySet<string>, alive: ReadonlySet<string>): void {
    for (const id of was) if (!alive.has(id)) this.d.waiters.release(WAIT.death(id));
    for (const id of alive) {
      if (was.has(id)) continue;
      this.d.waiters.release(WAIT.alive(id));
      for (const rule of this.d.view.allRules()) for (const b of this.d.view.bindingsOf(rule.name)) if (b.peer.id === id && b.synced) this.everythingOf(b);
    }
  }

  /**
   * Every source object a binding sees, and every copy recorded as made from that peer by that
   * rule, so deletes that happened while no one watched are found.
   */
  everythingOf(b: BoundPeer): void {
    for (const o of b.list()) this.sourceChanged(b.rule, b.peer, syncKey(b.rule.name, b.peer.name, o.metadata.namespace, o.metadata.name ?? ''), o);
    this.copiesFrom(b, () => true);
  }

  /**
   * The copies made from what the binding's watches no longer show: each is looked at again, to
   * be told it has no source there (the owner's own binding delivers it). The watches go by the
   * ownership label a copy keeps from its source, which need not name the owner its annotation does.
   */
  leftOut(b: BoundPeer, owners: readonly string[]): void {
    if (owners.length > 0) this.copiesFrom(b, (copy) => owners.includes(ownerOf(copy)) || owners.includes(copy.metadata.labels?.[LABELS.ownership] ?? ''));
  }

  /** Queues the copies recorded as made from the binding's peer by its rule that `which` picks. */
  private copiesFrom(b: BoundPeer, which: (copy: KubeObject) => boolean): void {
    for (const gvk of b.rule.targetGVKs) {
      for (const copy of this.d.copies.all(gvk)) {
        const id = sourceIdentityOf(copy);
        if (id?.clusterID === b.peer.id && (id.rule ?? b.rule.name) === b.rule.name && which(copy)) this.d.queue.enqueue(syncKey(b.rule.name, b.peer.name, id.namespace, id.name));
      }
    }
  }

  /**
   * Queues a source object's key, unless the peer holds the object for a third cluster that is
   * alive and the rule keeps owners: then the only decision is to leave the copy to that owner,
   * so the key waits for the owner's death instead. In a group of N members each object reaches
   * a member from N-1 peers; queued, the N-2 second-hand keys crowd out the first-hand ones (a
   * bulk change on one member converged at two thirds of the speed).
   */
  sourceChanged(rule: RuleState, peer: PeerName, key: SyncKey, source: KubeObject | undefined): void {
    const owner = source ? ownerOf(source) : '';
    if (owner && owner !== peer.id && owner !== this.d.view.localClusterID && rule.keepsSourceOwner && this.d.alive().has(owner)) {
      this.d.waiters.wait(WAIT.death(owner), key);
      this.d.status.forget(rule.name, peer.name, objectName(key));
      return;
    }
    this.d.queue.enqueue(key);
  }

  /** A copy changed or went: look at the source it records, through the rule and peer that made it. */
  copyChanged(copy: KubeObject, deleted: boolean): void {
    this.d.waiters.release(WAIT.target(copy));
    const id = sourceIdentityOf(copy);
    const owner = ownerOf(copy);
    if (id) {
      // The echo of a write whose reconcile was the only one this event would queue (the copy is
      // what that reconcile decided): nothing to look at again. Unless the source went meanwhile:
      // the reconcile of its deletion may have run before this echo reached the cache (or before
      // the copies' watch had even started) and found no copy to delete.
      if (!deleted && id.rule && id.clusterID === owner && this.d.writer.consumeEcho(copy) && this.sourceCached(id)) return;
      // The recorded source, and the owner itself, which replaces a second-hand record (from its
      // last listing if it is down: a copy changed here is put back as the owner last had it).
      const rules = id.rule ? [id.rule] : this.rulesFrom(id.group, id.kind);
      for (const r of rules) {
        for (const b of this.d.view.bindingsOf(r)) if (b.peer.id === id.clusterID || b.peer.id === owner) this.d.queue.enqueue(syncKey(r, b.peer.name, id.namespace, id.name));
      }
      return;
    }
    // Made by another implementation: upstream's labels and the owner say where it came from.
    const gvk = gvkOf(copy);
    const name = copy.metadata.labels?.[LABELS.originalName] ?? copy.metadata.name ?? '';
    const namespace = copy.metadata.labels?.[LABELS.originalNamespace] ?? copy.metadata.namespace ?? '';
    for (const rule of this.d.view.allRules()) {
      if (rule.name.startsWith(BUILTIN_PREFIX) || !rule.targetGVKs.some((t) => sameGVK(t, gvk))) continue;
      for (const b of this.d.view.bindingsOf(rule.name)) if (b.peer.id === owner) this.d.queue.enqueue(syncKey(rule.name, b.peer.name, namespace, name));
    }
  }

  /**
   * A place among the copies a rule makes from a peer came free: as many of the keys waiting for
   * one are looked at again as there are places (not every waiting key at every deletion).
   */
  budgetFreed(rule: string, peerID: string): void {
    // Whatever rule made it, all copies from the peer together may hold another.
    this.d.waiters.release(WAIT.peerCopies(peerID), 1);
    const r = this.d.view.rule(rule);
    if (!r) return;
    const free = this.d.copies.budget.free(rule, peerID, copiesPerRuleAndPeer(r.channel, this.d.maxCopiesPerRule));
    if (free > 0) this.d.waiters.release(WAIT.ruleCopies(rule, peerID), free);
  }

  /** Whether the binding that made a copy still has its source in the peer's cache, and not on its way out. */
  private sourceCached(id: SourceIdentity): boolean {
    const b = id.rule ? this.d.view.bindingsOf(id.rule).find((x) => x.peer.id === id.clusterID) : undefined;
    const source = b?.get(id.namespace, id.name);
    return source !== undefined && !source.metadata.deletionTimestamp;
  }

  private rulesFrom(group: string, kind: string): string[] {
    return this.d.view.allRules().filter((r) => r.sourceGVK.group === group && r.sourceGVK.kind === kind).map((r) => r.name);
  }
}

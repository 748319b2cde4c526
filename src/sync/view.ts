// What the reconciler, the router and the collector read of the sync engine, as one small view:
// the rules and their bindings per peer, who is alive, the registry, the namespaces here, and
// what the trust boundary decides by. The engine implements it; unit tests give a fake.
import type { SourceIdentity } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import type { RuleState } from '../core/rules/index.ts';
import type { Steps } from '../kube/index.ts';
import type { TrustFacts } from '../core/trust/index.ts';
import type { Binding } from './binding.ts';
import type { LocalCopies } from './copies.ts';
import type { CopyWriter } from './writer.ts';

/** A peer as keys and statuses name it: its Cluster's name here, and its kube-system UID. */
export interface PeerName {
  readonly name: string;
  readonly id: string;
}

/** What is read of a rule's binding to one peer: the peer, the cache of its sources, the binding's state. */
export type BoundPeer = Pick<Binding, 'rule' | 'peerRef' | 'phase' | 'readable' | 'synced' | 'limiter' | 'lookup' | 'get' | 'list' | 'reaches' | 'watchesOwner' | 'goneFromPeer'> & { readonly peer: PeerName };

/** What is read of the local copies: the caches of every kind watched, and their budget. */
export type CopiesView = Pick<LocalCopies, 'get' | 'all' | 'legacy' | 'bySource' | 'kinds' | 'synced' | 'listing' | 'budget'>;

/** How copies are written here, their echoes told apart. */
export type CopyWrites = Pick<CopyWriter, 'get' | 'create' | 'update' | 'mark' | 'applyStatus' | 'delete' | 'consumeEcho' | 'forgetEcho'>;

export interface SyncView {
  /** This cluster's kube-system UID. */
  readonly localClusterID: string;
  rule(name: string): RuleState | undefined;
  allRules(): RuleState[];
  /** The rule's binding to the peer of that name, if it runs there. */
  binding(rule: string, peer: string): BoundPeer | undefined;
  bindingsOf(rule: string): BoundPeer[];
  /**
   * Whether a copy's recorded source can still deliver it (see OwnershipFacts), pausing before
   * each costly part when the rule's templates must say where that source's copy goes.
   */
  recordedSourceLive(id: SourceIdentity, copy: KubeObject): Steps<boolean>;
  /** The kube-system UIDs of the peers that answer. */
  aliveIDs(): ReadonlySet<string>;
  /** The local registry's Clusters (who is in the group; template data). */
  clusters(): readonly Cluster[];
  namespaceExists(name: string): boolean;
  /** What the trust boundary decides by (the local registry among them). */
  trust(): TrustFacts;
  /** The rules and the registry have been listed: before that, absence means nothing. */
  listed(): boolean;
}

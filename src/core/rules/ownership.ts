// Whether a sync controller may create, update or delete a local copy. Upstream's decision table
// is load-bearing and kept, with two fixes: status follows the spec decision (upstream wrote it
// even when the spec write was refused), and a copy is deleted only on word from the peer it came
// from (upstream let any peer lacking the source delete it while its owner was down), never
// because a source is merely unreachable.

import { ANNOTATIONS, LABELS } from '../api/keys.ts';
import { ownerOf, sameSourceIdentity, sourceIdentityOf, type SourceIdentity } from '../api/source-identity.ts';
import type { KubeObject } from '../api/types.ts';

export interface OwnershipFacts {
  /** kube-system UID of this cluster. */
  localClusterID: string;
  /** kube-system UID of the peer the source object is read from. */
  syncedFromClusterID: string;
  /** kube-system UIDs of the peers currently connected and alive. */
  alivePeerIDs: ReadonlySet<string>;
  /**
   * Whether the source recorded on an existing copy can still deliver it: its peer alive, its
   * rule bound there, its object present and matching. While it can, no other source takes the
   * copy over, so peers (or rules) holding the same object never rewrite a copy in turn.
   */
  recordedSourceLive?: (recorded: SourceIdentity, copy: KubeObject) => boolean;
  /**
   * Whether the synced-from peer itself reaches the cluster with that ID (its registry shows it
   * Ready). A peer passes on another cluster's objects only while it does: copies of a cluster
   * that left the group, or that no one reaches, are then not kept alive by members copying them
   * from each other.
   */
  peerReaches?: (clusterID: string) => boolean;
  /**
   * Whether this cluster's registry has a Cluster for that ID. Copies of objects owned by a
   * cluster outside the group are not made (the collector would delete them again).
   */
  ownerRegistered?: (clusterID: string) => boolean;
}

export const DECISION_REASONS = {
  create: 'Create',
  update: 'Update',
  /** Ours: a local object at the copy's place taken over, as the rule's adoptionPolicy says. */
  adopt: 'Adopt',
  delete: 'Delete',
  syncDisabledOnSource: 'SyncDisabledOnSource',
  syncDisabledLocally: 'SyncDisabledLocally',
  ownedByLocalCluster: 'OwnedByLocalCluster',
  locallyOwned: 'LocallyOwned',
  ownedByAnotherAliveCluster: 'OwnedByAnotherAliveCluster',
  localObjectTerminating: 'LocalObjectTerminating',
  localObjectAbsent: 'LocalObjectAbsent',
  sourceUnreachable: 'SourceUnreachable',
  differentSourceObject: 'DifferentSourceObject',
  notSyncedFromThisPeer: 'NotSyncedFromThisPeer',
  noOwner: 'NoOwner',
  deliveredByAnotherSource: 'DeliveredByAnotherSource',
  ownerNotReachedByPeer: 'OwnerNotReachedByPeer',
  ownerNotInGroup: 'OwnerNotInGroup',
  ownerWouldChange: 'OwnerWouldChange',
} as const;

export type DecisionReason = (typeof DECISION_REASONS)[keyof typeof DECISION_REASONS];

export interface Decision {
  action: 'create' | 'update' | 'delete' | 'none';
  reason: DecisionReason;
  /** Write the status subresource after the write (only with syncStatus, only if the write was allowed). */
  writeStatus: boolean;
}

/** A copy must carry the ownership label too: copies are found (watched) by it. */
function lacksOwnerLabel(obj: KubeObject): boolean {
  return !obj.metadata?.labels?.[LABELS.ownership];
}

function hasAnnotation(obj: KubeObject, key: string): boolean {
  const annotations = obj.metadata?.annotations;
  return annotations !== undefined && Object.hasOwn(annotations, key);
}

/** Passed on by a peer that does not own it, while that peer does not reach the owner. */
function secondHandFromStrayPeer(owner: string, facts: OwnershipFacts): boolean {
  return owner !== facts.syncedFromClusterID && facts.peerReaches !== undefined && !facts.peerReaches(owner);
}

/** Another alive peer owns it: let the owner itself deliver it. */
export function ownedByAnotherAliveCluster(owner: string, facts: OwnershipFacts): boolean {
  return owner !== '' && facts.alivePeerIDs.has(owner) && owner !== facts.syncedFromClusterID;
}

function none(reason: DecisionReason): Decision {
  return { action: 'none', reason, writeStatus: false };
}

/**
 * Create (no `current`) or update decision for the desired copy. `syncStatus` is the combined
 * flag of the matched rules.
 */
export function decideWrite(facts: OwnershipFacts, desired: KubeObject, current: KubeObject | undefined, syncStatus: boolean): Decision {
  const desiredOwner = ownerOf(desired);
  if (current === undefined) {
    // Ours: nothing is created from what a peer said before it became unreachable (its cache is
    // all we have): a copy deleted here meanwhile, or a departing cluster's, must not come back.
    if (!facts.alivePeerIDs.has(facts.syncedFromClusterID)) return none(DECISION_REASONS.sourceUnreachable);
    if (hasAnnotation(desired, ANNOTATIONS.resourceSyncDisabled)) return none(DECISION_REASONS.syncDisabledOnSource);
    // Ours: a mutation removed the owner; the copy would pass for a local object and be owned by no one.
    if (desiredOwner === '' || lacksOwnerLabel(desired)) return none(DECISION_REASONS.noOwner);
    // It came back to its owner through an intermediary.
    if (desiredOwner === facts.localClusterID) return none(DECISION_REASONS.ownedByLocalCluster);
    if (ownedByAnotherAliveCluster(desiredOwner, facts)) return none(DECISION_REASONS.ownedByAnotherAliveCluster);
    if (facts.ownerRegistered?.(desiredOwner) === false) return none(DECISION_REASONS.ownerNotInGroup);
    if (secondHandFromStrayPeer(desiredOwner, facts)) return none(DECISION_REASONS.ownerNotReachedByPeer);
    return { action: 'create', reason: DECISION_REASONS.create, writeStatus: syncStatus };
  }
  // The generic reconciler leaves objects being deleted alone.
  if (current.metadata?.deletionTimestamp) return none(DECISION_REASONS.localObjectTerminating);
  if (hasAnnotation(current, ANNOTATIONS.resourceSyncDisabled)) return none(DECISION_REASONS.syncDisabledLocally);
  const currentOwner = ownerOf(current);
  // No ownership annotation: a local object, never overwritten.
  if (currentOwner === '') return none(DECISION_REASONS.locallyOwned);
  if (ownedByAnotherAliveCluster(currentOwner, facts)) return none(DECISION_REASONS.ownedByAnotherAliveCluster);
  // Ours, beyond upstream: the create-side loop guard also holds for updates, so an override
  // cannot make a peer's version of our own object overwrite the copy.
  if (desiredOwner === facts.localClusterID) return none(DECISION_REASONS.ownedByLocalCluster);
  if (desiredOwner === '' || lacksOwnerLabel(desired)) return none(DECISION_REASONS.noOwner);
  // Ours: a copy keeps its owner while that owner is in the group. Upstream let any peer's
  // same-named object replace it while the owner was down, so one missed probe let another member
  // take over what a cluster owns (a registry entry included), for good.
  if (desiredOwner !== currentOwner && facts.ownerRegistered?.(currentOwner) !== false) return none(DECISION_REASONS.ownerWouldChange);
  if (facts.ownerRegistered?.(desiredOwner) === false) return none(DECISION_REASONS.ownerNotInGroup);
  if (secondHandFromStrayPeer(desiredOwner, facts)) return none(DECISION_REASONS.ownerNotReachedByPeer);
  // Ours: the recorded source is sticky while it lives (a dead one may be taken over), unless
  // the owner itself delivers what was recorded from a copy of it: the original wins, while it
  // is alive (a dead owner's last listing does not undo what a member that reaches it passed on).
  const recorded = sourceIdentityOf(current);
  const incoming = sourceIdentityOf(desired);
  const ownerReplacesCopy = desiredOwner === facts.syncedFromClusterID && facts.alivePeerIDs.has(desiredOwner) && recorded?.clusterID !== desiredOwner;
  // Ours: while a peer is unreachable its recorded source is not live, yet another rule (or
  // object) of that same peer is no better a source: taking over would hand the copy from rule to
  // rule at each change until the peer is back. The recorded one keeps delivering from its cache.
  const samePeerAway = recorded?.clusterID === facts.syncedFromClusterID && !facts.alivePeerIDs.has(facts.syncedFromClusterID);
  if (recorded && incoming && !sameSourceIdentity(recorded, incoming) && !ownerReplacesCopy && (samePeerAway || facts.recordedSourceLive?.(recorded, current))) {
    return none(DECISION_REASONS.deliveredByAnotherSource);
  }
  return { action: 'update', reason: DECISION_REASONS.update, writeStatus: syncStatus };
}

/**
 * Whether an update would put a peer's unowned entry of another cluster (passed on for that
 * cluster; placed on the peer by hand, maybe long ago) over the copy that cluster delivered
 * itself, which may be newer: never done, even while that cluster is down.
 */
export function unclaimedOverOwnDelivery(facts: OwnershipFacts, source: KubeObject, desired: KubeObject, current: KubeObject | undefined): boolean {
  return current !== undefined && ownerOf(source) === '' && ownerOf(desired) !== facts.syncedFromClusterID && sourceIdentityOf(current)?.clusterID === ownerOf(current);
}

/**
 * Delete decision for the local copy `current` of the source `source` (read from
 * facts.syncedFromClusterID, so source.clusterID is that peer).
 */
export function decideDelete(facts: OwnershipFacts, source: SourceIdentity, current: KubeObject | undefined): Decision {
  if (current === undefined) return none(DECISION_REASONS.localObjectAbsent);
  const owner = ownerOf(current);
  if (owner === '') return none(DECISION_REASONS.locallyOwned);
  if (ownedByAnotherAliveCluster(owner, facts)) return none(DECISION_REASONS.ownedByAnotherAliveCluster);
  // Only the peer the copy came from, or its owner, can have its deletion propagate; a peer that
  // passed on another cluster's object speaks for it only while it reaches that cluster.
  if (secondHandFromStrayPeer(owner, facts)) return none(DECISION_REASONS.ownerNotReachedByPeer);
  const recorded = sourceIdentityOf(current);
  if (recorded !== undefined && recorded.clusterID === facts.syncedFromClusterID) {
    return sameSourceIdentity(recorded, source)
      ? { action: 'delete', reason: DECISION_REASONS.delete, writeStatus: false }
      : none(DECISION_REASONS.differentSourceObject);
  }
  if (owner === facts.syncedFromClusterID) return { action: 'delete', reason: DECISION_REASONS.delete, writeStatus: false };
  return none(DECISION_REASONS.notSyncedFromThisPeer);
}

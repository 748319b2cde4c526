// When a copy has outlived its source: the rule that made it was deleted, its source object stopped
// matching or went away, its peer left the group or stopped advertising the feature the rule
// needs, or the cluster that owns it left the group. Such a copy is an orphan and is collected
// after a grace period. A copy is never an orphan because something is merely unreachable or not
// known yet: only what a live peer or this cluster's own registry positively says counts; and
// never while this cluster's registry uses it.

import { ANNOTATIONS } from '../api/keys.ts';
import { sourceIdentityOf } from '../api/source-identity.ts';
import type { KubeObject } from '../api/types.ts';
import { ownerOf } from '../api/source-identity.ts';

/** What the engine knows about the recorded source of a copy, through the rule that made it. */
export interface RecordedSource {
  /** The rule: deleted, invalid (bad input is no reason to delete), or present. */
  readonly rule: 'deleted' | 'invalid' | 'present';
  /** Its binding to the recorded peer: running, not wanted (features unmet), or still starting. */
  readonly binding: 'active' | 'featuresUnmet' | 'starting';
  /** The source object in that peer's synced cache, or unknown while the cache is not synced. */
  readonly object: 'matches' | 'absent' | 'notMatching' | 'unknown';
}

export interface CopyFacts {
  readonly localClusterID: string;
  /** kube-system UIDs of the Clusters in this cluster's registry (the group as we know it). */
  readonly registeredClusterIDs: ReadonlySet<string>;
  readonly alivePeerIDs: ReadonlySet<string>;
  /** undefined when the copy records no source of ours (made by another implementation or by hand). */
  readonly recorded: RecordedSource | undefined;
  /** Another live source (peer, rule) delivers this same copy, so it is only changing hands. */
  readonly alternativeSource: boolean;
  /**
   * Whether the recorded peer reaches the copy's owner (trivially when it is the owner). A peer
   * that passed on another cluster's object no longer speaks for it once it cannot reach it.
   */
  readonly recordedPeerReachesOwner: boolean;
  /** This cluster's registry uses the copy (the credentials our Cluster of its owner reads it with). */
  readonly inUse?: boolean;
}

export const KEEP_REASONS = {
  live: 'Live',
  notOurs: 'NotOurs',
  syncDisabled: 'SyncDisabled',
  locallyOwned: 'LocallyOwned',
  inUse: 'InUse',
  changingHands: 'ChangingHands',
  sourceUnreachable: 'SourceUnreachable',
  ruleInvalid: 'RuleInvalid',
  notYetKnown: 'NotYetKnown',
} as const;

export const ORPHAN_REASONS = {
  ownerLeftGroup: 'OwnerLeftGroup',
  peerLeftGroup: 'PeerLeftGroup',
  ruleDeleted: 'RuleDeleted',
  featureWithdrawn: 'FeatureWithdrawn',
  sourceDeleted: 'SourceDeleted',
  sourceNoLongerMatches: 'SourceNoLongerMatches',
} as const;

export type CopyFate =
  | { readonly orphan: false; readonly reason: (typeof KEEP_REASONS)[keyof typeof KEEP_REASONS] }
  | { readonly orphan: true; readonly reason: (typeof ORPHAN_REASONS)[keyof typeof ORPHAN_REASONS] };

const keep = (reason: (typeof KEEP_REASONS)[keyof typeof KEEP_REASONS]): CopyFate => ({ orphan: false, reason });

export function decideCopyFate(copy: KubeObject, f: CopyFacts): CopyFate {
  const identity = sourceIdentityOf(copy);
  if (!identity || !f.recorded) return keep(KEEP_REASONS.notOurs);
  if (Object.hasOwn(copy.metadata.annotations ?? {}, ANNOTATIONS.resourceSyncDisabled)) return keep(KEEP_REASONS.syncDisabled);
  const owner = ownerOf(copy);
  if (owner === '' || owner === f.localClusterID) return keep(KEEP_REASONS.locallyOwned);
  // Deleting it would cut us off from a member: it goes only once no Cluster here names it.
  if (f.inUse) return keep(KEEP_REASONS.inUse);
  // Every member drops what a departed cluster owned, so peers cannot keep it alive for each other.
  if (!f.registeredClusterIDs.has(owner)) return { orphan: true, reason: ORPHAN_REASONS.ownerLeftGroup };
  const orphan = (reason: (typeof ORPHAN_REASONS)[keyof typeof ORPHAN_REASONS]): CopyFate =>
    f.alternativeSource ? keep(KEEP_REASONS.changingHands) : { orphan: true, reason };
  if (!f.registeredClusterIDs.has(identity.clusterID)) return orphan(ORPHAN_REASONS.peerLeftGroup);
  if (!f.alivePeerIDs.has(identity.clusterID) || !f.recordedPeerReachesOwner) return keep(KEEP_REASONS.sourceUnreachable);
  const r = f.recorded;
  if (r.rule === 'deleted') return orphan(ORPHAN_REASONS.ruleDeleted);
  if (r.rule === 'invalid') return keep(KEEP_REASONS.ruleInvalid);
  if (r.binding === 'featuresUnmet') return orphan(ORPHAN_REASONS.featureWithdrawn);
  if (r.binding === 'starting') return keep(KEEP_REASONS.notYetKnown);
  switch (r.object) {
    case 'matches':
      return keep(KEEP_REASONS.live);
    case 'absent':
      return orphan(ORPHAN_REASONS.sourceDeleted);
    case 'notMatching':
      return orphan(ORPHAN_REASONS.sourceNoLongerMatches);
    case 'unknown':
      return keep(KEEP_REASONS.notYetKnown);
  }
}

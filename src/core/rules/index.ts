// Rule matching, desired-copy construction and the ownership decisions of the sync core.
export { describeMutationFailure, errorMessage, formatIssue, RuleError, type RuleIssue } from './errors.ts';
export { compileRule, matchRule, validateRule, type CompiledRule, type MatchResult } from './match.ts';
export {
  buildDesiredCopy,
  combineMutations,
  isLabelValue,
  mayChangeOwner,
  possibleTargetGVKs,
  stripSourceMetadata,
  targetGVK,
  type CombinedMutations,
  type KeyChanges,
  type LocatedOverride,
  type MutationContext,
} from './mutate.ts';
export {
  decideDelete,
  decideWrite,
  DECISION_REASONS,
  ownedByAnotherAliveCluster,
  unclaimedOverOwnDelivery,
  type Decision,
  type DecisionReason,
  type OwnershipFacts,
} from './ownership.ts';
export { ownerOf } from '../api/source-identity.ts';
export { renderRule, type RenderInput, type RenderResult } from './render.ts';
export { advertisedFeature, featuresSatisfied, type AdvertisedFeature } from './features.ts';
export { drainedWatchNeeded, inScope, MAX_SCOPED_NAMESPACES, sourceScope, targetNamespaces, watchCovers, type CopySpot, type CopyWatch, type SourceScope } from './scope.ts';
export { applyBody, applyNeeded, specPart, FIELD_MANAGER, foldedManagedFields, holds, isObject, ownedFieldsKept, type ManagedFieldsEntry, type Part } from './apply.ts';
export { decideCopyFate, KEEP_REASONS, ORPHAN_REASONS, type CopyFacts, type CopyFate, type RecordedSource } from './orphans.ts';
export { copyRelevantChange } from './changes.ts';
export { BUILTIN_PREFIX, builtinRules, fingerprint, narrows, peerWatchFilter, relaysRegistry, ruleState, type PeerRef, type PeerWatchFilter, type RuleState } from './rule-state.ts';
export { copyPlace, CopyTargets, decideCopy, desiredCopy, ruleTakes, standsAt, type DesiredCopy } from './copy.ts';
export { runThrough, type Pausable } from './pausable.ts';
export {
  aroundDrift,
  DEFAULT_DRIFT_POLICY,
  describeDrift,
  DRIFT_MARK_MANAGER,
  DRIFT_POLICIES,
  driftOutcome,
  driftPolicyOf,
  findDrift,
  markAnnotations,
  markOf,
  MAX_DRIFTED_FIELDS,
  ownRecord,
  parseSyncRecord,
  planCopyUpdate,
  planDrift,
  recordedFrom,
  recordOn,
  unkeptFields,
  type CopyUpdate,
  type DriftedField,
  type DriftMark,
  type DriftPlan,
  type DriftPolicy,
  type SyncRecord,
} from './drift.ts';
export { ruleObjectRole, type RuleObjectRole } from './rule-objects.ts';
export { upstreamBody, upstreamCopyInSync } from './upstream-copy.ts';
export { differingFields, fieldPath, valueAt, withoutFields, type FieldDifference } from './field-diff.ts';
export { adoptionChoices, adoptionPolicyOf, adopts, ADOPTION_POLICIES, describeReplaced, replacedFields, type AdoptionPolicy } from './adoption.ts';

// Rule matching, desired-copy construction and the ownership decisions of the sync core.
export { formatIssue, RuleError, type RuleIssue } from './errors.ts';
export { compileRule, matchRule, validateRule, type CompiledRule, type MatchResult } from './match.ts';
export {
  buildDesiredCopy,
  combineMutations,
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
  ownerOf,
  type Decision,
  type DecisionReason,
  type OwnershipFacts,
  type SourceObservation,
} from './ownership.ts';
export { renderRule, type RenderInput, type RenderResult } from './render.ts';

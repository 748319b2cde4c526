// Preview of one rule against one object, as `cluster-registry rule render` shows it: does it
// match, which rules, and the local copy the sync controller would write. Never throws for rule
// or object problems: they are returned, each with its location.

import type { Cluster, KubeObject, ResourceSyncRule, SyncRule } from '../api/types.ts';
import { formatIssue, RuleError } from './errors.ts';
import { compileRule, validateRule } from './match.ts';
import { buildDesiredCopy, combineMutations } from './mutate.ts';

export interface RenderInput {
  rule: ResourceSyncRule;
  object: KubeObject;
  /** The Cluster CR of the peer the object is read from. */
  cluster: Cluster;
  localCluster: Cluster;
  /** Defaults to localCluster.spec.clusterID. */
  localClusterID?: string;
}

export interface RenderResult {
  matched: boolean;
  matchedRules: SyncRule[];
  copy?: KubeObject;
  /** `location: message` lines; empty when the rule is valid and the copy could be built. */
  errors: string[];
}

export function renderRule(input: RenderInput): RenderResult {
  const issues = validateRule(input.rule.spec);
  if (issues.length > 0) return { matched: false, matchedRules: [], errors: issues.map(formatIssue) };
  let matched = false;
  let matchedRules: SyncRule[] = [];
  try {
    ({ matched, matchedRules } = compileRule(input.rule.spec).match(input.object));
    if (!matched) return { matched, matchedRules, errors: [] };
    const copy = buildDesiredCopy(input.object, combineMutations(matchedRules, input.rule.spec), {
      syncedFromClusterID: input.cluster.spec.clusterID,
      localClusterID: input.localClusterID ?? input.localCluster.spec.clusterID,
      clusters: [input.cluster, input.localCluster],
    });
    return { matched, matchedRules, copy, errors: [] };
  } catch (err) {
    if (!(err instanceof RuleError)) throw err;
    return { matched, matchedRules, errors: err.issues.map(formatIssue) };
  }
}

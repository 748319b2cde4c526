// Which objects of a cluster a rule concerns, for picking one to trace: the copies the rule made
// there, and the objects owned there that the rule takes, which every member running the same rule
// copies from that cluster.
import { gvkOf, ownerOf, sourceIdentityOf } from '../api/index.ts';
import type { KubeObject } from '../api/types.ts';
import type { RuleState } from './rule-state.ts';

export type RuleObjectRole = 'copy' | 'source';

/**
 * `o`'s part in `rule` on the cluster `localClusterID`: a copy the rule wrote (one recorded before
 * rules were, by whichever rule makes its kind), a source it takes (owned there, matched), or none.
 */
export function ruleObjectRole(rule: Pick<RuleState, 'name' | 'compiled' | 'targetGVKs'>, o: KubeObject, localClusterID: string): RuleObjectRole | undefined {
  const id = sourceIdentityOf(o);
  const owner = ownerOf(o);
  if (id && id.clusterID !== localClusterID) {
    const g = gvkOf(o);
    const made = rule.targetGVKs.some((t) => t.group === g.group && t.kind === g.kind);
    return made && (id.rule === undefined || id.rule === rule.name) ? 'copy' : undefined;
  }
  if (owner !== '' && owner !== localClusterID) return undefined;
  return rule.compiled?.match(o).matched ? 'source' : undefined;
}

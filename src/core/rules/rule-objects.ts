// Which objects of a cluster a rule concerns, for picking one to trace: the copies the rule made
// there, and the objects owned there that the rule takes, which every member running the same rule
// copies from that cluster.
import { gvkOf, ownerOf, sourceIdentityOf } from '../api/index.ts';
import type { KubeObject } from '../api/types.ts';
import type { RuleState } from './rule-state.ts';

export type RuleObjectRole = 'copy' | 'source';

/**
 * `o`'s part in `rule` on the cluster `localClusterID`: a copy of the rule's source kind, owned by
 * another member, that the rule wrote (or whose rule is not recorded: one written before rules
 * were, or by upstream's controller); a source it takes (owned there, matched); or none. A copy the
 * rule made into another kind is none: trace follows a copy only to a source of its own kind.
 */
export function ruleObjectRole(rule: Pick<RuleState, 'name' | 'compiled' | 'sourceGVK'>, o: KubeObject, localClusterID: string): RuleObjectRole | undefined {
  const owner = ownerOf(o);
  if (owner !== '' && owner !== localClusterID) {
    const id = sourceIdentityOf(o);
    const g = gvkOf(o);
    const sameKind = g.group === rule.sourceGVK.group && g.kind === rule.sourceGVK.kind;
    return sameKind && (id?.rule === undefined || id.rule === rule.name) ? 'copy' : undefined;
  }
  return rule.compiled?.match(o).matched ? 'source' : undefined;
}

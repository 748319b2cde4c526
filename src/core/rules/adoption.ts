// Adoption: an object already at a copy's place that is not a copy (no owner) blocks the copy, as
// upstream does, unless the rule says to take it over: `IfIdentical` when it already holds every
// value the copy would set, `Always` whatever it holds. A rule any member may author reaches every
// member, so adoption is honoured only from rules made on this member: a peer's rule never takes
// over what this cluster made itself.
import { isSecret } from '../api/resources.ts';
import { cut } from '../api/text.ts';
import { ownerOf } from '../api/source-identity.ts';
import type { KubeObject } from '../api/types.ts';
import { applyBody } from './apply.ts';
import { differingFields, fieldPath, type FieldDifference } from './field-diff.ts';
import type { RuleState } from './rule-state.ts';

export const ADOPTION_POLICIES = ['Never', 'IfIdentical', 'Always'] as const;
export type AdoptionPolicy = (typeof ADOPTION_POLICIES)[number];
export const isAdoptionPolicy = (v: unknown): v is AdoptionPolicy => typeof v === 'string' && (ADOPTION_POLICIES as readonly string[]).includes(v);

/** Replaced fields said per adoption at most (the rest are counted). */
export const MAX_REPLACED_FIELDS = 16;
/** Characters of one replaced value said at most. */
const MAX_VALUE_LENGTH = 200;

/** The rule's adoption policy here, and why it is Never when the rule asks for more. */
export function adoptionPolicyOf(rule: Pick<RuleState, 'object' | 'spec'>): { policy: AdoptionPolicy; why?: string } {
  const asked = rule.spec.adoptionPolicy ?? 'Never';
  if (asked === 'Never' || !rule.object) return { policy: 'Never' };
  const author = ownerOf(rule.object);
  if (author !== '') return { policy: 'Never', why: `adoptionPolicy ${asked} is honoured only where the rule was made (this copy of it came from cluster ${author})` };
  return { policy: asked };
}

/** What the copy would replace in the local object: each field it sets that the object holds otherwise. */
export function replacedFields(current: KubeObject, desired: KubeObject): FieldDifference[] {
  return differingFields(applyBody(desired, 'main'), current);
}

/** Whether the policy takes over a local object the copy would replace those fields of. */
export function adopts(policy: AdoptionPolicy, replaced: readonly FieldDifference[]): boolean {
  return policy === 'Always' || (policy === 'IfIdentical' && replaced.length === 0);
}

/**
 * What an adoption replaced, so that it can be put back by hand: each field with the value it had
 * (a Secret's values are never said).
 */
export function describeReplaced(current: KubeObject, replaced: readonly FieldDifference[]): string {
  const hidden = isSecret(current);
  const said = replaced.slice(0, MAX_REPLACED_FIELDS).map((f) => {
    const was = f.have === undefined ? 'absent' : hidden ? '(value hidden)' : cut(JSON.stringify(f.have), MAX_VALUE_LENGTH);
    return `${fieldPath(f.segments)} was ${was}`;
  });
  const more = replaced.length > MAX_REPLACED_FIELDS ? `; and ${replaced.length - MAX_REPLACED_FIELDS} more` : '';
  return said.length === 0 ? 'nothing (it held the copy already)' : `${said.join('; ')}${more}`;
}

/** What each policy would do with a local object in a copy's way, in words (`explain`). */
export function adoptionChoices(replaced: readonly FieldDifference[]): string {
  return replaced.length === 0 ? 'IfIdentical or Always would adopt it (it holds the copy already)' : `Always would adopt it, replacing ${replaced.length} field${replaced.length === 1 ? '' : 's'}; IfIdentical would not`;
}

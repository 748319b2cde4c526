// Kubernetes label selectors with the semantics of k8s.io/apimachinery v0.21.3 pkg/labels and
// metav1.LabelSelectorAsSelector: same matching, same String(), same error texts.
import { compareGo, fromJSON, goQuote } from '../strings.ts';
import { aggregate, invalidField, isQualifiedName, isValidLabelValue } from './validation.ts';

export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

/** An invalid selector; the message is apimachinery's, naming the offending key, value or operator. */
export class SelectorError extends Error {
  override name = 'SelectorError';
}

export type Labels = Readonly<Record<string, string>>;

export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  readonly values: readonly string[];
}

export interface Selector {
  matches(labels: Labels): boolean;
  /** Go's Selector.Empty(): true for Everything, false for Nothing. */
  empty(): boolean;
  toString(): string;
}

const int64Re = /^[+-]?[0-9]+$/;
const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** strconv.ParseInt(s, 10, 64), or undefined where Go returns an error. */
function parseInt64(s: string): bigint | undefined {
  if (!int64Re.test(s)) return undefined;
  const n = BigInt(s);
  return n < int64Min || n > int64Max ? undefined : n;
}

function has(labels: Labels, key: string): boolean {
  return Object.hasOwn(labels, key);
}

export function requirementMatches(r: Requirement, labels: Labels): boolean {
  // A value as Go decodes it (lone surrogates are U+FFFD): only the ones a requirement reads.
  const value = (): string => fromJSON(labels[r.key] ?? '');
  switch (r.operator) {
    case 'in': case '=': case '==':
      return has(labels, r.key) && r.values.includes(value());
    case 'notin': case '!=':
      return !has(labels, r.key) || !r.values.includes(value());
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt': case 'lt': {
      if (!has(labels, r.key) || r.values.length !== 1) return false;
      const actual = parseInt64(value());
      const wanted = parseInt64(r.values[0] ?? '');
      if (actual === undefined || wanted === undefined) return false;
      return r.operator === 'gt' ? actual > wanted : actual < wanted;
    }
  }
}

const infix: Record<Operator, string> = {
  in: ' in ', notin: ' notin ', '=': '=', '==': '==', '!=': '!=', gt: '>', lt: '<', exists: '', '!': '',
};

export function requirementString(r: Requirement): string {
  if (r.operator === 'exists') return r.key;
  if (r.operator === '!') return '!' + r.key;
  const values = r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort(compareGo).join(',');
  const set = r.operator === 'in' || r.operator === 'notin';
  return r.key + infix[r.operator] + (set ? `(${values})` : values);
}

export function validateLabelKey(key: string, path: string): string | undefined {
  const errs = isQualifiedName(key);
  return errs.length === 0 ? undefined : invalidField(path, key, errs.join('; '));
}

/**
 * labels.NewRequirement: validates and builds a requirement. `values` is null where Go's slice
 * is nil (printed as `[]string(nil)` in errors).
 */
export function newRequirement(key: string, operator: Operator, values: string[] | null): Requirement {
  const vals = values ?? [];
  const errs: string[] = [];
  const keyErr = validateLabelKey(key, 'key');
  if (keyErr !== undefined) errs.push(keyErr);
  switch (operator) {
    case 'in': case 'notin':
      if (vals.length === 0) errs.push(invalidField('values', values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=': case '==': case '!=':
      if (vals.length !== 1) errs.push(invalidField('values', values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists': case '!':
      if (vals.length !== 0) errs.push(invalidField('values', values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt': case 'lt':
      if (vals.length !== 1) errs.push(invalidField('values', values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) {
          errs.push(invalidField(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      });
      break;
  }
  vals.forEach((v, i) => {
    const valueErrs = isValidLabelValue(v);
    if (valueErrs.length > 0) errs.push(invalidField(`values[${i}][${key}]`, v, valueErrs.join('; ')));
  });
  if (errs.length > 0) throw new SelectorError(aggregate(errs));
  return { key, operator, values: vals };
}

class RequirementsSelector implements Selector {
  readonly requirements: readonly Requirement[];

  constructor(requirements: Requirement[]) {
    // Go sorts by key for a deterministic String(); stable, as Go's insertion sort is for small sets.
    this.requirements = [...requirements].sort((a, b) => compareGo(a.key, b.key));
  }

  matches(labels: Labels): boolean {
    return this.requirements.every((r) => requirementMatches(r, labels));
  }

  empty(): boolean {
    return this.requirements.length === 0;
  }

  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

/** labels.Nothing(): matches no label set. */
export const nothing: Selector = Object.freeze({
  matches: () => false,
  empty: () => false,
  toString: () => '',
});

/** labels.Everything(): matches every label set. */
export const everything: Selector = new RequirementsSelector([]);

export function selectorOf(requirements: Requirement[]): Selector {
  return new RequirementsSelector(requirements);
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[] | null;
}

export interface LabelSelector {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: LabelSelectorRequirement[] | null;
}

const labelSelectorOperators: Record<string, Operator> = {
  In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!',
};

/** Labels as Go decodes them from JSON (lone surrogates are U+FFFD); the same object when nothing changes. */
function goLabels(labels: Labels): Labels {
  const entries = Object.entries(labels);
  if (entries.every(([k, v]) => k.isWellFormed() && v.isWellFormed())) return labels;
  return Object.fromEntries(entries.map(([k, v]) => [fromJSON(k), fromJSON(v)]));
}

/**
 * metav1.LabelSelectorAsSelector. `null`/`undefined` is Go's nil selector and matches nothing;
 * a selector with no labels and no expressions matches everything. Throws SelectorError.
 */
export function labelSelectorToSelector(ls: LabelSelector | null | undefined): Selector {
  if (ls === null || ls === undefined) return nothing;
  const matchLabels = goLabels(ls.matchLabels ?? {});
  const expressions = ls.matchExpressions ?? [];
  const labelKeys = Object.keys(matchLabels).sort(compareGo);
  if (labelKeys.length + expressions.length === 0) return everything;
  const reqs: Requirement[] = [];
  // Go walks matchLabels in random map order; sorted order picks one of its possible errors.
  for (const k of labelKeys) reqs.push(newRequirement(k, '=', [matchLabels[k] ?? '']));
  for (const expr of expressions) {
    const op = Object.hasOwn(labelSelectorOperators, expr.operator) ? labelSelectorOperators[expr.operator] : undefined;
    if (op === undefined) throw new SelectorError(`${goQuote(fromJSON(expr.operator))} is not a valid pod selector operator`);
    const values = expr.values && expr.values.length > 0 ? expr.values.map(fromJSON) : null;
    reqs.push(newRequirement(fromJSON(expr.key), op, values));
  }
  return selectorOf(reqs);
}

// Which objects a ResourceSyncRule selects, with upstream's semantics: an exact GVK gate,
// OR over `rules`, OR over a rule's `match` entries, AND over the criteria of one entry.
// Unlike upstream, a rule is compiled (and so fully validated) before anything is matched: an
// invalid selector anywhere is a RuleError naming it, never a silent no-match as upstream's was.

import { gvkOf, sameGVK } from '../api/gvk.ts';
import { OVERRIDE_TYPES } from '../api/keys.ts';
import type {
  ContentSelector,
  KubeObject,
  LabelSelector,
  Mutations,
  ResourceSyncRuleSpec,
  SyncRule,
  SyncRuleMatch,
} from '../api/types.ts';
import { GjsonLimitError, gjsonGet, jsonMarshalForMatch, type GjsonResult } from '../../go/gjson/index.ts';
import { GoPatchError, parsePointer } from '../../go/gopatch/index.ts';
import { typedJSON } from '../../go/template/index.ts';
import { labelSelectorToSelector, SelectorError, type Selector } from '../../go/labels/index.ts';
import { RuleError, type RuleIssue } from './errors.ts';
import { ADOPTION_POLICIES, isAdoptionPolicy } from './adoption.ts';
import { DRIFT_POLICIES, isDriftPolicy } from './drift.ts';
import { writesMoreKindsThan } from './mutate.ts';

/**
 * Bounds on one rule, far above any real one: a rule is evaluated for every object it watches on
 * every peer, and each target kind costs a cache, so an unbounded rule is a way to exhaust us.
 */
export const RULE_LIMITS = {
  rules: 64,
  matchEntries: 64,
  overrides: 64,
  targetKinds: 16,
  templateBytes: 64 * 1024,
} as const;

export interface MatchResult {
  matched: boolean;
  /** Every rule of `spec.rules` that matched, in order: their mutations are combined. */
  matchedRules: SyncRule[];
}

export interface CompiledRule {
  readonly spec: ResourceSyncRuleSpec;
  match(obj: KubeObject): MatchResult;
}

interface CompiledEntry {
  name: string;
  namespace: string;
  namespaces: ReadonlySet<string>;
  labels: readonly Selector[];
  annotations: readonly Selector[];
  content: readonly ContentSelector[];
}

interface CompiledSyncRule {
  rule: SyncRule;
  entries: readonly CompiledEntry[];
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Compiles selectors while recording every problem with its location. */
class Compiler {
  readonly issues: RuleIssue[] = [];

  selector(path: string, ls: LabelSelector): Selector | undefined {
    try {
      return labelSelectorToSelector(ls);
    } catch (err) {
      if (!(err instanceof SelectorError)) throw err;
      this.issues.push({ path, message: err.message });
      return undefined;
    }
  }

  selectors(path: string, list: readonly LabelSelector[]): Selector[] {
    return list.flatMap((ls, i) => this.selector(`${path}[${i}]`, ls) ?? []);
  }

  content(path: string, list: readonly ContentSelector[]): void {
    list.forEach((c, i) => {
      const at = `${path}[${i}]`;
      if (typeof c.key !== 'string' || c.key === '') this.issues.push({ path: `${at}.key`, message: 'must be a non-empty gjson path' });
      const v: unknown = c.value;
      if (typeof v === 'number') {
        // intstr.IntOrString holds an int32; the apiserver rejects anything else.
        if (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) {
          this.issues.push({ path: `${at}.value`, message: `${v} is not a 32-bit integer` });
        }
      } else if (typeof v !== 'string') {
        this.issues.push({ path: `${at}.value`, message: 'must be an integer or a string' });
      }
    });
  }

  entry(path: string, m: SyncRuleMatch): CompiledEntry {
    const labels = this.selectors(`${path}.labels`, m.labels ?? []);
    // An annotation selector is a label selector over the annotations map, so its keys and
    // values must be valid label keys and values (as upstream converts it).
    const annotations = (m.annotations ?? []).flatMap(
      (a, i) => this.selector(`${path}.annotations[${i}]`, { matchLabels: a.matchAnnotations, matchExpressions: a.matchExpressions }) ?? [],
    );
    this.content(`${path}.content`, m.content ?? []);
    return {
      name: m.objectKey?.name ?? '',
      namespace: m.objectKey?.namespace ?? '',
      namespaces: new Set(m.namespaces ?? []),
      labels,
      annotations,
      content: m.content ?? [],
    };
  }

  mutations(path: string, mu: Mutations): void {
    // The API server's schema guarantees strings; a rule read from a file (explain, rule render) does not.
    let strings = true;
    for (const [field, map] of [['labels', mu.labels?.add], ['annotations', mu.annotations?.add]] as const) {
      for (const [key, value] of Object.entries(map ?? {})) {
        if (typeof value === 'string') continue;
        strings = false;
        this.issues.push({ path: `${path}.${field}.add.${key}`, message: `must be a string, not ${typeof value} (YAML reads unquoted yes, no, on, off and numbers as other types: quote them)` });
      }
    }
    if (!strings) return;
    const labelsAdd = mu.labels?.add;
    if (labelsAdd) this.selector(`${path}.labels.add`, { matchLabels: labelsAdd });
    const annotationKeys = Object.keys(mu.annotations?.add ?? {});
    if (annotationKeys.length > 0) {
      this.selector(`${path}.annotations.add`, {
        matchExpressions: annotationKeys.map((key) => ({ key, operator: 'Exists' })),
      });
    }
    const overrides = mu.overrides ?? [];
    if (overrides.length > RULE_LIMITS.overrides) this.issues.push({ path: `${path}.overrides`, message: `at most ${RULE_LIMITS.overrides} overrides` });
    overrides.forEach((o, i) => {
      const at = `${path}.overrides[${i}]`;
      if (typeof o.value === 'string' && Buffer.byteLength(o.value) > RULE_LIMITS.templateBytes) {
        this.issues.push({ path: `${at}.value`, message: `at most ${RULE_LIMITS.templateBytes} bytes` });
      }
      if (o.type !== OVERRIDE_TYPES.replace && o.type !== OVERRIDE_TYPES.remove) {
        this.issues.push({ path: `${at}.type`, message: `unsupported override type ${JSON.stringify(o.type ?? '')} (want replace or remove)` });
      }
      if (o.type === OVERRIDE_TYPES.replace && /^\/metadata\/generateName\??$/.test(o.path ?? '')) {
        this.issues.push({ path: `${at}.path`, message: 'a copy is never written with metadata.generateName: it needs a name of its own' });
      }
      try {
        parsePointer(o.path ?? '');
      } catch (err) {
        if (!(err instanceof GoPatchError)) throw err;
        this.issues.push({ path: `${at}.path`, message: `invalid go-patch path ${JSON.stringify(o.path)}: ${err.message}` });
      }
    });
  }

  rule(spec: ResourceSyncRuleSpec): CompiledSyncRule[] {
    const gvk = spec.groupVersionKind as ResourceSyncRuleSpec['groupVersionKind'] | undefined;
    if (!gvk?.version) this.issues.push({ path: 'spec.groupVersionKind.version', message: 'required' });
    if (!gvk?.kind) this.issues.push({ path: 'spec.groupVersionKind.kind', message: 'required' });
    if (spec.driftPolicy !== undefined && !isDriftPolicy(spec.driftPolicy)) this.issues.push({ path: 'spec.driftPolicy', message: `must be one of ${DRIFT_POLICIES.join(', ')}` });
    if (spec.adoptionPolicy !== undefined && !isAdoptionPolicy(spec.adoptionPolicy)) this.issues.push({ path: 'spec.adoptionPolicy', message: `must be one of ${ADOPTION_POLICIES.join(', ')}` });
    (spec.clusterFeatureMatch ?? []).forEach((f, i) => {
      this.selector(`spec.clusterFeatureMatch[${i}]`, { matchLabels: f.matchLabels, matchExpressions: f.matchExpressions });
    });
    if (!Array.isArray(spec.rules)) {
      this.issues.push({ path: 'spec.rules', message: 'required' });
      return [];
    }
    if (spec.rules.length > RULE_LIMITS.rules) this.issues.push({ path: 'spec.rules', message: `at most ${RULE_LIMITS.rules} rules` });
    // Each kind a rule can write is watched here: their number is what is bounded.
    if (writesMoreKindsThan(spec, RULE_LIMITS.targetKinds)) {
      this.issues.push({ path: 'spec.rules', message: `at most ${RULE_LIMITS.targetKinds} target kinds besides the source's (mutations.groupVersionKind, combined as objects match several rules)` });
    }
    return spec.rules.map((rule, i) => {
      const at = `spec.rules[${i}]`;
      const match = rule.match ?? [];
      if (match.length > RULE_LIMITS.matchEntries) this.issues.push({ path: `${at}.match`, message: `at most ${RULE_LIMITS.matchEntries} entries` });
      const entries = match.map((m, j) => this.entry(`${at}.match[${j}]`, m));
      if (rule.mutations) this.mutations(`${at}.mutations`, rule.mutations);
      return { rule, entries };
    });
  }
}

/** Every problem of the rule, each with its location; empty when the rule is usable. */
export function validateRule(spec: ResourceSyncRuleSpec): RuleIssue[] {
  const c = new Compiler();
  c.rule(spec);
  return c.issues;
}

/** Compiles once per rule generation; throws RuleError listing every problem. */
export function compileRule(spec: ResourceSyncRuleSpec): CompiledRule {
  const c = new Compiler();
  const rules = c.rule(spec);
  if (c.issues.length > 0) throw new RuleError(c.issues);
  return {
    spec,
    match: (obj) => {
      if (!sameGVK(gvkOf(obj), spec.groupVersionKind)) return { matched: false, matchedRules: [] };
      // Upstream marshals the object as it holds it: typed when its scheme knows the kind.
      const json = lazy(() => typedJSON(obj, spec.groupVersionKind) ?? jsonMarshalForMatch(obj));
      const matchedRules = rules.filter((r) => r.entries.length === 0 || r.entries.some((e) => entryMatches(e, obj, json))).map((r) => r.rule);
      return { matched: matchedRules.length > 0, matchedRules };
    },
  };
}

/** Convenience for one-off checks; controllers should keep a compileRule result instead. */
export function matchRule(spec: ResourceSyncRuleSpec, obj: KubeObject): MatchResult {
  return compileRule(spec).match(obj);
}

function lazy<T>(f: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = f();
      done = true;
    }
    return value;
  };
}

function entryMatches(e: CompiledEntry, obj: KubeObject, json: () => string): boolean {
  const name = obj.metadata?.name ?? '';
  const namespace = obj.metadata?.namespace ?? '';
  if (e.name !== '' && e.name !== name) return false;
  if (e.namespace !== '' && e.namespace !== namespace) return false;
  // Cluster-scoped objects pass a namespace list.
  if (e.namespaces.size > 0 && namespace !== '' && !e.namespaces.has(namespace)) return false;
  if (e.labels.length > 0) {
    const labels = obj.metadata?.labels ?? {};
    if (!e.labels.some((s) => s.matches(labels))) return false;
  }
  if (e.annotations.length > 0) {
    const annotations = obj.metadata?.annotations ?? {};
    if (!e.annotations.some((s) => s.matches(annotations))) return false;
  }
  return e.content.every((c) => contentMatches(c, json()));
}

function contentMatches(c: ContentSelector, json: string): boolean {
  let res: GjsonResult;
  try {
    res = gjsonGet(json, c.key);
  } catch (err) {
    // A path that costs more on this object than a match may: the rule says so for the object.
    if (err instanceof GjsonLimitError) throw new RuleError([{ path: `content key ${JSON.stringify(c.key.slice(0, 64))}`, message: err.message }]);
    throw err;
  }
  if (!res.exists) return false;
  // gjson coercions: Int() turns false/null/objects/other strings into 0 (upstream edge: `value: 0`
  // matches all of those); String() renders numbers by their literal text.
  return typeof c.value === 'number' ? res.int() === BigInt(c.value) : res.str() === c.value;
}

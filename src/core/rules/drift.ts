// Drift: a copy edited here, not at its source. Upstream puts every such edit back without a
// word; here a rule chooses (Revert, Report, Pause; a source may choose for its own copies), and
// every drift is said with who made it and when, taken from the copy's managedFields.
//
// What tells an edit from a change of the source: a field another field manager owns (whoever
// changes a field takes it from us) is an edit; one only our manager owns holds what we last
// wrote, and differs because the source or the rule changed. A field no one owns was removed
// here, or is new in what we write: the sync record, an annotation each write of the copy
// carries (a hash of what was written), tells which. Once marked, a drifted field stays drifted
// while it differs, whoever owns it since.
import { hash as digest } from 'node:crypto';
import { without } from '../api/clone.ts';
import { ANNOTATIONS } from '../api/keys.ts';
import { cut } from '../api/text.ts';
import type { KubeObject } from '../api/types.ts';
import { applyBody, FIELD_MANAGER, isObject, type ManagedFieldsEntry, type Part } from './apply.ts';
import { differingFields, fieldPath, valueAt, withoutFields } from './field-diff.ts';
import type { RuleState } from './rule-state.ts';

export const DRIFT_POLICIES = ['Revert', 'Report', 'Pause'] as const;
export type DriftPolicy = (typeof DRIFT_POLICIES)[number];
export const DEFAULT_DRIFT_POLICY: DriftPolicy = 'Revert';

/** The field manager that writes only the drift mark, so that marking a copy never puts back what was edited. */
export const DRIFT_MARK_MANAGER = 'cluster-registry-drift';

/** Fields said per drift at most (the rest are counted): a mark and an Event stay readable. */
export const MAX_DRIFTED_FIELDS = 16;
/** Fields a mark remembers at most. */
export const MAX_MARKED_FIELDS = 64;
/** Length of a mark's text, and of a drift said in words, at most. */
export const MAX_MARK_LENGTH = 1024;

export const isDriftPolicy = (v: unknown): v is DriftPolicy => typeof v === 'string' && (DRIFT_POLICIES as readonly string[]).includes(v);

/**
 * The policy for one source's copies: the source's annotation, else the rule's. A value that is
 * neither leaves the rule's, with an error to report. The registry's own rules (Clusters, their
 * credentials, rules) always put back: a peer's word on what it passes on never keeps a local
 * edit of the group's bookkeeping.
 */
export function driftPolicyOf(rule: Pick<RuleState, 'object' | 'spec' | 'channel'>, source: KubeObject): { policy: DriftPolicy; error?: string } {
  if (!rule.object || rule.channel !== 'rule') return { policy: DEFAULT_DRIFT_POLICY };
  const own = source.metadata.annotations?.[ANNOTATIONS.driftPolicy];
  const policy = rule.spec.driftPolicy ?? DEFAULT_DRIFT_POLICY;
  if (own === undefined) return { policy };
  if (isDriftPolicy(own)) return { policy: own };
  return { policy, error: `annotation ${ANNOTATIONS.driftPolicy} is ${JSON.stringify(own.slice(0, 64))}: it must be one of ${DRIFT_POLICIES.join(', ')}; the rule's ${policy} is used` };
}

/** What the sync record holds: the hash of what was written, by whom, and where it came from. */
export interface SyncRecord {
  hash: string;
  /** The kube-system UID of the cluster whose sync wrote it: a record another cluster wrote (restored, passed on by another implementation) is not ours to judge by. */
  cluster: string;
  /** The source's resourceVersion this content was first written from. */
  sourceVersion: string;
  /** The rule's generation this content was first written by. */
  ruleGeneration: number;
}

export function parseSyncRecord(value: string | undefined): SyncRecord | undefined {
  if (value === undefined) return undefined;
  try {
    const r = JSON.parse(value) as Partial<SyncRecord> | null;
    if (typeof r?.hash !== 'string' || typeof r.cluster !== 'string' || typeof r.sourceVersion !== 'string' || typeof r.ruleGeneration !== 'number') return undefined;
    return { hash: r.hash, cluster: r.cluster, sourceVersion: r.sourceVersion, ruleGeneration: r.ruleGeneration };
  } catch {
    return undefined;
  }
}

/** The record on a copy, when this cluster wrote it. */
export function ownRecord(copy: KubeObject, localClusterID: string): SyncRecord | undefined {
  const r = parseSyncRecord(copy.metadata.annotations?.[ANNOTATIONS.syncRecord]);
  return r?.cluster === localClusterID ? r : undefined;
}

/** A key JavaScript enumerates before all others, in numeric order: an array index. */
const isArrayIndex = (k: string): boolean => /^(?:0|[1-9]\d{0,9})$/.test(k) && Number(k) < 2 ** 32 - 1;

/**
 * The order the hash takes an object's keys in, as it always has (copies in clusters carry the
 * hash of what was written to them, and another order would tell each of them apart from it):
 * sorted, as an object rebuilt from them in that order enumerates them, so array indices first, in
 * numeric order. Object.keys lists those first already.
 */
function keysInHashOrder(o: object): string[] {
  const keys = Object.keys(o);
  let indices = 0;
  while (indices < keys.length && isArrayIndex(keys[indices]!)) indices++;
  return indices === 0 ? keys.sort() : [...keys.slice(0, indices), ...keys.slice(indices).sort()];
}

/**
 * The JSON of a value with the keys of every object in the hash's order (see keysInHashOrder), so
 * that a source read through a cache and one read by a list (explain) hash the same. Written
 * directly rather than by stringifying a rebuilt value: every write of a copy hashes it.
 */
function canonicalJSON(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += `${i > 0 ? ',' : ''}${canonicalJSON(v[i]) ?? 'null'}`;
    return `${out}]`;
  }
  const o = v as Record<string, unknown>;
  let out = '{';
  for (const k of keysInHashOrder(o)) {
    const value = canonicalJSON(o[k]);
    if (value !== undefined) out += `${out.length > 1 ? ',' : ''}${JSON.stringify(k)}:${value}`;
  }
  return `${out}}`;
}

/** The hash of what an apply sends of the object (status aside), less the record itself. */
export function contentHash(body: KubeObject): string {
  const { status: _s, ...rest } = body;
  const annotations = without(body.metadata.annotations ?? {}, [ANNOTATIONS.syncRecord]);
  return digest('sha256', canonicalJSON({ ...rest, metadata: { ...body.metadata, annotations } })!, 'hex').slice(0, 32);
}

/** Where a write of a copy comes from, for its sync record. */
export interface RecordedFrom {
  localClusterID: string;
  sourceVersion: string;
  ruleGeneration: number;
}

export const recordedFrom = (rule: Pick<RuleState, 'object'>, source: KubeObject, localClusterID: string): RecordedFrom => ({
  localClusterID,
  sourceVersion: source.metadata.resourceVersion ?? '',
  ruleGeneration: rule.object?.metadata.generation ?? 0,
});

/**
 * Puts the sync record on `body` (changing it): the copy's own when it records the same
 * content (so that a new source version alone writes nothing), else a new one. Returns whether
 * the copy's record matched.
 */
export function recordOn(body: KubeObject, current: KubeObject | undefined, from: RecordedFrom): boolean {
  const hash = contentHash(body);
  const record = current && ownRecord(current, from.localClusterID);
  const matches = record?.hash === hash;
  const value = matches ? current!.metadata.annotations![ANNOTATIONS.syncRecord]! : JSON.stringify({ hash, cluster: from.localClusterID, sourceVersion: from.sourceVersion, ruleGeneration: from.ruleGeneration });
  (body.metadata.annotations ??= {})[ANNOTATIONS.syncRecord] = value;
  return matches;
}

/** One field of a copy that differs from what the sync would write, and who changed it. */
export interface DriftedField {
  /** Where, from the object's root: ['spec', 'replicas']. A list is one field. */
  segments: string[];
  /** `changed`: another value is there; `removed`: nothing is. */
  change: 'changed' | 'removed';
  /** The field manager that last took it, or any of it ('' when none did: a removal leaves no owner). */
  manager: string;
  /** Its operation (Apply or Update) and when, from its managedFields entry. */
  operation: string;
  time: string;
  /** What is there now (never said: it may be a Secret's). */
  have: unknown;
}

/**
 * Whether a managedFields set owns the field at `segments`, or anything in it (a list's items), or
 * the whole of a map around it (an atomic map owns every field inside).
 */
function owns(fieldsV1: unknown, segments: readonly string[]): boolean {
  let node = fieldsV1;
  for (const s of segments) {
    if (!isObject(node)) return false;
    const next = node[`f:${s}`];
    if (next === undefined) return false;
    if (isObject(next) && Object.keys(next).every((k) => k === '.')) return true;
    node = next;
  }
  return true;
}

const timeOf = (e: ManagedFieldsEntry): string => (typeof e['time'] === 'string' ? e['time'] : '');
const pathKey = (segments: readonly string[]): string => JSON.stringify(segments);

/** What a drift is judged by, besides the copy and what the sync would write of it. */
export interface DriftFacts {
  /** Our field manager. */
  manager: string;
  /** The copy carries this cluster's record of the very content the sync would write now. */
  recordMatches: boolean;
  /** Whether the copy carries a record this cluster wrote at all: one that does not is not judged. */
  recorded: boolean;
  /** Fields its mark says drifted. */
  marked: readonly (readonly string[])[];
  /** Fields this API server did not keep when we last wrote them (pruned, say): their absence is no edit. */
  unkept: ReadonlySet<string>;
}

/**
 * The fields of `current` that differ from `body` (what the sync would apply of the copy) because
 * they were edited here: a field another manager owns (or owns part of), a field the mark names,
 * and while the record matches, a field no one owns. Status is not looked at: it is the
 * cluster's, or the source's when the rule syncs it.
 */
export function findDrift(body: KubeObject, current: KubeObject, facts: DriftFacts): DriftedField[] {
  // Only a copy our sync wrote with its record is judged: one another writer made (an older
  // version of ours, the Go controller before an upgrade) is taken over as before.
  if (!facts.recorded) return [];
  const entries = ((current.metadata.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) => e.subresource !== 'status');
  const ours = entries.filter((e) => e.manager === facts.manager);
  const others = entries.filter((e) => e.manager !== facts.manager && e.manager !== DRIFT_MARK_MANAGER);
  const marked = new Set(facts.marked.map(pathKey));
  const out: DriftedField[] = [];
  for (const { segments, have } of differingFields(body, current)) {
    const key = pathKey(segments);
    if (have === undefined && facts.unkept.has(key)) continue;
    const owner = others.filter((e) => owns(e.fieldsV1, segments)).sort((a, b) => timeOf(b).localeCompare(timeOf(a)))[0];
    const drifted = owner !== undefined || marked.has(key) || (facts.recordMatches && !ours.some((e) => owns(e.fieldsV1, segments)));
    if (!drifted) continue;
    out.push({ segments, change: have === undefined ? 'removed' : 'changed', manager: owner?.manager ?? '', operation: owner?.operation ?? '', time: owner ? timeOf(owner) : '', have });
  }
  return out;
}

/** The fields of `body` an API server did not keep in `written` (its answer to our write of it), as findDrift takes them. */
export function unkeptFields(body: KubeObject, written: KubeObject): Set<string> {
  return new Set(
    differingFields(body, written)
      .filter((f) => f.have === undefined)
      .map((f) => pathKey(f.segments)),
  );
}

/** What is there at the drifted fields, hashed: the same edit keeps its mark, a new one is said anew. */
export function driftFingerprint(fields: readonly DriftedField[]): string {
  return digest('sha256', JSON.stringify(fields.map((f) => [f.segments, f.have ?? null])), 'hex').slice(0, 32);
}

/**
 * What Report applies: the sync's copy with each drifted field as it is now, so that the edits
 * stay and our apply neither fights them nor lets go of a list whose other items are ours; a
 * field removed here is left out.
 */
export function aroundDrift(body: KubeObject, fields: readonly DriftedField[]): KubeObject {
  const out = withoutFields(body, fields.filter((f) => f.have === undefined));
  for (const f of fields) {
    if (f.have === undefined) continue;
    const parent = valueAt(out, f.segments.slice(0, -1));
    if (isObject(parent)) parent[f.segments[f.segments.length - 1]!] = structuredClone(f.have);
  }
  return out;
}

/** The drift in words, for a mark, an Event and a log line: `spec.replicas (changed by kubectl-edit, Update, at 2026-…)`. */
export function describeDrift(fields: readonly DriftedField[]): string {
  const said: string[] = [];
  let length = 0;
  for (const f of fields.slice(0, MAX_DRIFTED_FIELDS)) {
    const who = f.manager ? ` by ${f.manager}${f.operation ? `, ${f.operation}` : ''}${f.time ? `, at ${f.time}` : ''}` : '';
    const text = cut(`${fieldPath(f.segments)} (${f.change}${who})`, MAX_FIELD_TEXT);
    // Room is kept for the count of what is left out.
    if (length + text.length > MAX_MARK_LENGTH - 64) break;
    said.push(text);
    length += text.length + 2;
  }
  const more = fields.length > said.length ? `; and ${fields.length - said.length} more` : '';
  return `${said.join('; ')}${more}`;
}

/** Length of one field said, at most. */
const MAX_FIELD_TEXT = 300;

/** The drift mark as a copy carries it: its text (which a person removes) and the fields it marked, with their fingerprint. */
export interface DriftMark {
  text?: string;
  fingerprint?: string;
  fields?: string[][];
}

export function markOf(copy: KubeObject): DriftMark {
  const a = copy.metadata.annotations ?? {};
  const mark: DriftMark = {};
  if (a[ANNOTATIONS.drifted] !== undefined) mark.text = a[ANNOTATIONS.drifted];
  const value = a[ANNOTATIONS.driftedFields];
  if (value === undefined) return mark;
  try {
    const parsed = JSON.parse(value) as { fingerprint?: unknown; fields?: unknown } | null;
    if (typeof parsed?.fingerprint === 'string') mark.fingerprint = parsed.fingerprint;
    if (Array.isArray(parsed?.fields)) mark.fields = parsed.fields.filter((f): f is string[] => Array.isArray(f) && f.every((s) => typeof s === 'string')).slice(0, MAX_MARKED_FIELDS);
  } catch {
    // Not ours any more (edited by hand): a mark without fields, told apart by its text only.
  }
  return mark;
}

/** The annotations of a mark. */
export function markAnnotations(mark: Required<DriftMark>): Record<string, string> {
  return { [ANNOTATIONS.drifted]: mark.text, [ANNOTATIONS.driftedFields]: JSON.stringify({ fingerprint: mark.fingerprint, fields: mark.fields.slice(0, MAX_MARKED_FIELDS) }) };
}

/** What a reconcile does about a copy's drift. */
export interface DriftPlan {
  /** The copy's apply: all the sync would write, all but the drifted fields, or nothing. */
  apply: 'all' | 'around' | 'none';
  /** The mark: written as given, removed, or left as it is. */
  mark: Required<DriftMark> | 'clear' | 'keep';
  /** A drift found anew, or put back: said (an Event on the copy, the log) and counted. */
  report: boolean;
  /** The copy stays drifted (counted in the rule's status). */
  drifted: boolean;
}

/**
 * What each policy does with the drifted fields of a copy, given the mark it carries:
 * - Revert: the sync's apply puts everything back; the drift is said each time.
 * - Report: the edits stay (the apply keeps them as they are, and the rest follows the source);
 *   the copy is marked, and said once per distinct edit.
 * - Pause: nothing is written to the copy but its mark. Removing the mark's text (its fields
 *   stay) is how one lets the sync go on: the next reconcile puts the copy back.
 * With no drift, a mark left from an earlier one is removed.
 */
export function planDrift(policy: DriftPolicy, fields: readonly DriftedField[], mark: DriftMark): DriftPlan {
  const marked = mark.text !== undefined || mark.fingerprint !== undefined;
  if (fields.length === 0) return { apply: 'all', mark: marked ? 'clear' : 'keep', report: false, drifted: false };
  if (policy === 'Revert') return { apply: 'all', mark: marked ? 'clear' : 'keep', report: true, drifted: false };
  const fingerprint = driftFingerprint(fields);
  const released = policy === 'Pause' && mark.text === undefined && mark.fingerprint === fingerprint;
  if (released) return { apply: 'all', mark: 'clear', report: false, drifted: false };
  const text = markText(policy, fields);
  const same = mark.text === text && mark.fingerprint === fingerprint;
  return {
    apply: policy === 'Report' ? 'around' : 'none',
    mark: same ? 'keep' : { text, fingerprint, fields: fields.map((f) => f.segments) },
    report: mark.fingerprint !== fingerprint,
    drifted: true,
  };
}

export function markText(policy: DriftPolicy, fields: readonly DriftedField[]): string {
  return cut(`${policy}: ${describeDrift(fields)}`, MAX_MARK_LENGTH);
}

/** An update of a copy as its drift policy shapes it. */
export interface CopyUpdate {
  policy: DriftPolicy;
  /** Why the source's own choice of policy was not taken (an unknown value). */
  policyError?: string;
  fields: DriftedField[];
  plan: DriftPlan;
  /** What to apply (the sync's copy, or it with the edits kept); undefined: nothing. */
  body: KubeObject | undefined;
}

/**
 * The update of `current` to `next` (the copy the sync would write over it, which gets its sync
 * record here), as the source's or rule's drift policy makes it. The sync and `explain` decide by
 * this one function.
 */
export function planCopyUpdate(
  rule: Pick<RuleState, 'object' | 'spec' | 'channel'>,
  source: KubeObject,
  next: KubeObject,
  current: KubeObject,
  ctx: { part: Exclude<Part, 'status'>; localClusterID: string; unkept: ReadonlySet<string> },
): CopyUpdate {
  const recorded = ownRecord(current, ctx.localClusterID) !== undefined;
  const recordMatches = recordOn(next, current, recordedFrom(rule, source, ctx.localClusterID));
  const { policy, error } = driftPolicyOf(rule, source);
  const mark = markOf(current);
  const fields = findDrift(applyBody(next, ctx.part), current, { manager: FIELD_MANAGER, recordMatches, recorded, marked: mark.fields ?? [], unkept: ctx.unkept });
  const plan = planDrift(policy, fields, mark);
  const body = plan.apply === 'all' ? next : plan.apply === 'around' ? aroundDrift(next, fields) : undefined;
  return { policy, ...(error ? { policyError: error } : {}), fields, plan, body };
}

/** What the policy does with a drift, in words: for the Event on the copy and for `explain`. */
export function driftOutcome(update: Pick<CopyUpdate, 'policy' | 'plan'>): string {
  if (update.plan.apply === 'all') return update.policy === 'Pause' ? 'its mark was removed, so it is put back' : 'put back';
  return update.plan.apply === 'around' ? 'left as edited, and marked' : 'left as edited; nothing is written to it until its mark is removed';
}

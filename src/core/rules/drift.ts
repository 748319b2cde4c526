// Drift: a copy edited here, not at its source. Upstream puts every such edit back without a
// word; here a rule chooses (Revert, Report, Pause; a source may choose for its own copies), and
// every drift is said with who made it and when, taken from the copy's managedFields.
//
// What tells an edit from a change of the source is the sync record, an annotation each write of
// the copy carries: a hash of what was written. While the copy we would write now hashes the same,
// anything the copy lacks of it was taken away here. When it does not (the source or the rule
// changed), only fields another field manager took over count as edited: a field our manager
// still owns holds what we last wrote, since any other writer setting it takes it from us.
import { createHash } from 'node:crypto';
import { ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { applyBody, FIELD_MANAGER, holds, type ManagedFieldsEntry, type Part } from './apply.ts';
import type { RuleState } from './rule-state.ts';

export const DRIFT_POLICIES = ['Revert', 'Report', 'Pause'] as const;
export type DriftPolicy = (typeof DRIFT_POLICIES)[number];
export const DEFAULT_DRIFT_POLICY: DriftPolicy = 'Revert';

/** The field manager that writes only the drift mark, so that marking a copy never puts back what was edited. */
export const DRIFT_MARK_MANAGER = 'cluster-registry-drift';

/** Fields said per drift at most (the rest are counted): a mark and an Event stay readable. */
export const MAX_DRIFTED_FIELDS = 16;
/** Length of a mark's text at most. */
export const MAX_MARK_LENGTH = 1024;

export const isDriftPolicy = (v: unknown): v is DriftPolicy => typeof v === 'string' && (DRIFT_POLICIES as readonly string[]).includes(v);

/**
 * The policy for one source's copies: the source's annotation, else the rule's; an error names a
 * value that is neither. The registry's own rules always put back: a peer's word on its entry
 * never keeps a local edit of the group's bookkeeping.
 */
export function driftPolicyOf(rule: Pick<RuleState, 'object' | 'spec'>, source: KubeObject): { policy: DriftPolicy } | { error: string } {
  if (!rule.object) return { policy: DEFAULT_DRIFT_POLICY };
  const own = source.metadata.annotations?.[ANNOTATIONS.driftPolicy];
  if (own === undefined) return { policy: rule.spec.driftPolicy ?? DEFAULT_DRIFT_POLICY };
  if (isDriftPolicy(own)) return { policy: own };
  return { error: `annotation ${ANNOTATIONS.driftPolicy} is ${JSON.stringify(own.slice(0, 64))}: it must be one of ${DRIFT_POLICIES.join(', ')}` };
}

/** What the sync record holds: the hash of what was written, and where it came from. */
export interface SyncRecord {
  hash: string;
  /** The source's resourceVersion the write was made from. */
  sourceVersion: string;
  /** The rule's generation the write was made by. */
  ruleGeneration: number;
}

export function parseSyncRecord(value: string | undefined): SyncRecord | undefined {
  if (value === undefined) return undefined;
  try {
    const r = JSON.parse(value) as Partial<SyncRecord> | null;
    if (typeof r?.hash !== 'string' || typeof r.sourceVersion !== 'string' || typeof r.ruleGeneration !== 'number') return undefined;
    return { hash: r.hash, sourceVersion: r.sourceVersion, ruleGeneration: r.ruleGeneration };
  } catch {
    return undefined;
  }
}

/** Keys in a fixed order at every level, so that equal objects hash the same. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
  );
}

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(canonical(v))).digest('hex').slice(0, 32);

/** The hash of what an apply sends, less the record itself. */
export function contentHash(body: KubeObject): string {
  const annotations = { ...body.metadata.annotations };
  delete annotations[ANNOTATIONS.syncRecord];
  return digest({ ...body, metadata: { ...body.metadata, annotations } });
}

/**
 * Puts the sync record on `body` (the apply body of a copy): the copy's own when it records the
 * same content (so that a new source version alone writes nothing), else a new one. Returns whether
 * the copy's record matched, which is what lets a missing field count as drift.
 */
export function recordOn(body: KubeObject, current: KubeObject | undefined, from: { sourceVersion: string; ruleGeneration: number }): boolean {
  const hash = contentHash(body);
  const value = current?.metadata.annotations?.[ANNOTATIONS.syncRecord];
  const matches = parseSyncRecord(value)?.hash === hash;
  (body.metadata.annotations ??= {})[ANNOTATIONS.syncRecord] = matches ? value! : JSON.stringify({ hash, sourceVersion: from.sourceVersion, ruleGeneration: from.ruleGeneration });
  return matches;
}

/** One field of a copy that differs from what the sync would write, and who changed it. */
export interface DriftedField {
  /** Where, from the object's root: ['spec', 'replicas']. */
  segments: string[];
  /** `changed`: another value is there; `removed`: nothing is. */
  change: 'changed' | 'removed';
  /** The field manager that owns it now ('' when none does: a removal leaves no owner). */
  manager: string;
  /** Its operation (Apply or Update) and when, from its managedFields entry. */
  operation: string;
  time: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `spec.replicas`, `metadata.labels["app.kubernetes.io/name"]`. */
export function fieldPath(segments: readonly string[]): string {
  return segments.map((s, i) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) ? (i === 0 ? s : `.${s}`) : `[${JSON.stringify(s)}]`)).join('');
}

/** The node of a managedFields set at `segments` (maps only; a list is owned as the node of its field). */
function fieldsAt(fieldsV1: unknown, segments: readonly string[]): unknown {
  let node = fieldsV1;
  for (const s of segments) {
    if (!isObject(node)) return undefined;
    node = node[`f:${s}`];
  }
  return node;
}

const timeOf = (e: ManagedFieldsEntry): string => (typeof e['time'] === 'string' ? e['time'] : '');

/** Our own bookkeeping on a copy (ownership, source, record, marks): always written as the sync says, never someone's edit to keep. */
const OUR_PREFIX = 'cluster-registry.k8s.cisco.com/';
const bookkeeping = (segments: readonly string[]): boolean =>
  segments.length === 3 && segments[0] === 'metadata' && (segments[1] === 'labels' || segments[1] === 'annotations') && segments[2]!.startsWith(OUR_PREFIX);

/**
 * The fields of `current` that differ from `body` (what the sync would apply of the copy) because
 * they were edited here: each differing field another manager owns, and while `recordMatches`,
 * each differing field no one owns (a removal). A field `manager` owns is ours as last written,
 * and differs only because the source or rule changed. Status is not looked at: it is the
 * cluster's, or the source's when the rule syncs it.
 */
export function findDrift(body: KubeObject, current: KubeObject, manager: string, recordMatches: boolean): DriftedField[] {
  // Only a copy our sync wrote with its record is judged: one another writer made (an older
  // version of ours, the Go controller before an upgrade) is taken over as before.
  if (!parseSyncRecord(current.metadata.annotations?.[ANNOTATIONS.syncRecord])) return [];
  const entries = ((current.metadata.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) => (e.subresource ?? '') === '');
  const ours = entries.filter((e) => e.manager === manager);
  const others = entries.filter((e) => e.manager !== manager && e.manager !== DRIFT_MARK_MANAGER);
  const out: DriftedField[] = [];
  const visit = (want: unknown, have: unknown, segments: string[]): void => {
    // A map is looked into even where it is gone: what counts is who owns each of its fields.
    if (isObject(want) && Object.keys(want).length > 0 && (isObject(have) || have === undefined)) {
      for (const [k, v] of Object.entries(want)) if (v !== undefined) visit(v, isObject(have) ? have[k] : undefined, [...segments, k]);
      return;
    }
    if (holds(have, want) || bookkeeping(segments)) return;
    if (ours.some((e) => fieldsAt(e.fieldsV1, segments) !== undefined)) return;
    const owner = others
      .filter((e) => fieldsAt(e.fieldsV1, segments) !== undefined)
      .sort((a, b) => timeOf(b).localeCompare(timeOf(a)))[0];
    if (!owner && !recordMatches) return;
    out.push({ segments, change: have === undefined ? 'removed' : 'changed', manager: owner?.manager ?? '', operation: owner?.operation ?? '', time: owner ? timeOf(owner) : '' });
  };
  const { apiVersion: _a, kind: _k, metadata, status: _s, ...rest } = body;
  const { name: _n, namespace: _ns, ...meta } = metadata;
  visit(rest, current, []);
  visit(meta, current.metadata, ['metadata']);
  return out;
}

/** What is there at the drifted fields, hashed: the same edit keeps its mark, a new one is said anew. */
export function driftFingerprint(current: KubeObject, fields: readonly DriftedField[]): string {
  const at = (segments: readonly string[]): unknown => segments.reduce<unknown>((node, s) => (isObject(node) ? node[s] : undefined), current);
  return digest(fields.map((f) => [f.segments, at(f.segments) ?? null]));
}

/** `body` without the drifted fields: what Report applies, so that the edits stay where they are. */
export function withoutFields(body: KubeObject, fields: readonly DriftedField[]): KubeObject {
  const out = structuredClone(body);
  for (const f of fields) {
    const parent = f.segments.slice(0, -1).reduce<unknown>((node, s) => (isObject(node) ? node[s] : undefined), out);
    if (isObject(parent)) delete parent[f.segments[f.segments.length - 1]!];
  }
  return out;
}

/** The drift in words, for a mark, an Event and a log line: `spec.replicas (changed by kubectl-edit, Update, at 2026-…)`. */
export function describeDrift(fields: readonly DriftedField[]): string {
  const said = fields.slice(0, MAX_DRIFTED_FIELDS).map((f) => {
    const who = f.manager ? ` by ${f.manager}${f.operation ? `, ${f.operation}` : ''}${f.time ? `, at ${f.time}` : ''}` : '';
    return `${fieldPath(f.segments)} (${f.change}${who})`;
  });
  const more = fields.length > MAX_DRIFTED_FIELDS ? `; and ${fields.length - MAX_DRIFTED_FIELDS} more` : '';
  return `${said.join('; ')}${more}`;
}

/** The drift mark as a copy carries it (two annotations the mark's own field manager writes). */
export interface DriftMark {
  text?: string;
  fingerprint?: string;
}

export function markOf(copy: KubeObject): DriftMark {
  const a = copy.metadata.annotations ?? {};
  return { text: a[ANNOTATIONS.drifted], fingerprint: a[ANNOTATIONS.driftFingerprint] };
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
 * - Report: the edits stay (the apply leaves those fields to their manager, and the rest follows
 *   the source); the copy is marked, and said once per distinct edit.
 * - Pause: nothing is written to the copy but its mark. Removing the mark (the fingerprint stays)
 *   is how one lets the sync go on: the next reconcile puts the copy back.
 * With no drift, a mark left from an earlier one is removed.
 */
export function planDrift(policy: DriftPolicy, fields: readonly DriftedField[], fingerprint: string, mark: DriftMark): DriftPlan {
  const marked = mark.text !== undefined || mark.fingerprint !== undefined;
  if (fields.length === 0) return { apply: 'all', mark: marked ? 'clear' : 'keep', report: false, drifted: false };
  if (policy === 'Revert') return { apply: 'all', mark: marked ? 'clear' : 'keep', report: true, drifted: false };
  const released = policy === 'Pause' && mark.text === undefined && mark.fingerprint === fingerprint;
  if (released) return { apply: 'all', mark: 'clear', report: false, drifted: false };
  const text = markText(policy, fields);
  const wanted = { text, fingerprint };
  const same = mark.text === text && mark.fingerprint === fingerprint;
  return { apply: policy === 'Report' ? 'around' : 'none', mark: same ? 'keep' : wanted, report: mark.fingerprint !== fingerprint, drifted: true };
}

export function markText(policy: DriftPolicy, fields: readonly DriftedField[]): string {
  const text = `${policy}: ${describeDrift(fields)}`;
  return text.length > MAX_MARK_LENGTH ? `${text.slice(0, MAX_MARK_LENGTH - 1)}…` : text;
}

/** An update of a copy as its drift policy shapes it. */
export interface CopyUpdate {
  policy: DriftPolicy;
  fields: DriftedField[];
  plan: DriftPlan;
  /** What to apply (the sync's copy, or all of it but the drifted fields); undefined: nothing. */
  body: KubeObject | undefined;
}

/**
 * The update of `current` to `next` (the copy the sync would write over it, which gets its sync
 * record here), as the source's or rule's drift policy makes it; an error when the source's
 * choice is not one. The sync and `explain` decide by this one function.
 */
export function planCopyUpdate(rule: Pick<RuleState, 'object' | 'spec'>, source: KubeObject, next: KubeObject, current: KubeObject, part: Exclude<Part, 'status'>): CopyUpdate | { error: string } {
  const recordMatches = recordOn(next, current, recordedFrom(rule, source));
  const choice = driftPolicyOf(rule, source);
  if ('error' in choice) return choice;
  const fields = findDrift(applyBody(next, part), current, FIELD_MANAGER, recordMatches);
  const plan = planDrift(choice.policy, fields, driftFingerprint(current, fields), markOf(current));
  return { policy: choice.policy, fields, plan, body: plan.apply === 'all' ? next : plan.apply === 'around' ? withoutFields(next, fields) : undefined };
}

/** Where a write of a copy comes from, for its sync record. */
export const recordedFrom = (rule: Pick<RuleState, 'object'>, source: KubeObject) => ({ sourceVersion: source.metadata.resourceVersion ?? '', ruleGeneration: rule.object?.metadata.generation ?? 0 });

/** What the policy does with a drift, in words: for the Event on the copy and for `explain`. */
export function driftOutcome(update: Pick<CopyUpdate, 'policy' | 'plan'>): string {
  if (update.plan.apply === 'all') return update.policy === 'Pause' ? 'its mark was removed, so it is put back' : 'put back';
  return update.plan.apply === 'around' ? 'left as edited, and marked' : 'left as edited; nothing is written to it until its mark is removed';
}

// What `trace` says: its rows and states, and the decisions that make them from what was read of
// each member, with no I/O. Everything in them that a peer wrote is cut to a bound.
import { ANNOTATIONS, gvkOf, isDisabled, sourceIdentityOf, sourceObjectKey } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { cut } from '../core/api/text.ts';
import { DECISION_REASONS, FIELD_MANAGER, fieldPath, isObject, markOf, MAX_DRIFTED_FIELDS, parseSyncRecord, type DriftedField, type ManagedFieldsEntry } from '../core/rules/index.ts';
import { speakerFor } from '../core/trust/index.ts';
import { IN_SYNC, objectLabel, type CopyJudgement } from './copy-judge.ts';

/** Whom a row is of: a member, and how it was seen. */
export interface RowOf {
  readonly name: string;
  readonly seen: TraceRow['seen'];
}

/**
 * - source: the object itself, where it is owned.
 * - in sync: the copy holds what the member's sync would write now.
 * - drifted: edited where it is, not at its source (what the drift policy does is said).
 * - differs: the member's sync would update it (the source or the rule changed since).
 * - absent: a rule there takes the source, and no copy is there (yet).
 * - blocked: a rule there takes the source, and something keeps its copy from being written.
 * - stale: a copy of it the member's rules no longer make there (collected after the grace period), or
 *   one of a source that is gone (its sync deletes it).
 * - gone: the source, deleted where it was owned.
 * - no copy: no rule there takes it, or none makes a copy of it there.
 * - not judged: a copy of it, its source not read.
 * - not read: the member (or what trace needs of it) could not be read.
 */
export type TraceState = 'source' | 'gone' | 'in sync' | 'drifted' | 'differs' | 'absent' | 'blocked' | 'stale' | 'no copy' | 'not judged' | 'not read';

export interface TraceWrite {
  readonly manager: string;
  readonly operation: string;
  readonly time: string;
}

export interface TraceRow {
  readonly member: string;
  /** first-hand: the member trace runs on; inferred: a peer, judged from what it let us read. */
  readonly seen: 'first-hand' | 'inferred';
  /** `Kind namespace/name` of the member's copy (or of the source), `-` when there is none. */
  readonly object: string;
  /** The member's rule that makes the copy, `-` when none does. */
  readonly rule: string;
  readonly state: TraceState;
  readonly reason: string;
  /** Of a copy, the source's resourceVersion its content was first written from (its sync record); of the source, its own. */
  readonly sourceVersion?: string;
  /** Of a copy, the sync's last write; of the source, its last write by anyone. */
  readonly lastWrite?: TraceWrite;
  /** The fields edited where the copy is, and by whom (never their values). */
  readonly drift?: readonly (TraceWrite & { readonly field: string; readonly change: string })[];
  /** What the member's sync would write (Secret values hidden). */
  readonly diff?: string;
}

export interface Trace {
  /** The member trace ran on. */
  readonly cluster: string;
  /** `Kind namespace/name` asked for, there. */
  readonly object: string;
  /** The object traced, where it is owned; undefined when it could not be found (its row says why). */
  readonly source?: { readonly member: string; readonly object: string; readonly version: string };
  readonly rows: TraceRow[];
}

/** States of a copy that is not as its source says. */
const PROBLEMS: ReadonlySet<TraceState> = new Set(['drifted', 'differs', 'absent', 'blocked', 'stale']);

/** incomplete when something could not be read or judged, else differs when a copy is not in sync. */
export function traceOutcome(t: Pick<Trace, 'rows'>): 'in sync' | 'differs' | 'incomplete' {
  if (t.rows.some((r) => r.state === 'not read' || r.state === 'not judged')) return 'incomplete';
  return t.rows.some((r) => PROBLEMS.has(r.state)) ? 'differs' : 'in sync';
}

/** Decisions that mean the member makes no copy of the source at all. */
const NOT_MADE: ReadonlySet<string> = new Set([DECISION_REASONS.syncDisabledOnSource, DECISION_REASONS.ownedByLocalCluster, DECISION_REASONS.ownedByAnotherAliveCluster]);
/** Decisions that mean the copy is due once the member reaches the source. */
const NOT_YET: ReadonlySet<string> = new Set([DECISION_REASONS.sourceUnreachable, DECISION_REASONS.ownerNotReachedByPeer]);

/** A member's judgement of its copy as a trace state: a local object its sync takes over is no copy yet. */
export function stateOf(j: Pick<CopyJudgement, 'action' | 'reason' | 'current' | 'update' | 'takesOver'>): TraceState {
  if ((j.update?.fields.length ?? 0) > 0) return 'drifted';
  if (j.action === 'create' || j.takesOver) return 'absent';
  if (j.action === 'update') return 'differs';
  if (j.action === 'withheld') return 'not judged';
  if (j.action !== 'none') return 'blocked';
  if (j.reason === IN_SYNC) return 'in sync';
  if (!j.current) return NOT_MADE.has(j.reason) ? 'no copy' : NOT_YET.has(j.reason) ? 'absent' : 'blocked';
  return 'blocked';
}

/** How much of a word a peer wrote is said: the controller writes far less. */
export const MAX_WORD = 128;
export const MAX_VERSION = 64;
const MAX_MARK = 1024;
/** Of a field's path: as the drift mark cuts it. */
const MAX_FIELD = 300;

const word = (v: unknown): string => (typeof v === 'string' ? cut(v, MAX_WORD) : '');

/** The newest write of `o` (by `manager` when given), from its managedFields; entries that are not ones are passed over. */
export function lastWrite(o: KubeObject, manager?: string): TraceWrite | undefined {
  const all: unknown = o.metadata.managedFields;
  const entries = (Array.isArray(all) ? (all as unknown[]) : []).filter((e): e is ManagedFieldsEntry => typeof e === 'object' && e !== null && (manager === undefined || (e as ManagedFieldsEntry).manager === manager));
  const last = entries.sort((a, b) => word(b.time).localeCompare(word(a.time)))[0];
  return last && { manager: word(last.manager), operation: word(last.operation), time: word(last.time) };
}

/** The drifted fields as trace says them: where, how and by whom, never what they hold. */
export function driftOf(fields: readonly DriftedField[]): TraceRow['drift'] {
  return fields.slice(0, MAX_DRIFTED_FIELDS).map((f) => ({ field: cut(fieldPath(f.segments), MAX_FIELD), change: f.change, manager: word(f.manager), operation: word(f.operation), time: word(f.time) }));
}

/** The key of `o` as the source of copies made from member `memberID` (whatever rule copied it). */
export const asSource = (memberID: string, o: KubeObject): string => {
  const g = gvkOf(o);
  return sourceObjectKey({ clusterID: memberID, group: g.group, kind: g.kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '', rule: '' });
};

const optional = (v: unknown, type: 'string' | 'object'): boolean => v === undefined || (type === 'string' ? typeof v === 'string' : isObject(v));
const texts = (v: unknown): boolean => v === undefined || (isObject(v) && Object.values(v).every((x) => typeof x === 'string'));

/**
 * Whether an object a peer returned has the shape the code that reads it takes for granted (an API
 * server's objects always do): a peer decides what it returns, and one malformed object must not
 * take down what is said of every member.
 */
export function wellFormed(o: unknown): o is KubeObject {
  if (!isObject(o) || !isObject(o['metadata'])) return false;
  const m = o['metadata'];
  return (
    optional(o['apiVersion'], 'string') &&
    optional(o['kind'], 'string') &&
    ['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp'].every((k) => optional(m[k], 'string')) &&
    texts(m['labels']) &&
    texts(m['annotations']) &&
    (m['managedFields'] === undefined || Array.isArray(m['managedFields']))
  );
}

/**
 * Of `found` (objects per member ID), the copies of the source `seeds` name: those whose source
 * annotation names a seed, or a copy already matched (a member that passed it on), to a fixpoint.
 */
export function copiesOf(seeds: Iterable<string>, found: readonly { readonly memberID: string; readonly object: KubeObject }[]): Set<KubeObject> {
  // By recorded source, so that each object is looked at once however long the chain a peer lists.
  const byRecorded = new Map<string, { readonly memberID: string; readonly object: KubeObject }[]>();
  for (const f of found) {
    const id = sourceIdentityOf(f.object);
    if (!id) continue;
    const key = sourceObjectKey(id);
    (byRecorded.get(key) ?? byRecorded.set(key, []).get(key)!).push(f);
  }
  const known = new Set(seeds);
  const next = [...known];
  const matched = new Set<KubeObject>();
  for (let key = next.pop(); key !== undefined; key = next.pop()) {
    for (const f of byRecorded.get(key) ?? []) {
      if (matched.has(f.object)) continue;
      matched.add(f.object);
      const passedOn = asSource(f.memberID, f.object);
      if (!known.has(passedOn)) {
        known.add(passedOn);
        next.push(passedOn);
      }
    }
  }
  return matched;
}

/**
 * The rows of every member of the registry `clusters`, in its order: its own, or `none` for a
 * member with none; one set of rows a member (several Clusters may name one, one speaks for it),
 * and last those of members the registry has no Cluster of.
 */
export function inRegistryOrder(clusters: readonly Cluster[], byMember: ReadonlyMap<string, readonly TraceRow[]>, none: (member: string) => TraceRow): TraceRow[] {
  const rows: TraceRow[] = [];
  const done = new Set<string>();
  for (const c of clusters) {
    const name = c.metadata.name ?? '';
    if (done.has(name) || (!byMember.has(name) && speakerFor(clusters, c.spec?.clusterID ?? '') !== c && !isDisabled(c))) continue;
    done.add(name);
    rows.push(...(byMember.get(name) ?? [none(name)]));
  }
  for (const [name, mine] of byMember) if (!done.has(name)) rows.push(...mine);
  return rows;
}

/**
 * Of a member's judgements (by rule), those that say something of the source's copy: one that
 * finds the copy at its place delivered by another of the member's rules from this same source
 * adds nothing to that rule's.
 */
export function ownJudgements<T extends { readonly rule: string; readonly j: Pick<CopyJudgement, 'reason' | 'current' | 'place'> }>(judged: readonly T[], seeds: ReadonlySet<string>): T[] {
  return judged.filter(({ j }) => {
    const recorded = j.current && j.reason === DECISION_REASONS.deliveredByAnotherSource ? sourceIdentityOf(j.current) : undefined;
    return !recorded || !seeds.has(sourceObjectKey(recorded)) || !judged.some((o) => o.rule === recorded.rule && o.j.place === j.place);
  });
}

/**
 * What a trace says, at most: rows of one member, one diff, and all of it as JSON (past which the
 * diffs go first). A member decides how many copies it lists and what they hold.
 */
export const MAX_ROWS_PER_MEMBER = 200;
export const MAX_DIFF = 64 * 1024;
export const MAX_TRACE_BYTES = 4 * 1024 * 1024;
/** Of an object's label, as the table shows it. */
export const MAX_LABEL = 600;

/** What a peer's rules are not run over, and why, in its rows. */
export const SECRET_NOT_RENDERED = "its rules were not run over a Secret here (they could carry its values into what is shown or asked of that member): judged by the copy's sync record and drift mark only";

export const unread = (m: RowOf, reason: string): TraceRow => ({ member: m.name, seen: m.seen, object: '-', rule: '-', state: 'not read', reason });
export const unjudged = (m: RowOf, reason: string): TraceRow => ({ member: m.name, seen: m.seen, object: '-', rule: '-', state: 'not judged', reason });

/** A member's rows, at most MAX_ROWS_PER_MEMBER: the last says how many were left out. */
export function capped(m: RowOf, rows: TraceRow[]): TraceRow[] {
  if (rows.length <= MAX_ROWS_PER_MEMBER) return rows;
  return [...rows.slice(0, MAX_ROWS_PER_MEMBER - 1), unjudged(m, `${rows.length - MAX_ROWS_PER_MEMBER + 1} more rows of it were left out`)];
}

/** The rows, within MAX_TRACE_BYTES as JSON: past it, without their diffs. */
export function withinBudget(rows: TraceRow[]): TraceRow[] {
  if (JSON.stringify(rows).length <= MAX_TRACE_BYTES) return rows;
  return rows.map((r) => (r.diff === undefined ? r : { ...r, diff: '(not shown: the whole trace is over its size bound)' }));
}

/** A copy of the source no rule of the member judged: one its rules no longer make there, one of a source that is gone, or one whose source was not read. */
export function unjudgedRow(m: RowOf, copy: KubeObject, why: 'stale' | 'gone' | 'unread'): TraceRow {
  const id = sourceIdentityOf(copy);
  const record = parseSyncRecord(copy.metadata.annotations?.[ANNOTATIONS.syncRecord]);
  const written = lastWrite(copy, FIELD_MANAGER);
  const mark = copy.metadata.annotations?.[ANNOTATIONS.drifted];
  const marked = mark === undefined ? undefined : cut(mark, MAX_MARK);
  const reason =
    why === 'stale'
      ? "a copy its member's rules no longer make: collected after the grace period"
      : why === 'gone'
        ? 'a copy of a source that is gone: its sync deletes it'
        : `its source could not be read${marked !== undefined ? `; marked drifted: ${marked}` : ''}`;
  return {
    member: m.name,
    seen: m.seen,
    object: cut(objectLabel(copy), MAX_LABEL),
    rule: cut(id?.rule ?? '-', MAX_WORD),
    state: why === 'unread' ? 'not judged' : 'stale',
    reason,
    ...(record ? { sourceVersion: cut(record.sourceVersion, MAX_VERSION) } : {}),
    ...(written ? { lastWrite: written } : {}),
  };
}

/**
 * A peer's copy of a Secret, judged without running that peer's rules over it: by its sync record
 * (the source version its content was written from) and its drift mark (the fields only, never the
 * mark's text).
 */
export function recordRow(m: RowOf, copy: KubeObject, source: KubeObject): TraceRow {
  const id = sourceIdentityOf(copy);
  const record = parseSyncRecord(copy.metadata.annotations?.[ANNOTATIONS.syncRecord]);
  const written = lastWrite(copy, FIELD_MANAGER);
  const mark = markOf(copy);
  const fields = (mark.fields ?? []).slice(0, MAX_DRIFTED_FIELDS).map((f) => cut(fieldPath(f), MAX_FIELD));
  const version = cut(source.metadata.resourceVersion ?? '', MAX_VERSION);
  const said = record && cut(record.sourceVersion, MAX_VERSION);
  const [state, why]: [TraceState, string] =
    mark.text !== undefined || fields.length > 0
      ? ['drifted', `marked drifted there${fields.length > 0 ? `: ${fields.join(', ')}` : ''}`]
      : said === undefined
        ? ['not judged', 'it carries no sync record of ours']
        : said === version
          ? ['in sync', `written from the source's version ${version}`]
          : ['differs', `written from the source's version ${said}, the source is at ${version} (a change that leaves the copy as it is rewrites nothing)`];
  return {
    member: m.name,
    seen: m.seen,
    object: cut(objectLabel(copy), MAX_LABEL),
    rule: cut(id?.rule ?? '-', MAX_WORD),
    state,
    reason: `${why}; ${SECRET_NOT_RENDERED}`,
    ...(said !== undefined ? { sourceVersion: said } : {}),
    ...(written ? { lastWrite: written } : {}),
    ...(fields.length > 0 ? { drift: fields.map((field) => ({ field, change: 'marked', manager: '', operation: '', time: '' })) } : {}),
  };
}


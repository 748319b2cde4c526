// The value of ANNOTATIONS.source: which object, in which cluster, a local copy was made from.
// Renames, namespace mapping and names longer than a label value allows (which made upstream's
// create fail) are tracked by this one annotation instead of being guessed from labels.

import { ANNOTATIONS, LABELS } from './keys.ts';
import type { KubeObject } from './types.ts';

export interface SourceIdentity {
  /** kube-system UID of the peer the copy was read from (not necessarily the owner). */
  clusterID: string;
  group: string;
  kind: string;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  name: string;
  /**
   * The ResourceSyncRule that wrote the copy. Absent in identities written before rules were
   * recorded: such a copy belongs to whichever rule produces it.
   */
  rule?: string;
}

const FIELDS = ['clusterID', 'group', 'kind', 'namespace', 'name'] as const;

/** Compact JSON with a fixed key order, so equal identities give equal annotation values. */
export function formatSourceIdentity(id: SourceIdentity): string {
  const { clusterID, group, kind, namespace, name, rule } = id;
  return JSON.stringify(rule === undefined ? { clusterID, group, kind, namespace, name } : { clusterID, group, kind, namespace, name, rule });
}

/** undefined when the value is absent or not ours (e.g. edited by hand): never guess. */
export function parseSourceIdentity(value: string | undefined): SourceIdentity | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const rec = parsed as Record<string, unknown>;
  if (!FIELDS.every((f) => typeof rec[f] === 'string')) return undefined;
  if (rec.clusterID === '' || rec.kind === '' || rec.name === '') return undefined;
  if (rec.rule !== undefined && (typeof rec.rule !== 'string' || rec.rule === '')) return undefined;
  const id = Object.fromEntries(FIELDS.map((f) => [f, rec[f]])) as unknown as SourceIdentity;
  if (typeof rec.rule === 'string') id.rule = rec.rule;
  return id;
}

/**
 * Identities read, by the annotation value they were read from: one copy's value is read from
 * each object that carries it (the desired copy, the write's answer, its watch event), mostly one
 * right after another, and a few hundred copies are synced at once at most.
 */
const identityByValue = new Map<string, Readonly<SourceIdentity> | undefined>();
const IDENTITIES_REMEMBERED = 1024;
/**
 * Longer values are read every time: an identity is well under this, and a peer's objects may
 * carry values of any length, which are not ours to hold once those objects are gone.
 */
const REMEMBERED_VALUE_MAX = 2048;

export function sourceIdentityOf(obj: KubeObject): Readonly<SourceIdentity> | undefined {
  const value = obj.metadata?.annotations?.[ANNOTATIONS.source];
  if (value === undefined) return undefined;
  const known = identityByValue.get(value);
  if (known !== undefined || identityByValue.has(value)) return known;
  const parsedId = parseSourceIdentity(value);
  const id = parsedId && Object.freeze(parsedId);
  if (typeof value !== 'string' || value.length > REMEMBERED_VALUE_MAX) return id;
  if (identityByValue.size >= IDENTITIES_REMEMBERED) identityByValue.delete(identityByValue.keys().next().value!);
  identityByValue.set(value, id);
  return id;
}

/** Same object in the same cluster (the cluster ID included), through the same rule when both name one. */
export function sameSourceIdentity(a: SourceIdentity, b: SourceIdentity): boolean {
  return FIELDS.every((f) => a[f] === b[f]) && (a.rule === undefined || b.rule === undefined || a.rule === b.rule);
}

/** The source object's key, whatever rule copied it: what copies are indexed by. */
export function sourceObjectKey(id: SourceIdentity): string {
  return JSON.stringify(FIELDS.map((f) => id[f]));
}

/** The kube-system UID of the cluster that owns a synced copy; '' for an object owned here. */
export function ownerOf(obj: KubeObject): string {
  return obj.metadata?.annotations?.[ANNOTATIONS.ownership] ?? '';
}

/**
 * Whether a copy was read from its owner first-hand: its recorded source is on the cluster that
 * owns it, not on a member that passed it on (a relayed copy keeps its transitive owner).
 */
export function recordsOwner(obj: KubeObject): boolean {
  const id = sourceIdentityOf(obj);
  return id !== undefined && id.clusterID === ownerOf(obj);
}

/** The annotations and labels that mark an object as a synced copy. */
export const COPY_MARKS = { annotations: [ANNOTATIONS.ownership, ANNOTATIONS.source, ANNOTATIONS.syncRecord, ANNOTATIONS.drifted, ANNOTATIONS.driftedFields], labels: [LABELS.ownership] } as const;

/** Whether the object carries any mark of a synced copy. */
export function hasCopyMarks(o: KubeObject | undefined): boolean {
  return COPY_MARKS.annotations.some((k) => o?.metadata?.annotations?.[k] !== undefined) || COPY_MARKS.labels.some((k) => o?.metadata?.labels?.[k] !== undefined);
}

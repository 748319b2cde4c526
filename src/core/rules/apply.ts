// Copies are written with server-side apply under one field manager, so a label, annotation or
// field a rule's earlier version wrote and no longer writes is removed from the copy, while what
// others set on it survives (the API server tracks who owns what). Applying on every reconcile
// would cost a request each time; these checks say when an apply can change nothing.

import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../api/types.ts';

/** The field manager of every write the sync makes. */
export const FIELD_MANAGER = 'cluster-registry-sync';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  [k: string]: unknown;
}

/** What an apply covers: the object without status (status has its subresource), the status, or all of it (a kind without a status subresource). */
export type Part = 'main' | 'status' | 'whole';

/** What an apply of a copy's spec covers: all but its status where the kind has a status subresource, else the whole object. */
export function specPart(resource: { readonly subresources: readonly string[] }): 'main' | 'whole' {
  return resource.subresources.includes('status') ? 'main' : 'whole';
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isEmpty = (v: unknown): boolean => (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/**
 * Whether `current` already holds `desired`: every value desired sets is there (servers add
 * defaults, others add fields: both are fine). Lists must have the same length, item by item.
 * An empty map or list and an absent one are the same; a desired null means absent. `owned` is
 * our managedFields set from the last apply: where it owns a map or list as a whole (a leaf set
 * on a composite value, e.g. a list without merge keys), the server replaces it as a whole, so
 * only an equal value holds.
 */
export function holds(current: unknown, desired: unknown, owned?: unknown): boolean {
  if (desired === null) return current === null || current === undefined;
  if (current === undefined && isEmpty(desired)) return true;
  const composite = Array.isArray(desired) || isObject(desired);
  if (composite && isObject(owned) && Object.keys(owned).every((k) => k === '.')) return sameValue(current, desired);
  const child = (key: string): unknown => (isObject(owned) ? owned[key] : undefined);
  if (Array.isArray(desired)) return Array.isArray(current) && current.length === desired.length && desired.every((d, i) => holds(current[i], d, child(`i:${i}`)));
  if (isObject(desired)) return isObject(current) && Object.entries(desired).every(([k, v]) => v === undefined || holds(current[k], v, child(`f:${k}`)));
  return current === desired;
}

/** Deep equality, with empty and absent maps and lists the same. */
function sameValue(a: unknown, b: unknown): boolean {
  if ((a === undefined && isEmpty(b)) || (b === undefined && isEmpty(a))) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => sameValue(a[k], b[k]));
  }
  return a === b;
}

/**
 * Whether every field a managedFields set (fieldsV1) says we own is still set by `desired`. A
 * field we own that desired lacks is one the apply would remove. Unknown key forms count as
 * missing, so the apply happens rather than a removal being skipped.
 */
export function ownedFieldsKept(fields: unknown, desired: unknown): boolean {
  if (!isObject(fields)) return true;
  for (const [key, child] of Object.entries(fields)) {
    if (key === '.') continue;
    const kind = key.slice(0, 2);
    const arg = key.slice(2);
    let next: unknown;
    try {
      if (kind === 'f:') {
        if (!isObject(desired) || desired[arg] === undefined) return false;
        next = desired[arg];
      } else if (kind === 'k:') {
        // Key fields the desired item leaves out are ones the server defaults (a port's protocol).
        const wanted = JSON.parse(arg) as Record<string, unknown>;
        next = Array.isArray(desired) ? desired.find((item) => isObject(item) && Object.entries(wanted).every(([k, v]) => item[k] === undefined || isDeepStrictEqual(item[k], v))) : undefined;
        if (next === undefined) return false;
      } else if (kind === 'v:') {
        const wanted: unknown = JSON.parse(arg);
        if (!Array.isArray(desired) || !desired.some((item) => isDeepStrictEqual(item, wanted))) return false;
        continue;
      } else if (kind === 'i:') {
        const i = Number(arg);
        if (!Array.isArray(desired) || !Number.isInteger(i) || i < 0 || i >= desired.length) return false;
        next = desired[i];
      } else {
        return false;
      }
    } catch {
      return false;
    }
    if (!ownedFieldsKept(child, next)) return false;
  }
  return true;
}

/** What an apply of that part sends. */
export function applyBody(desired: KubeObject, part: Part): KubeObject {
  if (part === 'whole') return desired;
  const { status, ...rest } = desired;
  if (part === 'main') return rest;
  return { apiVersion: desired.apiVersion, kind: desired.kind, metadata: { name: desired.metadata.name, namespace: desired.metadata.namespace }, status };
}

/**
 * What we own of that part: our apply entry, or for the object itself the entry our create left
 * (fields it set are ours until the first apply moves them over).
 */
function ourEntry(current: KubeObject, manager: string, part: Part): ManagedFieldsEntry | undefined {
  const entries = (current.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const sub = part === 'status' ? 'status' : '';
  const ours = (op: string) => entries.find((e) => e.manager === manager && e.operation === op && (e.subresource ?? '') === sub);
  return ours('Apply') ?? (part === 'status' ? undefined : ours('Update'));
}

/**
 * Whether applying that part of `desired` as `manager` can change `current`: it does unless
 * current already holds every desired value and we own nothing desired no longer sets. A copy
 * we never wrote (made by another writer) is applied once, so that we own what we write.
 */
export function applyNeeded(desired: KubeObject, current: KubeObject, manager: string, part: Part): boolean {
  const body = applyBody(desired, part);
  if (part === 'status' && body['status'] === undefined) return false;
  const entry = ourEntry(current, manager, part);
  if (!entry) return true;
  const compared = part === 'status' ? { status: body['status'] } : body;
  const present = part === 'status' ? { status: current['status'] } : current;
  return !holds(present, compared, entry.fieldsV1) || !ownedFieldsKept(entry.fieldsV1, compared);
}

function mergeFields(a: unknown, b: unknown): unknown {
  if (!isObject(a) || !isObject(b)) return b ?? a;
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = k in out ? mergeFields(out[k], v) : v;
  return out;
}

/**
 * A copy is created with a plain create, which leaves the fields it set owned by an "Update"
 * entry of our manager; the first apply must own them instead, or they could never be removed
 * again. The managedFields with that entry folded into our "Apply" entry (the way kubectl
 * upgrades client-side-applied objects); undefined when there is nothing to fold.
 */
export function foldedManagedFields(current: KubeObject, manager = FIELD_MANAGER): ManagedFieldsEntry[] | undefined {
  const entries = (current.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const ours = (op: string) => entries.findIndex((e) => e.manager === manager && e.operation === op && !e.subresource);
  const u = ours('Update');
  if (u < 0) return undefined;
  const a = ours('Apply');
  const update = entries[u]!;
  const folded: ManagedFieldsEntry = a < 0 ? { ...update, operation: 'Apply' } : { ...entries[a]!, fieldsV1: mergeFields(entries[a]!.fieldsV1, update.fieldsV1) };
  return entries.flatMap((e, i) => (i === u ? (a < 0 ? [folded] : []) : i === a ? [folded] : [e]));
}

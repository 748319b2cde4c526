// Where a live object differs from what the sync would write of it, field by field: what drift
// and adoption are judged and told by.
import { OUR_KEY_PREFIX } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { holds, isObject } from './apply.ts';

/** One field the sync would set that the object does not hold, and what the object has there. */
export interface FieldDifference {
  /** Where, from the object's root: ['spec', 'replicas']. */
  segments: string[];
  /** What is there now (undefined: nothing). */
  have: unknown;
}

/** Our own bookkeeping on a copy (ownership, source, record, marks): the sync's to write, never content to compare. */
const bookkeeping = (segments: readonly string[]): boolean =>
  segments.length === 3 && segments[0] === 'metadata' && (segments[1] === 'labels' || segments[1] === 'annotations') && segments[2]!.startsWith(OUR_KEY_PREFIX);

/**
 * The fields of `body` (an apply body) that `current` does not hold, down to scalars and lists
 * (a list is one field), maps looked into even where they are gone. Identity (kind, name,
 * namespace), status and our own bookkeeping keys are left out.
 */
export function differingFields(body: KubeObject, current: KubeObject): FieldDifference[] {
  const out: FieldDifference[] = [];
  const visit = (want: unknown, have: unknown, segments: string[]): void => {
    if (isObject(want) && Object.keys(want).length > 0 && (isObject(have) || have === undefined)) {
      for (const [k, v] of Object.entries(want)) if (v !== undefined) visit(v, isObject(have) ? have[k] : undefined, [...segments, k]);
      return;
    }
    if (!holds(have, want) && !bookkeeping(segments)) out.push({ segments, have });
  };
  const { apiVersion: _a, kind: _k, metadata, status: _s, ...rest } = body;
  const { name: _n, namespace: _ns, ...meta } = metadata;
  visit(rest, current, []);
  visit(meta, current.metadata, ['metadata']);
  return out;
}

/** `spec.replicas`, `metadata.labels["app.kubernetes.io/name"]`. */
export function fieldPath(segments: readonly string[]): string {
  return segments.map((s, i) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) ? (i === 0 ? s : `.${s}`) : `[${JSON.stringify(s)}]`)).join('');
}

/** What `obj` holds at `segments`. */
export function valueAt(obj: unknown, segments: readonly string[]): unknown {
  return segments.reduce<unknown>((node, s) => (isObject(node) ? node[s] : undefined), obj);
}

/** `body` without the given fields. */
export function withoutFields(body: KubeObject, fields: readonly { segments: readonly string[] }[]): KubeObject {
  const out = structuredClone(body);
  for (const f of fields) {
    const parent = valueAt(out, f.segments.slice(0, -1));
    if (isObject(parent)) delete parent[f.segments[f.segments.length - 1]!];
  }
  return out;
}

// The spoke's object as the hub declares it. Each part has one writer: the content (spec, or
// whatever a kind has besides metadata and status) and the hub's labels and annotations come
// down; status stays the spoke's. Labels and annotations the spoke's own controllers add are
// kept, so the keys the hub set are recorded on the object, and a key the hub drops is removed
// without touching any other.
import { isDeepStrictEqual } from 'node:util';
import { cloneJSON } from '../api/clone.ts';
import { HUB_ANNOTATIONS, STRIPPED_ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import type { Place } from './names.ts';

/** Replace: the hub's content is the spoke's. Merge: fields only the spoke has (set by its own controllers) are kept. */
export type ContentMode = 'Replace' | 'Merge';

export interface GenerationKeys {
  remote: string;
  local: string;
}

export const DEFAULT_GENERATION_KEYS: GenerationKeys = { remote: HUB_ANNOTATIONS.remoteGeneration, local: HUB_ANNOTATIONS.localGeneration };

export interface ManagedKeys {
  labels: string[];
  annotations: string[];
}

const META = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/** The hub object a spoke object is made from, as its origin annotation records it. */
export function originOf(hub: KubeObject): string {
  return `${hub.metadata.namespace ?? ''}/${hub.metadata.name ?? ''}/${hub.metadata.uid ?? ''}`;
}

/** The hub object a spoke object records as its origin (`originOf`), or undefined when it records none we can read. */
export function parseOrigin(text: string | undefined): { namespace?: string; name: string; uid: string } | undefined {
  const parts = text?.split('/');
  if (parts?.length !== 3 || !parts[1]) return undefined;
  return { ...(parts[0] ? { namespace: parts[0] } : {}), name: parts[1], uid: parts[2] ?? '' };
}

/** Whether the sync of an object is paused, by the annotation on either side. */
export function paused(obj: KubeObject | undefined): boolean {
  return obj?.metadata.annotations?.[HUB_ANNOTATIONS.paused] === 'true';
}

/** The keys the hub set on a spoke object, as last recorded there; none when the record is missing or not ours. */
export function managedKeys(obj: KubeObject | undefined): ManagedKeys {
  const text = obj?.metadata.annotations?.[HUB_ANNOTATIONS.managedKeys];
  try {
    const parsed = text ? (JSON.parse(text) as Partial<ManagedKeys>) : {};
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : []);
    return { labels: strings(parsed.labels), annotations: strings(parsed.annotations) };
  } catch {
    return { labels: [], annotations: [] };
  }
}

/** Our own keys' prefixes: the hub's say nothing about the spoke (and the peer sync acts on some). */
const OUR_PREFIXES = ['cluster-registry.k8s.cisco.com/', 'cluster-registry-controller.k8s.cisco.com/'];
const ours = (key: string) => OUR_PREFIXES.some((p) => key.startsWith(p));

/** What of the hub's labels and annotations reaches the spoke: none of our keys, the echo's, nor apply records. */
function passed(from: Record<string, string> | undefined, keys: GenerationKeys): Record<string, string> {
  const held = new Set<string>([keys.remote, keys.local, ...STRIPPED_ANNOTATIONS]);
  return Object.fromEntries(Object.entries(from ?? {}).filter(([k]) => !held.has(k) && !ours(k)));
}

/** `from`'s keys on `onto`, after removing the keys `previously` set that `from` no longer has. */
function reconcileKeys(onto: Record<string, string> | undefined, from: Record<string, string>, previously: readonly string[]): Record<string, string> {
  const out = { ...onto };
  for (const k of previously) if (!(k in from)) delete out[k];
  return Object.assign(out, from);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `over` merged into `base`: maps field by field, anything else (lists included) taken whole from `over`. */
function merge(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return cloneJSON(over);
  const out: Record<string, unknown> = cloneJSON(base);
  for (const [k, v] of Object.entries(over)) {
    if (k === '__proto__') continue;
    out[k] = merge(out[k], v);
  }
  return out;
}

/** The spoke object the hub's `hub` declares at `place` for `rule`, given what the spoke has now (`current`). */
export function desiredLocal(hub: KubeObject, current: KubeObject | undefined, opts: { rule: string; place: Place; content: ContentMode; generationKeys: GenerationKeys }): KubeObject {
  const out: KubeObject = current ? cloneJSON(current) : { apiVersion: hub.apiVersion, kind: hub.kind, metadata: { name: opts.place.name, ...(opts.place.namespace !== undefined ? { namespace: opts.place.namespace } : {}) } };
  const record = out as Record<string, unknown>;
  const source = hub as Record<string, unknown>;
  if (opts.content === 'Replace') for (const k of Object.keys(record)) if (!META.has(k) && !(k in source)) delete record[k];
  for (const [k, v] of Object.entries(source)) {
    if (META.has(k) || k === '__proto__') continue;
    record[k] = opts.content === 'Merge' ? merge(record[k], v) : cloneJSON(v);
  }
  const previously = managedKeys(current);
  const labels = passed(hub.metadata.labels, opts.generationKeys);
  const annotations = passed(hub.metadata.annotations, opts.generationKeys);
  out.metadata.labels = reconcileKeys(out.metadata.labels, labels, previously.labels);
  out.metadata.annotations = reconcileKeys(out.metadata.annotations, annotations, previously.annotations);
  const managed: ManagedKeys = { labels: Object.keys(labels).sort(), annotations: Object.keys(annotations).sort() };
  out.metadata.annotations[HUB_ANNOTATIONS.managedKeys] = JSON.stringify(managed);
  out.metadata.annotations[HUB_ANNOTATIONS.appliedGeneration] = String(hub.metadata.generation ?? 0);
  out.metadata.annotations[HUB_ANNOTATIONS.rule] = opts.rule;
  out.metadata.annotations[HUB_ANNOTATIONS.origin] = originOf(hub);
  if (Object.keys(out.metadata.labels).length === 0) delete out.metadata.labels;
  return out;
}

/** Whether writing `desired` would change anything of what the hub declares on `current`. */
export function localChanged(current: KubeObject, desired: KubeObject): boolean {
  const declared = (o: KubeObject) => {
    const { metadata, status: _status, ...content } = o as KubeObject & { status?: unknown };
    return { content, labels: metadata.labels ?? {}, annotations: metadata.annotations ?? {} };
  };
  return !isDeepStrictEqual(declared(current), declared(desired));
}

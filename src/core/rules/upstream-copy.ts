// A copy on a member that runs upstream's controller: that controller writes none of our records
// (the source annotation, the sync record) and owns its fields under its own manager, so whether
// it keeps the copy as ours would write it is said by what the copy holds alone.
import { ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { applyBody, holds, isObject, type Part } from './apply.ts';

/** What our sync writes of `part` of a copy, without the records only our controller keeps. */
export function upstreamBody(desired: KubeObject, part: Exclude<Part, 'status'>): KubeObject {
  const body = applyBody(desired, part);
  const annotations = { ...body.metadata.annotations };
  delete annotations[ANNOTATIONS.source];
  delete annotations[ANNOTATIONS.syncRecord];
  return { ...body, metadata: { ...body.metadata, annotations } };
}

/**
 * Top-level maps no API server defaults: upstream's update is a three-way patch against what it
 * last wrote, so a key the source dropped is dropped from the copy too; the copy must hold these
 * exactly. Elsewhere (a spec the API server fills in, labels and annotations it keeps others'
 * keys of) what others added is fine.
 */
const EXACT = ['data', 'binaryData'] as const;

/** The keys of a map, absent the same as empty. */
const keysOf = (v: unknown): string => JSON.stringify(isObject(v) ? Object.keys(v).sort() : []);

/**
 * Whether upstream's controller leaves `current` as it is: it holds every value our sync would
 * write of `part`, our records aside, no key of a map in EXACT besides, and its status when the
 * rule syncs status.
 */
export function upstreamCopyInSync(current: KubeObject, desired: KubeObject, part: Exclude<Part, 'status'>, syncStatus: boolean): boolean {
  const body = upstreamBody(desired, part);
  if (!holds(current, body) || EXACT.some((k) => keysOf(current[k]) !== keysOf(body[k]))) return false;
  return !syncStatus || desired['status'] === undefined || holds(current['status'], desired['status']);
}

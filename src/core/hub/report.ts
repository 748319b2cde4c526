// What a spoke writes back to the hub: its status, and the generation echo that tells the hub's
// controllers which of their generations that status answers. Nothing else of the hub object is
// ever written, and nothing at all when both are already there. The echo never vouches for more
// than the status shows: the hub generation is echoed only once the spoke's status has caught up
// with the spec taken from it.
import { isDeepStrictEqual } from 'node:util';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import { cut } from '../api/text.ts';
import type { KubeObject } from '../api/types.ts';
import { isObject, originOf, type GenerationKeys } from './desired.ts';

export interface HubReport {
  /** A JSON merge patch of the hub object's status that makes it the spoke's (null for what the spoke dropped). */
  statusPatch?: Record<string, unknown>;
  /** The generation echo (and who reports), where the hub object's differs. */
  annotations?: Record<string, string>;
  /** Why this spoke may not report on the object: another one does. */
  refused?: string;
}

type WithStatus = KubeObject & { status?: unknown };


/** The RFC 7386 merge patch that turns `from` into `to`; undefined when they are equal. */
export function mergePatch(from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  for (const [k, v] of Object.entries(to)) {
    const before = from[k];
    if (isDeepStrictEqual(before, v)) continue;
    // A null in a merge patch deletes: a null in the status itself can only be sent by replacing its parent.
    patch[k] = isObject(before) && isObject(v) ? (mergePatch(before, v) ?? {}) : v;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/**
 * The report of the spoke object `local` on the hub object `hub`; `reporter` is the spoke's
 * cluster ID (two spokes reporting on one object would overwrite each other in turn).
 */
export function hubReport(hub: WithStatus, local: WithStatus, keys: GenerationKeys, reporter?: string): HubReport {
  const by = hub.metadata.annotations?.[HUB_ANNOTATIONS.reportedBy];
  if (reporter && by && by !== reporter) return { refused: `its status is reported by another cluster (${cut(by, 64)})` };
  // Made from another hub object of that name (deleted and made again): nothing it says is about this one yet.
  if (local.metadata.annotations?.[HUB_ANNOTATIONS.origin] !== originOf(hub)) return {};
  const report: HubReport = {};
  const statusPatch = mergePatch(isObject(hub.status) ? hub.status : {}, isObject(local.status) ? local.status : {});
  if (statusPatch) report.statusPatch = statusPatch;
  const observed = (local.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  const generation = local.metadata.generation ?? 0;
  const reported = typeof observed === 'number' ? observed : generation;
  const echo: Record<string, string> = { [keys.local]: String(reported) };
  // The hub generation applied went into this very spoke generation: once the status describes it, it answers that hub generation.
  const applied = local.metadata.annotations?.[HUB_ANNOTATIONS.appliedGeneration];
  if (applied !== undefined && reported >= generation) echo[keys.remote] = applied;
  if (reporter) echo[HUB_ANNOTATIONS.reportedBy] = reporter;
  const changed = Object.fromEntries(Object.entries(echo).filter(([k, v]) => hub.metadata.annotations?.[k] !== v));
  if (Object.keys(changed).length > 0) report.annotations = changed;
  return report;
}

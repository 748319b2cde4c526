// What a spoke writes back to the hub: its status, and the generation echo that tells the hub's
// controllers which of their generations that status answers. Nothing else of the hub object is
// ever written, and nothing at all when both are already there.
import { isDeepStrictEqual } from 'node:util';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import type { GenerationKeys } from './desired.ts';

export interface HubReport {
  /** The spoke's status, when the hub object's differs. */
  status?: unknown;
  /** The generation echo, when the hub object's differs. */
  annotations?: Record<string, string>;
}

/** The local generation the spoke's status describes: its observedGeneration where the kind has one. */
function reportedGeneration(local: KubeObject & { status?: unknown }): number {
  const observed = (local.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  return typeof observed === 'number' ? observed : (local.metadata.generation ?? 0);
}

export function hubReport(hub: KubeObject & { status?: unknown }, local: KubeObject & { status?: unknown }, keys: GenerationKeys): HubReport {
  const report: HubReport = {};
  if (!isDeepStrictEqual(hub.status ?? {}, local.status ?? {})) report.status = local.status ?? {};
  const echo = {
    // The hub generation the spoke's content was taken from, not the hub's current one: a spec
    // the spoke has not applied yet has no status here.
    [keys.remote]: local.metadata.annotations?.[HUB_ANNOTATIONS.appliedGeneration] ?? '0',
    [keys.local]: String(reportedGeneration(local)),
  };
  if (Object.entries(echo).some(([k, v]) => hub.metadata.annotations?.[k] !== v)) report.annotations = echo;
  return report;
}

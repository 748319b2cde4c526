// metav1.Condition on the status of our rules.
import { metaTime } from './time.ts';
import type { Condition } from './types.ts';

/**
 * The condition `type` at `status`, its lastTransitionTime kept from the one in `previous` while
 * its status holds (the API convention), else `now`.
 */
export function ruleCondition(previous: readonly Condition[] | undefined, c: { type: string; ok: boolean; reason: string; message: string; observedGeneration: number | undefined }, now: Date): Condition {
  const status = c.ok ? 'True' : 'False';
  const prev = previous?.find((p) => p.type === c.type);
  return { type: c.type, status, reason: c.reason, message: c.message, lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : metaTime(now), ...(c.observedGeneration !== undefined ? { observedGeneration: c.observedGeneration } : {}) };
}

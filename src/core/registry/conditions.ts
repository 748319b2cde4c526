// Cluster status conditions as upstream sets them, with the churn removed: conditions are kept
// sorted by type, and a heartbeat is only renewed when the condition changes or has gone stale,
// so a reconcile that finds nothing new writes nothing.
import { CLUSTER_CONDITIONS } from '../api/keys.ts';
import type { Cluster, ClusterCondition, ConditionStatus } from '../api/types.ts';
import { byCodeUnit } from './order.ts';

export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/** The Event a condition change records: transitions, and a failure first seen or changed. */
export interface TransitionEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** Condition types whose True status is the failure (only LocalConflict). */
const TRUE_IS_FAILURE: ReadonlySet<string> = new Set([CLUSTER_CONDITIONS.localConflict.type]);
/** Facts, not health: False here is no problem to report when it first appears. */
const INFORMATIONAL: ReadonlySet<string> = new Set([CLUSTER_CONDITIONS.localCluster.type]);

function isFailure(c: ConditionInput): boolean {
  return TRUE_IS_FAILURE.has(c.type) ? c.status === 'True' : c.status === 'False';
}

// `cluster-registry status` shows the Ready heartbeat as the last health check: renew it on every
// periodic refresh (one minute by default; the margin absorbs timer jitter).
export const HEARTBEAT_REFRESH_MS = 55_000;

/**
 * Returns the conditions with `input` set, and the Event to record if its status changed.
 * Never mutates `current`.
 */
export function setCondition(
  current: readonly ClusterCondition[],
  input: ConditionInput,
  now: Date,
): { conditions: ClusterCondition[]; event?: TransitionEvent } {
  const stamp = now.toISOString();
  const existing = current.find((c) => c.type === input.type);
  const others = current.filter((c) => c.type !== input.type);
  let next: ClusterCondition;
  let event: TransitionEvent | undefined;
  if (!existing) {
    next = { ...input, lastTransitionTime: stamp, lastHeartbeatTime: stamp };
    // Upstream is silent on first appearance; a condition that starts out failed is bad input
    // someone must hear about.
    if (isFailure(input) && !INFORMATIONAL.has(input.type)) event = { type: 'Warning', reason: input.reason, message: input.message };
  } else {
    const statusChanged = existing.status !== input.status;
    const changed = statusChanged || existing.reason !== input.reason || existing.message !== input.message;
    const stale = !existing.lastHeartbeatTime || now.getTime() - Date.parse(existing.lastHeartbeatTime) >= HEARTBEAT_REFRESH_MS;
    next = {
      ...input,
      lastTransitionTime: statusChanged || !existing.lastTransitionTime ? stamp : existing.lastTransitionTime,
      lastHeartbeatTime: changed || stale ? stamp : existing.lastHeartbeatTime,
    };
    if (statusChanged) event = { type: isFailure(input) ? 'Warning' : 'Normal', reason: input.reason, message: input.message };
    // Ours: one failure turning into another is news too (upstream recorded transitions only).
    else if (changed && isFailure(input)) event = { type: 'Warning', reason: input.reason, message: input.message };
  }
  return { conditions: sortConditions([...others, next]), ...(event ? { event } : {}) };
}

export function removeCondition(current: readonly ClusterCondition[], type: string): ClusterCondition[] {
  return current.filter((c) => c.type !== type);
}

export function sortConditions(conditions: readonly ClusterCondition[]): ClusterCondition[] {
  return [...conditions].sort((a, b) => byCodeUnit(a.type, b.type));
}

type ConditionSpec = { type: string; true: { reason: string; message?: string }; false: { reason: string; message?: string } };

/** A condition from the fixed table CLUSTER_CONDITIONS; False conditions carry the error text when the table has no message. */
export function conditionOf(spec: ConditionSpec, ok: boolean, errorMessage = ''): ConditionInput {
  const side = ok ? spec.true : spec.false;
  return { type: spec.type, status: ok ? 'True' : 'False', reason: side.reason, message: side.message ?? errorMessage };
}

/**
 * Whether two versions of a Cluster differ in what anyone acts on: more than renewed heartbeats
 * and the server's bookkeeping. Every member renews every heartbeat each minute.
 */
export function changedBeyondHeartbeats(a: Cluster, b: Cluster): boolean {
  const essence = (c: Cluster): string =>
    JSON.stringify([
      c.metadata.labels,
      c.metadata.annotations,
      c.metadata.deletionTimestamp,
      c.spec,
      c.status && { ...c.status, conditions: c.status.conditions?.map(({ lastHeartbeatTime: _renewed, ...rest }) => rest) },
    ]);
  return essence(a) !== essence(b);
}

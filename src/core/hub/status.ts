// The status a HubSyncRule shows: whether it is valid, whether its hub is connected (identity
// checked, caches loaded), what it synced, and whether what the hub sends and what the rule makes
// here keep to their budgets. A condition keeps its transition time while its
// status holds, so rewriting the same verdict changes nothing.
import { isDeepStrictEqual } from 'node:util';
import { HUB_RULE_CONDITIONS } from '../api/keys.ts';
import { ruleCondition } from '../api/condition.ts';
import { cut } from '../api/text.ts';
import type { Condition, HubSyncRuleStatus } from '../api/types.ts';

export interface HubRuleFacts {
  generation: number | undefined;
  /** Problems of the rule; empty when valid. */
  problems: readonly string[];
  /** Why the hub is not connected; undefined when it is. */
  notConnected: string | undefined;
  counts: { matched: number; synced: number; failed: number; lastError: string; lastSyncTime: string };
  /** Why a budget is exceeded (our cache of the hub, the objects the rule may make); undefined when none is. */
  overBudget: string | undefined;
}

const MAX_ERROR = 1024;

export function hubRuleStatus(f: HubRuleFacts, previous: HubSyncRuleStatus | undefined, now: Date): HubSyncRuleStatus {
  const cond = (c: { type: string; true: string; false: string }, ok: boolean, message: string): Condition =>
    ruleCondition(previous?.conditions, { type: c.type, ok, reason: ok ? c.true : c.false, message: cut(message, MAX_ERROR), observedGeneration: f.generation }, now);
  const C = HUB_RULE_CONDITIONS;
  const valid = f.problems.length === 0;
  const connected = valid && f.notConnected === undefined;
  const conditions = [
    cond(C.valid, valid, valid ? 'rule is valid' : f.problems.join('; ')),
    cond(C.connected, connected, connected ? 'the hub is reached with the credentials given, and is the Cluster named' : !valid ? 'not tried: the rule is invalid' : (f.notConnected ?? '')),
    cond(C.synced, connected && f.counts.failed === 0, !connected ? 'not syncing: the hub is not connected' : f.counts.failed === 0 ? `${f.counts.synced} object(s) in sync` : `${f.counts.failed} of ${f.counts.matched} object(s) failed; last: ${f.counts.lastError}`),
    // A condition of its own: the cure is a budget set here, not the hub's reachability.
    cond(C.withinBudget, f.overBudget === undefined, f.overBudget ?? 'what the hub sends and what the rule makes here are within their budgets'),
  ];
  return {
    ...(f.generation !== undefined ? { observedGeneration: f.generation } : {}),
    conditions,
    matched: f.counts.matched,
    synced: f.counts.synced,
    failed: f.counts.failed,
    ...(f.counts.failed > 0 && f.counts.lastError ? { lastError: cut(f.counts.lastError, MAX_ERROR) } : {}),
    ...(f.counts.lastSyncTime ? { lastSyncTime: f.counts.lastSyncTime } : {}),
  };
}

/** Whether writing `next` over `current` would change anything. */
export function hubRuleStatusChanged(current: HubSyncRuleStatus | undefined, next: HubSyncRuleStatus): boolean {
  return !isDeepStrictEqual(current ?? {}, next);
}

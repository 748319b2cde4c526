// One copy made the way a rule's sync makes it, outside the engine: for operations that seed a
// cluster by hand (join), so what they write is exactly what the controllers later keep up to
// date (built by the same core, written under the same field manager, never over a local object).
import { ANNOTATIONS, gvkOf } from '../core/api/index.ts';
import { keepingVouch } from '../core/trust/index.ts';
import type { Cluster, KubeObject, ResourceSyncRuleSpec } from '../core/api/types.ts';
import { applyNeeded, buildDesiredCopy, combineMutations, compileRule, decideWrite, FIELD_MANAGER, recordedFrom, recordOn, specPart, type DecisionReason } from '../core/rules/index.ts';
import { Discovery, isAlreadyExists, isConflict, isNotFound, type ObjectClient } from '../kube/index.ts';
import { CopyChangedError, CopyWriter } from './writer.ts';

export interface CopyOnceContext {
  /** Where the copy is written. */
  readonly target: ObjectClient;
  readonly targetClusterID: string;
  /** The cluster the source was read from. */
  readonly sourceClusterID: string;
  readonly targetClusters: readonly Cluster[];
  /** Who vouches for a registry entry written so (`join`): marked on it, so that it speaks for its cluster here. */
  readonly vouch?: string;
  readonly signal?: AbortSignal;
}

export interface CopyOnceOutcome {
  readonly action: 'created' | 'updated' | 'unchanged' | 'skipped';
  readonly reason: DecisionReason | 'NotMatched' | 'Unchanged';
}

/** Attempts before a copy that keeps changing under us (its controller writing its status) is given up. */
const ATTEMPTS = 5;

export async function copyOnce(rule: { name: string; spec: ResourceSyncRuleSpec }, source: KubeObject, ctx: CopyOnceContext): Promise<CopyOnceOutcome> {
  // Writes are guarded by the version decided on: a copy that changed meanwhile is decided on again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await copyOnceAttempt(rule, source, ctx);
    } catch (err) {
      if (attempt >= ATTEMPTS || !(isConflict(err) || err instanceof CopyChangedError)) throw err;
    }
  }
}

async function copyOnceAttempt(rule: { name: string; spec: ResourceSyncRuleSpec }, source: KubeObject, ctx: CopyOnceContext): Promise<CopyOnceOutcome> {
  const { matched, matchedRules } = compileRule(rule.spec).match(source);
  if (!matched) return { action: 'skipped', reason: 'NotMatched' };
  const built = buildDesiredCopy(source, combineMutations(matchedRules, rule.spec), {
    syncedFromClusterID: ctx.sourceClusterID,
    localClusterID: ctx.targetClusterID,
    clusters: ctx.targetClusters,
    rule: rule.name,
  });
  const desired = ctx.vouch ? { ...built, metadata: { ...built.metadata, annotations: { ...built.metadata.annotations, [ANNOTATIONS.vouched]: ctx.vouch } } } : built;
  const signal = ctx.signal ?? new AbortController().signal;
  const discovery = new Discovery(ctx.target);
  const resource = await discovery.resourceFor(gvkOf(desired));
  const writer = new CopyWriter(ctx.target, discovery);
  // The source is read right now, so it is alive.
  const facts = { localClusterID: ctx.targetClusterID, syncedFromClusterID: ctx.sourceClusterID, alivePeerIDs: new Set([ctx.sourceClusterID]) };
  let current: KubeObject | undefined;
  try {
    current = await writer.get(resource, desired.metadata.namespace, desired.metadata.name ?? '', signal);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  // The sync record as the controllers write it, so that they find the copy as they left it.
  const from = recordedFrom({ object: undefined }, source, ctx.targetClusterID);
  let decision = decideWrite(facts, desired, current, false);
  if (decision.action === 'create') {
    recordOn(desired, undefined, from);
    try {
      await writer.create(resource, desired, signal);
      return { action: 'created', reason: decision.reason };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Gone again before this read: the place changed under us, decided on again from the start.
      current = await writer.get(resource, desired.metadata.namespace, desired.metadata.name ?? '', signal).catch((e: unknown) => {
        throw isNotFound(e) ? new CopyChangedError() : e;
      });
      decision = decideWrite(facts, desired, current, false);
    }
  }
  if (decision.action !== 'update' || !current) return { action: 'skipped', reason: decision.reason };
  const next = keepingVouch(desired, current);
  recordOn(next, current, from);
  if (!applyNeeded(next, current, FIELD_MANAGER, specPart(resource))) return { action: 'unchanged', reason: 'Unchanged' };
  await writer.update(resource, next, current, signal);
  return { action: 'updated', reason: decision.reason };
}

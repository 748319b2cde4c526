// Copying a registry object (a Cluster or its credentials Secret) from the cluster it describes
// into another, exactly as the core rules would sync it: built by the sync core (ownership
// annotation and label, stripped metadata, no status) and written only when the ownership
// decision allows, so an object this cluster owns is never overwritten.
import { isDeepStrictEqual } from 'node:util';
import { CORE_RULE_NAMES } from '../core/api/keys.ts';
import { coreResourceSyncRules } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { buildDesiredCopy, combineMutations, decideWrite, matchRule, type DecisionReason } from '../core/rules/index.ts';
import { isNotFound, type RestClient } from '../kube/index.ts';
import { CLUSTERS, SECRETS } from '../core/api/resources.ts';

export type RegistryKind = 'cluster' | 'secret';

export interface CopyContext {
  /** Where the copy is written. */
  readonly target: RestClient;
  readonly targetClusterID: string;
  /** The cluster the source was read from. */
  readonly sourceClusterID: string;
  /** The controller namespace (core secrets rule scope). */
  readonly namespace: string;
  readonly targetClusters: readonly Cluster[];
  readonly alivePeerIDs: ReadonlySet<string>;
}

export interface CopyOutcome {
  readonly action: 'created' | 'updated' | 'unchanged' | 'skipped';
  readonly reason: DecisionReason | 'NotMatched' | 'Unchanged';
}

const RULE_NAME: Record<RegistryKind, string> = { cluster: CORE_RULE_NAMES.clusters, secret: CORE_RULE_NAMES.clusterSecrets };

export async function copyRegistryObject(kind: RegistryKind, source: KubeObject, ctx: CopyContext, signal?: AbortSignal): Promise<CopyOutcome> {
  const rule = coreResourceSyncRules(ctx.namespace).find((r) => r.metadata.name === RULE_NAME[kind]);
  if (!rule) throw new Error(`no core rule for ${kind}`);
  const { matched, matchedRules } = matchRule(rule.spec, source);
  if (!matched) return { action: 'skipped', reason: 'NotMatched' };
  const desired = buildDesiredCopy(source, combineMutations(matchedRules, rule.spec), {
    syncedFromClusterID: ctx.sourceClusterID,
    localClusterID: ctx.targetClusterID,
    clusters: ctx.targetClusters,
  });
  delete desired['status'];
  const ref = kind === 'cluster' ? CLUSTERS : SECRETS;
  const ns = desired.metadata.namespace;
  const name = desired.metadata.name ?? '';
  const opts = signal ? { signal } : {};
  let current: KubeObject | undefined;
  try {
    current = await ctx.target.get(ref, ns, name, opts);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const decision = decideWrite({ localClusterID: ctx.targetClusterID, syncedFromClusterID: ctx.sourceClusterID, alivePeerIDs: ctx.alivePeerIDs }, desired, current, false);
  if (decision.action === 'create') {
    await ctx.target.create(ref, ns, desired, opts);
    return { action: 'created', reason: decision.reason };
  }
  if (decision.action !== 'update' || !current) return { action: 'skipped', reason: decision.reason };
  if (!changed(current, desired)) return { action: 'unchanged', reason: 'Unchanged' };
  await ctx.target.update(ref, ns, { ...desired, metadata: { ...desired.metadata, resourceVersion: current.metadata.resourceVersion } }, opts);
  return { action: 'updated', reason: decision.reason };
}

/** Whether a write would change anything a copy carries (spec/data/type, labels, annotations). */
function changed(current: KubeObject, desired: KubeObject): boolean {
  const pick = (o: KubeObject) => [o['spec'], o['data'], o['type'], o.metadata.labels ?? {}, o.metadata.annotations ?? {}];
  return !isDeepStrictEqual(pick(current), pick(desired));
}

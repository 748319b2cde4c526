// The core ClusterFeature and ResourceSyncRules, kept as specified on every local
// Cluster reconcile: created when missing, restored when edited, the feature removed when this
// cluster is not a core source. Each is owned by the local Cluster, so deleting it collects them.
import { isDeepStrictEqual } from 'node:util';
import { API_GROUP_VERSION, KINDS } from '../core/api/keys.ts';
import { coreClusterFeature, coreResourceSyncRules } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { isNotFound, type ResourceRef, type ObjectClient } from '../kube/index.ts';
import { CLUSTER_FEATURES, RESOURCE_SYNC_RULES } from '../core/api/resources.ts';

function ownedBy(obj: KubeObject, owner: Cluster): KubeObject {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      ownerReferences: [{ apiVersion: API_GROUP_VERSION, kind: KINDS.cluster, name: owner.metadata?.name ?? '', uid: owner.metadata?.uid ?? '', controller: true }],
    },
  };
}

/** The fields we own on a core object; anything else (status, others' annotations) is left alone. */
function drifted(current: KubeObject, desired: KubeObject): boolean {
  const labelsOk = Object.entries(desired.metadata?.labels ?? {}).every(([k, v]) => current.metadata?.labels?.[k] === v);
  return !labelsOk || !isDeepStrictEqual(current['spec'], desired['spec']) || !isDeepStrictEqual(current.metadata?.ownerReferences, desired.metadata?.ownerReferences);
}

async function ensurePresent(rest: ObjectClient, ref: ResourceRef, desired: KubeObject, signal: AbortSignal): Promise<void> {
  const name = desired.metadata?.name ?? '';
  let current: KubeObject | undefined;
  try {
    current = await rest.get(ref, undefined, name, { signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!current) {
    await rest.create(ref, undefined, desired, { signal });
    return;
  }
  if (!drifted(current, desired)) return;
  await rest.update(ref, undefined, {
    ...current,
    spec: desired['spec'],
    metadata: { ...current.metadata, labels: { ...current.metadata?.labels, ...desired.metadata?.labels }, ownerReferences: desired.metadata?.ownerReferences },
  }, { signal });
}

async function ensureAbsent(rest: ObjectClient, ref: ResourceRef, name: string, signal: AbortSignal): Promise<void> {
  try {
    await rest.delete(ref, undefined, name, { signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

export async function ensureCoreResources(
  rest: ObjectClient,
  localCluster: Cluster,
  opts: { namespace: string; coreSourceEnabled: boolean },
  signal: AbortSignal,
): Promise<void> {
  const feature = coreClusterFeature();
  if (opts.coreSourceEnabled) await ensurePresent(rest, CLUSTER_FEATURES, ownedBy(feature, localCluster), signal);
  else await ensureAbsent(rest, CLUSTER_FEATURES, feature.metadata?.name ?? '', signal);
  for (const rule of coreResourceSyncRules(opts.namespace)) {
    await ensurePresent(rest, RESOURCE_SYNC_RULES, ownedBy(rule, localCluster), signal);
  }
}

// Which cache events are worth a Cluster reconcile. Heartbeats and status-only writes (ours
// included) change nothing a reconcile decides, so they are filtered out, as upstream filters
// its watches.
import { isDeepStrictEqual } from 'node:util';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import type { NodeInfo } from '../core/registry/index.ts';

/** A local Cluster's spec (generation) or annotations (e.g. cluster-disabled) changed. */
export function clusterSpecChanged(a: Cluster, b: Cluster): boolean {
  return a.metadata.generation !== b.metadata.generation || !isDeepStrictEqual(a.metadata.annotations ?? {}, b.metadata.annotations ?? {});
}

/** What a peer's Clusters contribute to our ClustersSynced check changed. */
export function peerClusterChanged(a: Cluster, b: Cluster): boolean {
  return a.spec?.clusterID !== b.spec?.clusterID || a.status?.state !== b.status?.state;
}

/** What cluster metadata is computed from changed (labels, annotation keys, providerID, versions). */
export function nodeMetadataChanged(a: NodeInfo, b: NodeInfo): boolean {
  const pick = (n: NodeInfo) => [
    n.metadata?.labels ?? {},
    Object.keys(n.metadata?.annotations ?? {}).sort(),
    n.spec?.providerID,
    n.status?.nodeInfo?.kubeletVersion,
    n.status?.nodeInfo?.kubeProxyVersion,
  ];
  return !isDeepStrictEqual(pick(a), pick(b));
}

/** A core object's spec, labels or owner changed (someone tampered with it). */
export function coreObjectChanged(a: KubeObject, b: KubeObject): boolean {
  return !isDeepStrictEqual([a['spec'], a.metadata.labels, a.metadata.ownerReferences], [b['spec'], b.metadata.labels, b.metadata.ownerReferences]);
}

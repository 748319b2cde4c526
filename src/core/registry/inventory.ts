// The group as SIG-Multicluster's standard APIs describe it, for tools that read those (multi-
// cluster schedulers, GitOps controllers): this cluster's ID as an About API ClusterProperty
// (KEP-2149), and every member as a ClusterProfile (cluster-inventory-api, KEP-4322) with its
// health, version and properties, as this cluster sees it.
import { isDeepStrictEqual } from 'node:util';
import { CLUSTER_CONDITIONS, CLUSTER_STATES } from '../api/keys.ts';
import { cut } from '../api/text.ts';
import { metaTime } from '../api/time.ts';
import type { Cluster, KubeObject } from '../api/types.ts';

export const CLUSTER_PROPERTY = { group: 'about.k8s.io', version: 'v1alpha1', kind: 'ClusterProperty' } as const;
export const CLUSTER_PROFILE = { group: 'multicluster.x-k8s.io', version: 'v1alpha1', kind: 'ClusterProfile' } as const;
/** KEP-2149's name for the property holding a cluster's ID. */
export const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';
/** KEP-4322's label naming the manager of a ClusterProfile, and our value of it. */
export const CLUSTER_MANAGER_LABEL = 'x-k8s.io/cluster-manager';
export const CLUSTER_MANAGER = 'cluster-registry';

export function clusterIDProperty(clusterID: string): KubeObject {
  return { apiVersion: `${CLUSTER_PROPERTY.group}/${CLUSTER_PROPERTY.version}`, kind: CLUSTER_PROPERTY.kind, metadata: { name: CLUSTER_ID_PROPERTY }, spec: { value: clusterID } };
}

/** What an existing ID property says about ours: nothing to do, or a different ID to report (ours stays the kube-system UID). */
export function clusterIDMismatch(existing: KubeObject, clusterID: string): string | undefined {
  const value = (existing as { spec?: { value?: unknown } }).spec?.value;
  if (value === clusterID) return undefined;
  return `ClusterProperty ${CLUSTER_ID_PROPERTY} holds ${JSON.stringify(String(value)).slice(0, 300)}, but the group knows this cluster by its kube-system UID ${clusterID}, which it keeps`;
}

export interface ClusterProfileStatus {
  conditions: { type: string; status: 'True' | 'False' | 'Unknown'; reason: string; message: string; lastTransitionTime: string }[];
  version?: { kubernetes: string };
  properties: { name: string; value: string }[];
}

/** KEP-4322's condition of a member's health: the one condition ours. */
const HEALTHY = 'ControlPlaneHealthy';

export type ClusterProfile = KubeObject & { spec: { displayName: string; clusterManager: { name: string } }; status?: ClusterProfileStatus };


/**
 * The ClusterProfile of a member in `namespace`, from its Cluster as this cluster's registry keeps
 * it, owned by that Cluster. Conditions and properties that other writers keep in `existing` stay.
 */
export function clusterProfileFor(cluster: Cluster, namespace: string, existing?: ClusterProfileStatus): ClusterProfile {
  const name = cluster.metadata.name ?? '';
  const status = cluster.status;
  const ready = status?.conditions?.find((c) => c.type === CLUSTER_CONDITIONS.ready.type);
  const healthy = status?.state === CLUSTER_STATES.ready;
  const properties = [
    { name: CLUSTER_ID_PROPERTY, value: cluster.spec?.clusterID ?? '' },
    { name: 'cluster-registry.k8s.cisco.com/type', value: status?.type ?? '' },
    { name: 'cluster-registry.k8s.cisco.com/state', value: status?.state ?? '' },
    { name: 'cluster-registry.k8s.cisco.com/provider', value: status?.provider ?? '' },
    { name: 'cluster-registry.k8s.cisco.com/distribution', value: status?.distribution ?? '' },
    { name: 'topology.kubernetes.io/region', value: status?.locality?.region ?? '' },
  ]
    .filter((p) => p.value !== '')
    .map((p) => ({ name: p.name, value: cut(p.value, 1024) }));
  const ownProperties = new Set(properties.map((p) => p.name));
  return {
    apiVersion: `${CLUSTER_PROFILE.group}/${CLUSTER_PROFILE.version}`,
    kind: CLUSTER_PROFILE.kind,
    metadata: {
      name,
      namespace,
      labels: { [CLUSTER_MANAGER_LABEL]: CLUSTER_MANAGER },
      ...(cluster.metadata.uid ? { ownerReferences: [{ apiVersion: cluster.apiVersion ?? '', kind: cluster.kind ?? '', name, uid: cluster.metadata.uid }] } : {}),
    },
    spec: { displayName: name, clusterManager: { name: CLUSTER_MANAGER } },
    status: {
      conditions: [
        ...(existing?.conditions ?? []).filter((c) => c.type !== HEALTHY),
        {
          type: HEALTHY,
          status: status?.state ? (healthy ? 'True' : 'False') : 'Unknown',
          reason: healthy ? 'ClusterReady' : status?.state ? `Cluster${status.state}` : 'NotChecked',
          message: cut(healthy ? 'the cluster-registry health check reaches its API server' : (status?.message ?? ready?.message ?? 'not checked yet'), 32_768),
          lastTransitionTime: ready?.lastTransitionTime ?? metaTime(new Date(0)),
        },
      ],
      ...(status?.version ? { version: { kubernetes: cut(status.version, 64) } } : {}),
      properties: [...(existing?.properties ?? []).filter((p) => !ownProperties.has(p.name)), ...properties],
    },
  };
}

/** Whether the profile as stored differs from the one wanted (its spec, our label, or its status). */
export function clusterProfileChanged(current: ClusterProfile, wanted: ClusterProfile): boolean {
  return (
    !isDeepStrictEqual(current.spec, wanted.spec) ||
    current.metadata.labels?.[CLUSTER_MANAGER_LABEL] !== CLUSTER_MANAGER ||
    !isDeepStrictEqual(current.metadata.ownerReferences ?? [], wanted.metadata.ownerReferences ?? []) ||
    !isDeepStrictEqual(current.status ?? {}, wanted.status)
  );
}

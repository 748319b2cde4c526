// What a peer may never make this cluster hold, whatever a rule says (rules travel between the
// members of a group, so a rule may come from a member that is hostile): copies that would grant
// rights or mint credentials here, copies into the system namespaces, and registry entries that
// do not belong to the cluster they claim to describe. It is a floor, not a fence: a rule from a
// peer still runs with this controller's rights, so those rights are best granted kind by kind.

import { gvkOf } from '../api/gvk.ts';
import { API_GROUP, CLUSTER_SECRET, KINDS, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE } from '../api/keys.ts';
import { isSecret } from '../api/resources.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { ownerOf } from './ownership.ts';

/**
 * Kinds never synced: each grants rights, changes admission, serving or API priority, issues or
 * trusts certificates, decides leaders, or changes how and where pods run. Whole groups where any
 * kind they hold (or will hold) does.
 */
const DENIED_KINDS: ReadonlyMap<string, readonly string[] | 'all'> = new Map<string, readonly string[] | 'all'>([
  // A PersistentVolume can mount any path of a node (hostPath) into a namespace of the peer's choosing.
  ['', ['Node', 'PersistentVolume']],
  ['rbac.authorization.k8s.io', 'all'],
  ['admissionregistration.k8s.io', 'all'],
  ['apiregistration.k8s.io', 'all'],
  ['apiextensions.k8s.io', 'all'],
  ['certificates.k8s.io', 'all'],
  ['coordination.k8s.io', 'all'],
  ['flowcontrol.apiserver.k8s.io', 'all'],
  ['internal.apiserver.k8s.io', 'all'],
  ['authentication.k8s.io', 'all'],
  ['authorization.k8s.io', 'all'],
  ['node.k8s.io', 'all'],
  ['scheduling.k8s.io', 'all'],
  ['storage.k8s.io', ['CSIDriver', 'CSINode', 'VolumeAttachment']],
]);

const DENIED_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease']);

/** Secret types that make the cluster issue or accept credentials. */
const DENIED_SECRET_TYPES: ReadonlySet<string> = new Set([SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, 'bootstrap.kubernetes.io/token']);

/** An object by its place. */
export interface ObjectPlace {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface PolicyFacts {
  readonly localClusterID: string;
  /** The local registry. */
  readonly clusters: readonly Cluster[];
  /** What the controller keeps for itself here (its webhook's serving Secret): never a copy. */
  readonly reserved: readonly ObjectPlace[];
}

export type PolicyVerdict =
  | { readonly allowed: true }
  /** `untilRegistryChanges`: the verdict may change once the registry does (a Cluster arriving). */
  | { readonly allowed: false; readonly reason: string; readonly untilRegistryChanges?: boolean };

const deny = (reason: string, untilRegistryChanges = false): PolicyVerdict => ({ allowed: false, reason, ...(untilRegistryChanges ? { untilRegistryChanges } : {}) });

export function copyPolicy(desired: KubeObject, f: PolicyFacts): PolicyVerdict {
  const gvk = gvkOf(desired);
  const denied = DENIED_KINDS.get(gvk.group);
  if (denied === 'all' || denied?.includes(gvk.kind)) return deny(`${gvk.kind}${gvk.group ? `.${gvk.group}` : ''} objects are never synced (they would grant rights or change the control plane here)`);
  const namespace = desired.metadata.namespace ?? '';
  if (DENIED_NAMESPACES.has(namespace)) return deny(`nothing is synced into namespace ${namespace}`);
  const name = desired.metadata.name ?? '';
  if (f.reserved.some((r) => r.group === gvk.group && r.kind === gvk.kind && r.namespace === namespace && r.name === name)) {
    return deny(`${gvk.kind} ${namespace}/${name} is kept by this controller itself and is never synced over`);
  }
  const owner = ownerOf(desired);
  if (gvk.group === API_GROUP && gvk.kind === KINDS.cluster) {
    // A cluster describes itself: a Cluster is passed on only by (or on behalf of) the cluster it names.
    const cluster = desired as Cluster;
    const id = cluster.spec?.clusterID ?? '';
    if (!id || id !== owner) return deny('a Cluster is synced only when it is owned by the cluster it describes');
    // Credentials belong to the first member whose Cluster names them: another naming them too
    // would make our Cluster of that member read them, or hold up their updates.
    const ref = cluster.spec.authInfo?.secretRef;
    if (ref?.name && f.clusters.some((c) => c.spec?.clusterID !== id && namesCredentials(c, ref))) {
      return deny(`its spec.authInfo.secretRef names ${ref.namespace ?? ''}/${ref.name}, the credentials of another member`, true);
    }
    return { allowed: true };
  }
  if (isSecret(desired)) {
    const type = desired['type'];
    if (typeof type === 'string' && DENIED_SECRET_TYPES.has(type)) return deny(`Secrets of type ${type} are never synced (they would make this cluster issue or accept credentials)`);
    if (type === CLUSTER_SECRET.type) {
      const namers = f.clusters.filter((c) => namesCredentials(c, desired.metadata));
      if (namers.some((c) => c.spec?.clusterID === f.localClusterID)) return deny("this cluster's own reader credentials are never overwritten by a peer");
      // Credentials are those of the cluster whose Cluster names them, and of no one else.
      if (!namers.some((c) => c.spec?.clusterID === owner)) return deny('credentials are synced only for the cluster whose Cluster names them (waiting for that Cluster)', true);
    }
  }
  return { allowed: true };
}

/**
 * Whether `copy` is the Secret a Cluster of this registry (`clusters`) reads the copy's owner
 * with: deleting it would cut this cluster off from the one member that can give it the next.
 */
export function credentialsInUse(copy: KubeObject, clusters: readonly Cluster[]): boolean {
  const owner = ownerOf(copy);
  return isSecret(copy) && clusters.some((c) => c.spec?.clusterID === owner && namesCredentials(c, copy.metadata));
}

/** Whether `cluster` reads its peer's credentials from the Secret at `place`. */
export function namesCredentials(cluster: Cluster, place: { readonly name?: string; readonly namespace?: string }): boolean {
  const ref = cluster.spec?.authInfo?.secretRef;
  return !!ref?.name && ref.name === place.name && (ref.namespace ?? '') === (place.namespace ?? '');
}

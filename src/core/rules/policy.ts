// What a peer may never make this cluster hold, whatever a rule says (rules travel between the
// members of a group, so a rule may come from a member that is hostile): copies that would grant
// rights or mint credentials here, copies into the system namespaces, and registry entries that
// do not belong to the cluster they claim to describe.

import { gvkOf } from '../api/gvk.ts';
import { API_GROUP, CLUSTER_SECRET, KINDS, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE } from '../api/keys.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { ownerOf } from './ownership.ts';

/** Kinds never synced: each grants rights, changes admission or serving, or reaches the control plane. */
const DENIED_KINDS: ReadonlyMap<string, readonly string[] | 'all'> = new Map<string, readonly string[] | 'all'>([
  ['rbac.authorization.k8s.io', 'all'],
  ['admissionregistration.k8s.io', 'all'],
  ['apiregistration.k8s.io', ['APIService']],
  ['apiextensions.k8s.io', ['CustomResourceDefinition']],
  ['certificates.k8s.io', ['CertificateSigningRequest']],
  ['coordination.k8s.io', ['Lease']],
]);

const DENIED_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease']);

/** Secret types that make the cluster issue or accept credentials. */
const DENIED_SECRET_TYPES: ReadonlySet<string> = new Set([SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, 'bootstrap.kubernetes.io/token']);

export interface PolicyFacts {
  readonly localClusterID: string;
  /** The local registry. */
  readonly clusters: readonly Cluster[];
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
  const owner = ownerOf(desired);
  if (gvk.group === API_GROUP && gvk.kind === KINDS.cluster) {
    // A cluster describes itself: a Cluster is passed on only by (or on behalf of) the cluster it names.
    const id = (desired as Cluster).spec?.clusterID ?? '';
    if (!id || id !== owner) return deny('a Cluster is synced only when it is owned by the cluster it describes');
    return { allowed: true };
  }
  if (gvk.group === '' && gvk.kind === 'Secret') {
    const type = desired['type'];
    if (typeof type === 'string' && DENIED_SECRET_TYPES.has(type)) return deny(`Secrets of type ${type} are never synced (they would make this cluster issue or accept credentials)`);
    if (type === CLUSTER_SECRET.type) {
      const names = (c: Cluster): boolean => c.spec?.authInfo?.secretRef?.name === desired.metadata.name && (c.spec?.authInfo?.secretRef?.namespace ?? '') === namespace;
      if (f.clusters.some((c) => c.spec?.clusterID === f.localClusterID && names(c))) return deny("this cluster's own reader credentials are never overwritten by a peer");
      // Credentials are those of the cluster whose Cluster names them, and of no one else.
      if (!f.clusters.some((c) => c.spec?.clusterID === owner && names(c))) return deny("credentials are synced only for the cluster whose Cluster names them (waiting for that Cluster)", true);
    }
  }
  return { allowed: true };
}

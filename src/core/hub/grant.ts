// What `cluster-registry hub grant` gives a spoke on its hub, decided before anything is written.
// A spoke is another cluster: it gets the least its sync needs, where the hub's objects for it
// live, and nothing that reaches the hub's own machinery.
//
// * Custom resources only. A patch right on Kubernetes' own kinds reaches the hub itself:
//   namespaced, they are its workloads, their configuration and their traffic (patching a
//   Deployment, Pod, CronJob, ConfigMap or ServiceAccount runs code on the hub, patching a
//   Service or EndpointSlice redirects its traffic); cluster-scoped, they are settings of the
//   whole hub (namespaces, storage and ingress classes, priorities, ...).
// * Namespaced kinds: a Role and RoleBinding in each namespace named (never a system namespace,
//   nor the hub's controller namespace), with read and patch of the kind, patch of its status,
//   and get and update of the Secrets named (by name: never a list of Secrets).
// * Cluster-scoped kinds: a ClusterRole for that one kind.
// * Kinds that grant rights or change the control plane are refused, as the sync refuses them; so
//   are the registry's own kinds, and Secrets as the kind (the grant would list every Secret of
//   the namespaces: Secrets go back to the hub by name instead).
// * Always: get of the kube-system namespace (the hub's identity check) and the creation of
//   tokens for the spoke's own ServiceAccount only (so the spoke renews its token itself).
import { API_GROUP, HUB_ANNOTATIONS, HUB_CREDENTIALS, WELL_KNOWN } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { isKubernetesGroup, kindClass, SYSTEM_NAMESPACES } from '../trust/index.ts';
import { isNamespaceName } from './names.ts';

export interface GrantRequest {
  readonly spoke: string;
  /** The spoke's cluster ID, recorded so that `leave` finds the grant. */
  readonly spokeClusterID: string;
  /** The hub's controller namespace: where the spoke's ServiceAccount lives. */
  readonly controllerNamespace: string;
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string; readonly kind: string; readonly namespaced: boolean };
  /** Hub namespaces the spoke's objects live in (namespaced kinds). */
  readonly namespaces: readonly string[];
  /** Hub Secrets (with their suffix) the spoke may update. */
  readonly secrets: readonly string[];
}

export interface GrantPlan {
  readonly account: string;
  /** Applied in this order. */
  readonly objects: readonly KubeObject[];
  /** What an earlier grant of the same kind made that this one replaces: a cluster-wide role and binding, a token that never expired. */
  readonly obsolete: { readonly clusterRole?: string; readonly tokenSecret: string };
}

const RBAC = 'rbac.authorization.k8s.io';
const SPOKE_NAME = /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/;

export function spokeAccount(spoke: string): string {
  return `cluster-registry-spoke-${spoke}`;
}

/** The labels on everything a grant makes for a spoke: how `hub revoke` finds it all. */
export function grantLabels(spoke: string): Record<string, string> {
  return { 'app.kubernetes.io/managed-by': 'cluster-registry', [HUB_CREDENTIALS.spokeLabel]: spoke };
}

/** Why the grant is refused, or undefined when it may be made. */
export function grantRefusal(r: GrantRequest): string | undefined {
  if (!SPOKE_NAME.test(r.spoke)) return `--spoke "${r.spoke}" must be a DNS label of at most 40 characters`;
  const { group, kind, namespaced } = r.resource;
  if (group === API_GROUP) return `${kind}.${group} is the registry's own kind: it is never hub-synced`;
  const kindOf = kindClass(group, kind, 'hub');
  if (!kindOf.synced) return `${kind}${group ? `.${group}` : ''} objects are never synced (${kindOf.reason}); a spoke is never granted them on its hub`;
  if (group === '' && kind === 'Secret') return 'Secrets as the kind would let the spoke list every Secret of the namespaces; name the Secrets it sends back with --secret instead';
  if (isKubernetesGroup(group)) {
    const what = namespaced ? "a kind of Kubernetes itself, the hub's workloads, their configuration or their traffic (patching one runs code on the hub or redirects its traffic)" : 'a cluster-scoped kind of Kubernetes itself, a setting of the whole hub';
    return `${kind}${group ? `.${group}` : ''} is ${what}: a spoke may not patch it; hub grant gives custom resources only`;
  }
  if (!namespaced) {
    if (r.namespaces.length > 0) return `${kind} is cluster-scoped: --hub-namespace does not apply`;
    if (r.secrets.length > 0) return `${kind} is cluster-scoped: its objects have no namespace for --secret to name Secrets in`;
    return undefined;
  }
  if (r.namespaces.length === 0) return `${kind} is namespaced: name the hub namespaces the spoke's objects live in with --hub-namespace`;
  for (const ns of r.namespaces) {
    if (!isNamespaceName(ns)) return `--hub-namespace "${ns}" is not a namespace name`;
    if (SYSTEM_NAMESPACES.has(ns)) return `--hub-namespace ${ns} is a system namespace: a spoke is never granted anything there`;
    if (ns === r.controllerNamespace) return `--hub-namespace ${ns} is the hub's controller namespace: a spoke is never granted anything there`;
  }
  return undefined;
}

/** The ServiceAccount, roles and bindings of a grant that `grantRefusal` allows. */
export function grantPlan(r: GrantRequest): GrantPlan {
  const account = spokeAccount(r.spoke);
  const labels = grantLabels(r.spoke);
  const { group, resource, namespaced } = r.resource;
  const kindRole = `${account}-${resource}${group ? `.${group}` : ''}`;
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace: r.controllerNamespace }];
  const role = (kind: 'Role' | 'ClusterRole', name: string, namespace: string | undefined, rules: unknown[]): KubeObject[] => [
    { apiVersion: `${RBAC}/v1`, kind, metadata: { name, ...(namespace ? { namespace } : {}), labels }, rules },
    { apiVersion: `${RBAC}/v1`, kind: `${kind}Binding`, metadata: { name, ...(namespace ? { namespace } : {}), labels }, roleRef: { apiGroup: RBAC, kind, name }, subjects },
  ];
  const kindRules = [
    { apiGroups: [group], resources: [resource], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: [group], resources: [`${resource}/status`], verbs: ['patch'] },
    ...(r.secrets.length > 0 ? [{ apiGroups: [''], resources: ['secrets'], resourceNames: [...r.secrets], verbs: ['get', 'update'] }] : []),
  ];
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace: r.controllerNamespace, labels, annotations: { [HUB_ANNOTATIONS.spokeClusterID]: r.spokeClusterID } } },
    ...role('ClusterRole', `${account}-identity`, undefined, [{ apiGroups: [''], resources: ['namespaces'], resourceNames: [WELL_KNOWN.kubeSystemNamespace], verbs: ['get'] }]),
    ...role('Role', `${account}-token`, r.controllerNamespace, [{ apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: [account], verbs: ['create'] }]),
    ...(namespaced ? r.namespaces.flatMap((ns) => role('Role', kindRole, ns, kindRules)) : role('ClusterRole', kindRole, undefined, kindRules)),
  ];
  return { account, objects, obsolete: { ...(namespaced ? { clusterRole: kindRole } : {}), tokenSecret: `${account}-token` } };
}

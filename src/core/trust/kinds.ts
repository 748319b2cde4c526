// Which kinds a peer's rule or a hub may make this cluster hold. Rules may sync any kind, so
// kinds are a refusal table; but every kind Kubernetes itself serves is classified here, one by
// one (a test lists what a real API server serves and fails on any kind missing), and so are the
// kinds of the groups Kubernetes' SIGs publish as custom resources. A kind of a Kubernetes group
// (no dot, or under k8s.io or kubernetes.io) that this table does not know yet, a newer
// Kubernetes' say, is refused until it is classified. Kinds of other groups (custom resources)
// are synced. Our own kinds are an allow-list by channel.

import { API_GROUP, KINDS } from '../api/keys.ts';

/** How an object reaches this cluster: which kind of rule or sync delivers it. */
export type Channel =
  /** The registry's own rules (core and built-in): Clusters and their credentials Secrets. */
  | 'registry'
  /** The core rule that passes ResourceSyncRules on. */
  | 'rules'
  /** Any other ResourceSyncRule. */
  | 'rule'
  /** A HubSyncRule, from its hub. */
  | 'hub';

export type KindClass = { readonly synced: true } | { readonly synced: false; readonly reason: string };

const SYNCED: KindClass = { synced: true };
const refused = (reason: string): KindClass => ({ synced: false, reason });

const WHY = {
  rights: refused('they would grant rights here'),
  admission: refused('they would change what this API server admits or serves'),
  credentials: refused('they would make this cluster issue or trust credentials'),
  leaders: refused('they would decide leaders and identities of this control plane'),
  pods: refused('they would change how and where pods run here'),
  nodes: refused('they describe this cluster’s own machines and storage'),
  networking: refused('they would change how this cluster allocates addresses or routes traffic for every namespace'),
  storage: refused('they would change how this cluster provides storage for every namespace'),
  reports: refused('they report what happened here, and a copy would be a forged report'),
  requests: refused('they are requests or views, not stored objects'),
  cluster: refused('they would change settings of this whole cluster'),
} as const;

/**
 * Every built-in group of Kubernetes, kind by kind. A whole group maps to one class when every
 * kind it has (or will have) belongs there.
 */
const BUILTIN: ReadonlyMap<string, KindClass | ReadonlyMap<string, KindClass>> = new Map<string, KindClass | ReadonlyMap<string, KindClass>>([
  [
    '',
    new Map([
      ['ConfigMap', SYNCED],
      // The endpoints of the Service of that name: a copy would receive that Service's traffic here.
      ['Endpoints', WHY.networking],
      ['LimitRange', SYNCED],
      ['Namespace', SYNCED],
      ['PersistentVolumeClaim', SYNCED],
      ['Pod', SYNCED],
      ['PodTemplate', SYNCED],
      ['ReplicationController', SYNCED],
      ['ResourceQuota', SYNCED],
      ['Secret', SYNCED],
      ['Service', SYNCED],
      ['ServiceAccount', SYNCED],
      ['Binding', WHY.requests],
      ['ComponentStatus', WHY.requests],
      ['Event', WHY.reports],
      ['Node', WHY.nodes],
      // A PersistentVolume can mount any path of a node (hostPath) into a namespace of the peer's choosing.
      ['PersistentVolume', WHY.nodes],
    ]),
  ],
  ['apps', SYNCED],
  ['batch', SYNCED],
  ['autoscaling', SYNCED],
  ['policy', SYNCED],
  ['discovery.k8s.io', SYNCED],
  [
    'networking.k8s.io',
    new Map([
      ['Ingress', SYNCED],
      ['NetworkPolicy', SYNCED],
      // The default class takes every Ingress that names none.
      ['IngressClass', WHY.networking],
      ['IPAddress', WHY.networking],
      ['ServiceCIDR', WHY.networking],
    ]),
  ],
  [
    'resource.k8s.io',
    new Map([
      ['ResourceClaim', SYNCED],
      ['ResourceClaimTemplate', SYNCED],
      ['DeviceClass', WHY.pods],
      ['ResourceSlice', WHY.nodes],
      ['DeviceTaintRule', WHY.pods],
      ['ResourcePoolStatusRequest', WHY.requests],
    ]),
  ],
  ['storage.k8s.io', WHY.storage],
  ['storagemigration.k8s.io', WHY.storage],
  ['events.k8s.io', WHY.reports],
  ['rbac.authorization.k8s.io', WHY.rights],
  ['admissionregistration.k8s.io', WHY.admission],
  ['apiregistration.k8s.io', WHY.admission],
  ['apiextensions.k8s.io', WHY.admission],
  ['flowcontrol.apiserver.k8s.io', WHY.admission],
  ['internal.apiserver.k8s.io', WHY.admission],
  ['certificates.k8s.io', WHY.credentials],
  ['authentication.k8s.io', WHY.requests],
  ['authorization.k8s.io', WHY.requests],
  ['coordination.k8s.io', WHY.leaders],
  ['node.k8s.io', WHY.pods],
  ['scheduling.k8s.io', WHY.pods],
  ['metrics.k8s.io', WHY.requests],
  // Groups of Kubernetes' SIGs, served as custom resources where installed.
  [
    'gateway.networking.k8s.io',
    new Map([
      ['Gateway', SYNCED],
      ['HTTPRoute', SYNCED],
      ['GRPCRoute', SYNCED],
      ['TCPRoute', SYNCED],
      ['TLSRoute', SYNCED],
      ['UDPRoute', SYNCED],
      ['ReferenceGrant', SYNCED],
      ['BackendTLSPolicy', SYNCED],
      ['GatewayClass', WHY.networking],
    ]),
  ],
  [
    'snapshot.storage.k8s.io',
    new Map([
      ['VolumeSnapshot', SYNCED],
      ['VolumeSnapshotClass', WHY.storage],
      ['VolumeSnapshotContent', WHY.nodes],
    ]),
  ],
  ['policy.networking.k8s.io', WHY.networking],
  // The About API says who this cluster is: its cluster ID among them.
  ['about.k8s.io', refused('they say who this cluster is')],
]);

/** Whether a group is Kubernetes' own, or one of its SIGs' (custom resources of others have a dotted group elsewhere). */
export function isKubernetesGroup(group: string): boolean {
  return !group.includes('.') || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
}

/** Our own kinds: only the registry's and the rules' own channels carry them, and only those. */
const OURS: ReadonlyMap<string, readonly Channel[]> = new Map([
  [KINDS.cluster, ['registry']],
  [KINDS.resourceSyncRule, ['rules']],
  // What a cluster offers is its admin's word alone; a copy would make it offer what it does not.
  [KINDS.clusterFeature, []],
  // A hub is chosen on this cluster; a copy would make it sync from a hub of someone else's choosing.
  [KINDS.hubSyncRule, []],
]);

/** The class this table gives a kind of a Kubernetes group, or undefined when it has none. */
export function builtinKindClass(group: string, kind: string): KindClass | undefined {
  const entry = BUILTIN.get(group);
  return entry instanceof Map ? (entry as ReadonlyMap<string, KindClass>).get(kind) : (entry as KindClass | undefined);
}

/** The class of any kind, as delivered through `channel`. */
export function kindClass(group: string, kind: string, channel: Channel): KindClass {
  if (group === API_GROUP) {
    const channels = OURS.get(kind);
    if (channels === undefined) return refused(`${kind}.${group} is not a kind of this registry`);
    if (channels.includes(channel)) return SYNCED;
    return channels.length === 0
      ? refused(`${kind} objects are never synced: each cluster makes its own`)
      : refused(`${kind} objects are passed on only by the registry's own rules`);
  }
  if (!isKubernetesGroup(group)) return SYNCED;
  return builtinKindClass(group, kind) ?? refused(`${kind}${group ? `.${group}` : ''} is a kind of Kubernetes this controller has not classified yet, so it is never synced`);
}

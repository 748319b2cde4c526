// `cluster-registry hub grant`: lets a spoke sync one kind from its hub. On the hub, a
// ServiceAccount for the spoke with exactly what the sync needs of that kind (read it, patch it
// and its status for the status and generation echo, get and update the listed Secrets, and read
// the kube-system namespace that proves the hub's identity); on the spoke, the Secret with a
// kubeconfig for it that HubSyncRules name. The endpoint and CA are those the group reaches the
// hub by (its reader kubeconfig, with its Cluster's endpoint for the network). Re-running it
// converges and adds kinds.
import { NAMESPACES, SECRETS, secretText, type Secret } from '../core/api/resources.ts';
import { CLUSTERS } from '../core/api/resources.ts';
import { ANNOTATIONS, CLUSTER_SECRET, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, WELL_KNOWN } from '../core/api/keys.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { defaultCredentialsSecret } from '../core/hub/index.ts';
import { pickEndpoint, readerKubeconfig } from '../core/registry/index.ts';
import { Discovery, sleep } from '../kube/index.ts';
import { selectPeer } from '../kube/kubeconfig.ts';
import { applyObjects } from '../registry/install.ts';
import type { JoinSide, OperationOptions } from './join.ts';

export interface HubGrantOptions extends OperationOptions {
  /** The hub's Cluster name in the group. */
  readonly hub: string;
  /** The spoke's name, for the hub's ServiceAccount and roles. */
  readonly spoke: string;
  readonly gvk: { group: string; version: string; kind: string };
  /** Hub Secrets (with their suffix) the spoke may update. */
  readonly secrets: readonly string[];
  /** Which of the hub Cluster's endpoints the spoke uses (the controller's --network-name). */
  readonly network: string;
  readonly timeoutMs: number;
}

/** Grants and hands over; resolves with the name of the spoke's credentials Secret. */
export async function hubGrant(hub: JoinSide, spoke: JoinSide, o: HubGrantOptions): Promise<string> {
  // It names a ServiceAccount and labels: a DNS label.
  if (!/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/.test(o.spoke)) throw new Error(`--spoke "${o.spoke}" must be a DNS label of at most 40 characters`);
  const call = o.signal ? { signal: o.signal } : {};
  const cluster = await hub.rest.get<Cluster>(CLUSTERS, undefined, o.hub, call).catch((err: unknown) => {
    throw new Error(`${hub.label} has no Cluster ${o.hub}: ${err instanceof Error ? err.message : String(err)}`);
  });
  // Where and how the group reaches the hub: its reader kubeconfig, with the endpoint its Cluster gives for the network.
  const ref = cluster.spec.authInfo?.secretRef;
  const reader = ref?.name && ref.namespace ? await hub.rest.getIfExists<Secret>(SECRETS, ref.namespace, ref.name, call) : undefined;
  const readerKubeconfigText = reader && secretText(reader, CLUSTER_SECRET.kubeconfigKey);
  if (!readerKubeconfigText) throw new Error(`Cluster ${o.hub} names no reader Secret with a kubeconfig (is its controller running?)`);
  const endpoint = pickEndpoint(cluster, o.network);
  const reach = selectPeer(readerKubeconfigText, {
    ...(endpoint?.serverAddress ? { server: { address: endpoint.serverAddress, field: `Cluster ${o.hub} endpoint` } } : {}),
    ...(endpoint?.caBundle ? { caData: endpoint.caBundle } : {}),
  });
  const ca = reach.cluster.caData ? Buffer.from(reach.cluster.caData, 'base64').toString('utf8') : '';
  if (!ca) throw new Error(`Cluster ${o.hub} publishes no CA for network ${o.network}`);
  const resource = await new Discovery(hub.rest).resourceFor(o.gvk);
  const account = `cluster-registry-spoke-${o.spoke}`;
  const role = `${account}-${resource.resource}${resource.group ? `.${resource.group}` : ''}`;
  o.progress(`granting ${account} on ${hub.label} what syncing ${resource.resource} needs`);
  const labels = { 'app.kubernetes.io/managed-by': 'cluster-registry', 'cluster-registry.k8s.cisco.com/spoke': o.spoke };
  const rules = [
    { apiGroups: [resource.group], resources: [resource.resource], verbs: ['get', 'list', 'watch', 'patch'] },
    { apiGroups: [resource.group], resources: [`${resource.resource}/status`], verbs: ['patch'] },
    { apiGroups: [''], resources: [NAMESPACES.resource], resourceNames: [WELL_KNOWN.kubeSystemNamespace], verbs: ['get'] },
    ...(o.secrets.length > 0 ? [{ apiGroups: [''], resources: [SECRETS.resource], resourceNames: [...o.secrets], verbs: ['get', 'update'] }] : []),
  ];
  const tokenSecret = `${account}-token`;
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace: o.namespace, labels } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role, labels }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: role, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace: o.namespace }],
    },
    { apiVersion: 'v1', kind: 'Secret', type: SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, metadata: { name: tokenSecret, namespace: o.namespace, labels, annotations: { [ANNOTATIONS.serviceAccountName]: account } } },
  ];
  await applyObjects(hub.rest, objects, o.signal);
  const token = await waitForToken(hub, o.namespace, tokenSecret, o);
  const name = defaultCredentialsSecret(o.hub);
  o.progress(`handing ${spoke.label} the credentials for ${o.hub} (Secret ${o.namespace}/${name})`);
  const kubeconfig = readerKubeconfig({ clusterName: o.hub, userName: account, server: reach.server, caPem: ca, token });
  await applyObjects(spoke.rest, [{ apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name, namespace: o.namespace, labels }, data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') } }], o.signal);
  return name;
}

/** The token the hub's token controller puts into the ServiceAccount's token Secret. */
async function waitForToken(hub: JoinSide, namespace: string, name: string, o: HubGrantOptions): Promise<string> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const secret = await hub.rest.getIfExists<Secret>(SECRETS, namespace, name, o.signal ? { signal: o.signal } : {});
    const token = secret && secretText(secret, 'token');
    if (token) return token;
    if (Date.now() > deadline) throw new Error(`${hub.label} did not fill the token of Secret ${namespace}/${name} in time (is its token controller running?)`);
    await sleep(500, o.signal);
  }
}

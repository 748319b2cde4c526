// `cluster-registry hub grant` and `hub revoke`: a spoke's rights on its hub. The grant gives the
// spoke's ServiceAccount on the hub what the sync needs of one kind, in the hub namespaces named
// (core/hub/grant.ts decides what, and refuses what a spoke must never get), and hands the spoke
// a kubeconfig with a TokenRequest token of bounded lifetime, which the spoke's controller renews
// through the grant before it lapses. The endpoint and CA are those the group reaches the hub by
// (its reader kubeconfig, with its Cluster's endpoint for the network). Re-running it converges,
// adds kinds and namespaces, and retires what an earlier grant made cluster-wide. Revoking
// deletes the ServiceAccount (every token of it dies with it) and everything granted to it.
//
// The spoke keeps the kubeconfig in the hub credentials namespace, never in the controller
// namespace, whose Secrets every member reads with its reader token. Credentials an earlier grant
// left there are not moved but replaced: any member may have read that token and minted more with
// it, so the spoke's ServiceAccount on the hub is made anew first (every token of it dies).
import { CLUSTERS, NAMESPACES, SECRETS, secretText, type Secret } from '../core/api/resources.ts';
import { CLUSTER_SECRET, HUB_ANNOTATIONS, HUB_CREDENTIALS } from '../core/api/keys.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { defaultCredentialsSecret, grantLabels, grantPlan, grantRefusal, misplacedCredentials, spokeAccount, tokenRequest, tokenRequestPath } from '../core/hub/index.ts';
import { credentialsRef } from '../core/trust/index.ts';
import { pickEndpoint, readerKubeconfig } from '../core/registry/index.ts';
import { Discovery, isNotFound, sleep, type ResourceRef, type RestClient } from '../kube/index.ts';
import { selectPeer } from '../kube/kubeconfig.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { tokenOf } from '../registry/reader-credentials.ts';
import { applyObjects } from '../registry/install.ts';
import type { JoinSide, OperationOptions } from './join.ts';

const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const RBAC = (resource: string): ResourceRef => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource });
const TOKEN_REVIEWS: ResourceRef = { group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews' };
/** The API server refuses shorter TokenRequests. */
const MIN_TOKEN_SECONDS = 600;

/** Where the spoke's side of hub-and-spoke keeps its credentials. */
export interface HubCredentialsPlace {
  /** The spoke's hub credentials namespace (its controller's --hub-credentials-namespace). */
  readonly credentialsNamespace: string;
}

export interface HubGrantOptions extends OperationOptions, HubCredentialsPlace {
  /** The hub's Cluster name in the group. */
  readonly hub: string;
  /** The spoke's name, for the hub's ServiceAccount and roles. */
  readonly spoke: string;
  readonly gvk: { group: string; version: string; kind: string };
  /** Hub namespaces the spoke's objects live in (namespaced kinds). */
  readonly hubNamespaces: readonly string[];
  /** Hub Secrets (with their suffix) the spoke may update. */
  readonly secrets: readonly string[];
  /** Which of the hub Cluster's endpoints the spoke uses (the controller's --network-name). */
  readonly network: string;
  /** Lifetime of the hub token; the spoke renews it halfway through. */
  readonly tokenSeconds: number;
}

/** Grants and hands over; resolves with the name of the spoke's credentials Secret. */
export async function hubGrant(hub: JoinSide, spoke: JoinSide, o: HubGrantOptions): Promise<string> {
  if (o.tokenSeconds < MIN_TOKEN_SECONDS) throw new Error(`--token-ttl must be at least ${MIN_TOKEN_SECONDS / 60}m (the API server refuses shorter tokens)`);
  const call = o.signal ? { signal: o.signal } : {};
  // Made by the chart with the controller's access there: without it the controller could not read what is written.
  if (!(await spoke.rest.getIfExists(NAMESPACES, undefined, o.credentialsNamespace, call))) {
    throw new Error(`${spoke.label} has no namespace ${o.credentialsNamespace} for hub credentials: install or upgrade the chart, which makes it and gives the controller access there (a controller run with --hub-credentials-namespace: pass the same here)`);
  }
  const cluster = await hub.rest.get<Cluster>(CLUSTERS, undefined, o.hub, call).catch((err: unknown) => {
    throw new Error(`${hub.label} has no Cluster ${o.hub}: ${err instanceof Error ? err.message : String(err)}`);
  });
  const hubID = await kubeSystemUID(hub.rest, o.signal);
  if (cluster.spec.clusterID !== hubID) throw new Error(`Cluster ${o.hub} describes another cluster than ${hub.label} (its clusterID is not the kube-system UID there)`);
  // Where and how the group reaches the hub: its reader kubeconfig, with the endpoint its Cluster gives for the network.
  const ref = credentialsRef(cluster, o.namespace);
  if ('problem' in ref) throw new Error(`Cluster ${o.hub}: ${ref.problem}`);
  const reader = await hub.rest.getIfExists<Secret>(SECRETS, ref.namespace, ref.name, call);
  const readerKubeconfigText = reader?.type === CLUSTER_SECRET.type ? secretText(reader, CLUSTER_SECRET.kubeconfigKey) : undefined;
  if (!readerKubeconfigText) throw new Error(`Cluster ${o.hub} names no reader Secret in ${o.namespace} with a kubeconfig (is its controller running?)`);
  const endpoint = pickEndpoint(cluster, o.network);
  const reach = selectPeer(readerKubeconfigText, {
    ...(endpoint?.serverAddress ? { server: { address: endpoint.serverAddress, field: `Cluster ${o.hub} endpoint` } } : {}),
    ...(endpoint?.caBundle ? { caData: endpoint.caBundle } : {}),
  });
  const ca = reach.cluster.caData ? Buffer.from(reach.cluster.caData, 'base64').toString('utf8') : '';
  if (!ca) throw new Error(`Cluster ${o.hub} publishes no CA for network ${o.network}`);
  const resource = await new Discovery(hub.rest).resourceFor(o.gvk);
  const request = { spoke: o.spoke, spokeClusterID: await kubeSystemUID(spoke.rest, o.signal), controllerNamespace: o.namespace, resource, namespaces: o.hubNamespaces, secrets: o.secrets };
  const refused = grantRefusal(request);
  if (refused) throw new Error(refused);
  const plan = grantPlan(request);
  const name = defaultCredentialsSecret(o.hub);
  const earlier = await spoke.rest.getIfExists<Secret>(SECRETS, o.namespace, name, call);
  const exposed = earlier && misplacedCredentials(earlier, o.credentialsNamespace) ? earlier : undefined;
  if (exposed && (await deleteIfExists(hub.rest, SERVICE_ACCOUNTS, o.namespace, plan.account, o))) {
    o.progress(`${spoke.label} kept its hub credentials in ${o.namespace}, where every member reads Secrets: ${plan.account} on ${hub.label} is made anew, so every token it was given dies`);
  }
  const where = resource.namespaced ? `in namespace(s) ${o.hubNamespaces.join(', ')}` : 'cluster-wide (a custom cluster-scoped kind)';
  o.progress(`granting ${plan.account} on ${hub.label} what syncing ${resource.resource} needs, ${where}`);
  await applyObjects(hub.rest, plan.objects, o.signal);
  // What an earlier grant made for this kind cluster-wide, and its token that never expired.
  if (plan.obsolete.clusterRole) {
    for (const r of [RBAC('clusterrolebindings'), RBAC('clusterroles')]) await deleteIfExists(hub.rest, r, undefined, plan.obsolete.clusterRole, o);
  }
  await deleteIfExists(hub.rest, SECRETS, o.namespace, plan.obsolete.tokenSecret, o);
  const minted = await hub.rest.json<{ status?: { token?: string } }>({ method: 'POST', path: tokenRequestPath({ namespace: o.namespace, serviceAccount: plan.account }), body: tokenRequest(o.tokenSeconds), ...call });
  const token = minted.status?.token;
  if (!token) throw new Error(`${hub.label} issued no token for ${plan.account}`);
  o.progress(`handing ${spoke.label} the credentials for ${o.hub} (Secret ${o.credentialsNamespace}/${name}, a token for ${Math.round(o.tokenSeconds / 60)}m, renewed by its controller)`);
  const kubeconfig = readerKubeconfig({ clusterName: o.hub, userName: plan.account, server: reach.server, caPem: ca, token });
  // A Secret's type cannot change: one of another type under the name is replaced.
  const existing = await spoke.rest.getIfExists<Secret>(SECRETS, o.credentialsNamespace, name, call);
  if (existing && existing.type !== HUB_CREDENTIALS.type) await spoke.rest.delete(SECRETS, o.credentialsNamespace, name, { ...call, preconditions: { uid: existing.metadata.uid } });
  const secret: Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: HUB_CREDENTIALS.type,
    metadata: { name, namespace: o.credentialsNamespace, labels: grantLabels(o.spoke), annotations: { [HUB_ANNOTATIONS.hubClusterID]: hubID } },
    data: { [HUB_CREDENTIALS.kubeconfigKey]: Buffer.from(kubeconfig).toString('base64') },
  };
  await applyObjects(spoke.rest, [secret], o.signal);
  if (exposed) {
    await spoke.rest.delete(SECRETS, o.namespace, name, { ...call, preconditions: { uid: exposed.metadata.uid } }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    o.progress(`${spoke.label}: deleted Secret ${o.namespace}/${name}, the credentials an earlier grant kept where members read them`);
  }
  return name;
}

export interface HubRevokeOptions extends OperationOptions, HubCredentialsPlace {
  readonly spoke: string;
  /** The hub's Cluster name: the spoke's credentials Secret for it is deleted too (needs `spoke`). */
  readonly hub?: string;
  readonly timeoutMs: number;
}

/** The hub credentials `holder` keeps under `name`: in their namespace, and where an earlier grant left them. */
async function heldCredentials(holder: JoinSide, name: string, o: OperationOptions & HubCredentialsPlace): Promise<Secret[]> {
  const call = o.signal ? { signal: o.signal } : {};
  const held = await holder.rest.getIfExists<Secret>(SECRETS, o.credentialsNamespace, name, call);
  const earlier = await holder.rest.getIfExists<Secret>(SECRETS, o.namespace, name, call);
  return [...(held?.type === HUB_CREDENTIALS.type ? [held] : []), ...(earlier && misplacedCredentials(earlier, o.credentialsNamespace) ? [earlier] : [])];
}

/**
 * Revokes a spoke's grant on `hub`: its ServiceAccount (with it every token it was ever given),
 * and the roles, bindings and legacy token Secret made for it. With `spoke` and `o.hub`, the
 * spoke's credentials Secret for that hub goes too, once the hub refuses the token it held.
 */
export async function hubRevoke(hub: JoinSide, spoke: JoinSide | undefined, o: HubRevokeOptions): Promise<void> {
  const call = o.signal ? { signal: o.signal } : {};
  const name = o.hub && defaultCredentialsSecret(o.hub);
  const credentials = spoke && name ? await heldCredentials(spoke, name, o) : [];
  const gone = await revokeSpoke(hub, o.spoke, o);
  o.progress(`${hub.label}: ${gone.length > 0 ? `deleted ${gone.join(', ')}` : `held no grant for spoke ${o.spoke}`}`);
  for (const c of credentials) {
    const token = tokenOf(secretText(c, HUB_CREDENTIALS.kubeconfigKey));
    if (token) await tokenRefused(hub, token, o);
  }
  for (const c of credentials) {
    const where = `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;
    await spoke?.rest.delete(SECRETS, c.metadata.namespace, c.metadata.name ?? '', { ...call, preconditions: { uid: c.metadata.uid } }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
    o.progress(`${spoke?.label ?? 'spoke'}: deleted Secret ${where}`);
  }
}

/** Everything a grant made on `hub` for the spoke named `spoke`; says what went. */
async function revokeSpoke(hub: JoinSide, spoke: string, o: OperationOptions): Promise<string[]> {
  const call = o.signal ? { signal: o.signal } : {};
  const labelSelector = Object.entries(grantLabels(spoke))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const gone: string[] = [];
  const account = spokeAccount(spoke);
  // The ServiceAccount first: its tokens die with it, whatever else is left.
  if (await deleteIfExists(hub.rest, SERVICE_ACCOUNTS, o.namespace, account, o)) gone.push(`ServiceAccount ${o.namespace}/${account}`);
  for (const [kind, ref] of [['RoleBinding', RBAC('rolebindings')], ['Role', RBAC('roles')], ['ClusterRoleBinding', RBAC('clusterrolebindings')], ['ClusterRole', RBAC('clusterroles')], ['Secret', SECRETS]] as const) {
    for (const obj of (await hub.rest.list(ref, { ...call, labelSelector })).items) {
      const ns = obj.metadata.namespace;
      if (await deleteIfExists(hub.rest, ref, ns, obj.metadata.name ?? '', o)) gone.push(`${kind} ${ns ? `${ns}/` : ''}${obj.metadata.name ?? ''}`);
    }
  }
  return gone;
}

/** Revokes on `hub` the grants of the spokes whose cluster IDs are given (as `hub grant` recorded them); says what went. */
export async function revokeGrantsBetween(hub: JoinSide, spokeIDs: ReadonlySet<string>, o: OperationOptions): Promise<string[]> {
  const call = o.signal ? { signal: o.signal } : {};
  const accounts = (await hub.rest.list(SERVICE_ACCOUNTS, { ...call, namespace: o.namespace, labelSelector: HUB_CREDENTIALS.spokeLabel })).items;
  const gone: string[] = [];
  for (const sa of accounts) {
    const spoke = sa.metadata.labels?.[HUB_CREDENTIALS.spokeLabel] ?? '';
    if (spokeIDs.has(sa.metadata.annotations?.[HUB_ANNOTATIONS.spokeClusterID] ?? '') && sa.metadata.name === spokeAccount(spoke)) gone.push(...(await revokeSpoke(hub, spoke, o)));
  }
  return gone;
}

/**
 * Deletes the hub credentials Secrets `holder` keeps for the hubs whose IDs are given (as `hub
 * grant` recorded them), in their namespace and where an earlier grant left them; says what went.
 */
export async function dropHubCredentials(holder: JoinSide, hubIDs: ReadonlySet<string>, o: OperationOptions & HubCredentialsPlace): Promise<string[]> {
  const call = o.signal ? { signal: o.signal } : {};
  const gone: string[] = [];
  for (const namespace of new Set([o.credentialsNamespace, o.namespace])) {
    const secrets = (await holder.rest.list<Secret>(SECRETS, { ...call, namespace, fieldSelector: `type=${HUB_CREDENTIALS.type}` })).items;
    for (const s of secrets.filter((s) => hubIDs.has(s.metadata.annotations?.[HUB_ANNOTATIONS.hubClusterID] ?? ''))) {
      if (await deleteIfExists(holder.rest, SECRETS, namespace, s.metadata.name ?? '', o)) gone.push(`Secret ${namespace}/${s.metadata.name ?? ''}`);
    }
  }
  return gone;
}

async function deleteIfExists(rest: RestClient, ref: ResourceRef, namespace: string | undefined, name: string, o: OperationOptions): Promise<boolean> {
  try {
    await rest.delete(ref, namespace, name, o.signal ? { signal: o.signal } : {});
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** Waits until the hub refuses `token` (API servers cache a token's review a few seconds). */
async function tokenRefused(hub: JoinSide, token: string, o: HubRevokeOptions): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const review = await hub.rest.create<KubeObject & { status?: { authenticated?: boolean } }>(TOKEN_REVIEWS, undefined, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } }, o.signal ? { signal: o.signal } : {});
    if (!review.status?.authenticated) {
      o.progress(`${hub.label}: the spoke's token is refused`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`${hub.label} still accepts the spoke's token after ${o.timeoutMs / 1000}s`);
    await sleep(1000, o.signal);
  }
}

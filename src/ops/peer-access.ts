// Reading the group's peers from one member, as its controller reads them, for the commands that
// look across the group (`explain`, `trace`): with the credentials that member holds (only a
// registry credentials Secret of the controller namespace), in peer mode, each peer proving its
// kube-system UID before anything else is read from it, under the limits every peer client has.
import { CLUSTER_SECRET, CLUSTERS, isDisabled, SECRETS, secretText, type Secret } from '../core/api/index.ts';
import type { Cluster } from '../core/api/types.ts';
import { pickEndpoint } from '../core/registry/index.ts';
import { errorMessage, isObject, type PeerRef } from '../core/rules/index.ts';
import { credentialsRef, speakerFor } from '../core/trust/index.ts';
import { RestClient, type ObjectReader, type PeerReader } from '../kube/index.ts';
import { PEER_CLIENT_LIMITS, peerClusterConfig } from '../peers/connection.ts';
import { kubeSystemUID } from '../peers/identity.ts';

/** A peer read over a verified connection. */
export interface ReadPeer {
  readonly ref: PeerRef;
  readonly rest: PeerReader;
  /** Its registry, as it holds it. */
  readonly clusters: readonly Cluster[];
}

export interface PeerAccessOptions {
  /** This cluster's network, which picks the peers' endpoints. */
  readonly network: string;
  /** The controller namespace: the only place credentials are read from. */
  readonly namespace: string;
  /** Names the command in the peers' logs. */
  readonly userAgent: string;
  readonly signal?: AbortSignal;
}

/** A member not read, and why. */
export interface Unread {
  readonly peer: string;
  readonly why: string;
}

/** A request's options with the command's signal, when it has one. */
export const call = (signal: AbortSignal | undefined): { signal?: AbortSignal } => (signal ? { signal } : {});

/**
 * Whether a Cluster a peer returned has the shape the registry code takes for granted (an API
 * server's always do): a peer decides what it returns, and the entries that have not are left out.
 */
export function clusterShaped(c: unknown): c is Cluster {
  if (!isObject(c) || !isObject(c['metadata']) || !['name', 'namespace'].every((k) => ['string', 'undefined'].includes(typeof (c['metadata'] as Record<string, unknown>)[k]))) return false;
  const { spec, status } = c;
  if (spec !== undefined && (!isObject(spec) || !['string', 'undefined'].includes(typeof spec['clusterID']))) return false;
  if (status === undefined) return true;
  if (!isObject(status) || !['string', 'undefined'].includes(typeof status['state'])) return false;
  const conditions = status['conditions'];
  return conditions === undefined || (Array.isArray(conditions) && conditions.every(isObject));
}

/** A read-only client to the peer of Cluster `c`, with the credentials and checks the controller uses. */
export async function connectPeer(local: ObjectReader, c: Cluster, o: PeerAccessOptions): Promise<ReadPeer> {
  const ref = credentialsRef(c, o.namespace);
  if ('problem' in ref) throw new Error(ref.problem);
  // Only a registry credentials Secret of the controller namespace, as the controller reads it:
  // a peer's entry may name any Secret, and its token must not go to a server that peer chooses.
  const secret = await local.get<Secret>(SECRETS, ref.namespace, ref.name, call(o.signal));
  if (secret.type !== CLUSTER_SECRET.type) throw new Error(`Secret ${ref.namespace}/${ref.name} is not of type ${CLUSTER_SECRET.type}`);
  const kubeconfig = secretText(secret, CLUSTER_SECRET.kubeconfigKey);
  if (!kubeconfig) throw new Error(`Secret ${ref.namespace}/${ref.name} has no ${CLUSTER_SECRET.kubeconfigKey} key`);
  const config = peerClusterConfig({ name: c.metadata.name ?? '', expectedID: c.spec?.clusterID ?? '', secretID: `${ref.namespace}/${ref.name}`, kubeconfig, endpoint: pickEndpoint(c, o.network) });
  const rest: PeerReader = new RestClient(await config.connection(), { ...PEER_CLIENT_LIMITS, userAgent: o.userAgent, peer: c.metadata.name ?? '' });
  try {
    const id = await kubeSystemUID(rest, o.signal);
    if (id !== c.spec?.clusterID) throw new Error(`it is not the cluster its Cluster names (kube-system UID ${id})`);
    const clusters = (await rest.list<Cluster>(CLUSTERS, call(o.signal))).items.filter(clusterShaped);
    return { ref: { id, name: c.metadata.name ?? '', ownCluster: () => clusters.find((x) => x.metadata.name === c.metadata.name) }, rest, clusters };
  } catch (err) {
    rest.close();
    throw err;
  }
}

/**
 * Every peer of the local registry `clusters` that can be read, all at once (a peer that does
 * not answer costs one timeout, not one each), and those that cannot, with why, in registry
 * order. Of several Clusters naming one peer, one speaks for it, as in the controller. The
 * caller closes the peers' clients.
 */
export async function connectPeers(local: ObjectReader, clusters: readonly Cluster[], localID: string, o: PeerAccessOptions): Promise<{ peers: ReadPeer[]; skipped: Unread[] }> {
  const tried = clusters
    .filter((c) => c.spec?.clusterID !== localID && (isDisabled(c) || speakerFor(clusters, c.spec?.clusterID ?? '') === c))
    .map(async (c): Promise<ReadPeer | Unread> => {
      const peer = c.metadata.name ?? '';
      if (isDisabled(c)) return { peer, why: 'its Cluster is disabled' };
      try {
        return await connectPeer(local, c, o);
      } catch (err) {
        return { peer, why: errorMessage(err) };
      }
    });
  const peers: ReadPeer[] = [];
  const skipped: Unread[] = [];
  for (const r of await Promise.all(tried)) {
    if ('why' in r) skipped.push(r);
    else peers.push(r);
  }
  return { peers, skipped };
}

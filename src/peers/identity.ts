// A cluster is its kube-system Namespace UID (the clusterID); every Cluster resource is local or
// a peer by comparing its spec.clusterID with it.
import { WELL_KNOWN } from '../core/api/keys.ts';
import type { RestClient } from '../kube/index.ts';
import { NAMESPACES } from '../core/api/resources.ts';

export async function kubeSystemUID(rest: RestClient, signal?: AbortSignal): Promise<string> {
  const ns = await rest.get(NAMESPACES, undefined, WELL_KNOWN.kubeSystemNamespace, signal ? { signal } : {});
  const uid = ns.metadata?.uid;
  if (!uid) throw new Error(`the ${WELL_KNOWN.kubeSystemNamespace} namespace of ${rest.server.host} has no uid`);
  return uid;
}

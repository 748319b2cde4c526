// A cluster is its kube-system Namespace UID (the clusterID); every Cluster resource is local or
// a peer by comparing its spec.clusterID with it.
import { WELL_KNOWN } from '../core/api/keys.ts';
import type { ObjectReader } from '../kube/index.ts';
import { NAMESPACES } from '../core/api/resources.ts';

// The apiserver makes UIDs as RFC 4122 UUIDs; anything else did not come from one.
const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The peer's answer cannot be its identity; the message never quotes what it sent. */
export class PeerIdentityError extends Error {
  override readonly name = 'PeerIdentityError';
}

/** The kube-system UID; a peer's answer is refused, without being quoted, unless it is a UUID. */
export async function kubeSystemUID(rest: ObjectReader, signal?: AbortSignal): Promise<string> {
  const ns = await rest.get(NAMESPACES, undefined, WELL_KNOWN.kubeSystemNamespace, signal ? { signal } : {});
  const uid: unknown = ns.metadata?.uid;
  const where = `the ${WELL_KNOWN.kubeSystemNamespace} namespace of ${rest.server.host}`;
  if (!uid) throw new PeerIdentityError(`${where} has no uid`);
  if (typeof uid !== 'string' || !UID.test(uid)) throw new PeerIdentityError(`${where} has a uid that is not a UUID`);
  return uid;
}

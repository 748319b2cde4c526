// Who may say where and how a cluster of the group is reached. A cluster's identity (the
// kube-system UID) is no secret, so a peer's word on another cluster's endpoints, CA or
// credentials would let any member send that cluster's token to a server of its choosing. So:
// only the cluster itself, first-hand, changes an entry of it that this member holds; a
// second-hand entry may only introduce a cluster never described here; second-hand credentials
// are taken only for the server and CA already held; and an entry delivered first-hand (or
// written by an admin, `join` included) speaks for its cluster before any second-hand one.
//
// First-hand means over a connection this member vouches for: one made from an entry an admin or
// `join` wrote here. A connection made from an entry a peer passed on reaches whoever answers
// there with that kube-system UID, so what comes over it is second-hand too.

import { isDisabled } from '../api/cluster.ts';
import { ANNOTATIONS, API_GROUP_VERSION, CLUSTER_SECRET, KINDS } from '../api/keys.ts';
import { isSecret } from '../api/resources.ts';
import { ownerOf } from '../api/source-identity.ts';
import type { Cluster, KubeObject } from '../api/types.ts';

export interface RegistryFacts {
  readonly localClusterID: string;
  /** The controller namespace: the only place credentials are read from. */
  readonly namespace: string;
  /** The local registry. */
  readonly clusters: readonly Cluster[];
  /**
   * Where a credentials Secret's kubeconfig sends its token (server, CA and TLS server name, in
   * one comparable text), or undefined when it cannot be read.
   */
  readonly credentialsTarget: (secret: KubeObject) => string | undefined;
}

/** A refusal; `untilRegistryChanges` when a Cluster arriving or leaving may lift it. */
export interface Refusal {
  readonly reason: string;
  readonly untilRegistryChanges?: boolean;
}

/** The credentials Secret a Cluster names, or why it names none that may be read (`missing`: none at all). */
export type CredentialsRef = { readonly name: string; readonly namespace: string } | { readonly problem: string; readonly missing?: boolean };

/**
 * The Secret a Cluster reads its peer's credentials from. Accepted only in the controller
 * namespace: an entry naming a Secret elsewhere would make whoever reads it (this controller with
 * wider rights, or an admin's command) send another registry's token to a server the entry names.
 */
export function credentialsRef(cluster: Pick<Cluster, 'spec'>, namespace: string): CredentialsRef {
  const ref = cluster.spec?.authInfo?.secretRef;
  if (!ref?.name || !ref.namespace) return { problem: 'spec.authInfo.secretRef must name the credentials Secret (name and namespace)', missing: true };
  if (ref.namespace !== namespace) return { problem: `spec.authInfo.secretRef names a Secret in namespace ${ref.namespace}: credentials are read only from the controller namespace ${namespace}` };
  return { name: ref.name, namespace: ref.namespace };
}

/** Whether `cluster` reads its peer's credentials from the Secret at `place`. */
export function namesCredentials(cluster: Cluster, place: { readonly name?: string; readonly namespace?: string }): boolean {
  const ref = cluster.spec?.authInfo?.secretRef;
  return !!ref?.name && ref.name === place.name && (ref.namespace ?? '') === (place.namespace ?? '');
}

/** Where and how an entry says its cluster is reached, as one comparable text. */
function reachOf(c: Pick<Cluster, 'spec'>): string {
  const ref = c.spec?.authInfo?.secretRef;
  const endpoints = (c.spec?.kubernetesApiEndpoints ?? []).map((e) => [e.clientNetwork ?? '', e.serverAddress ?? '', e.caBundle ?? '']);
  return JSON.stringify([ref?.namespace ?? '', ref?.name ?? '', endpoints]);
}

/**
 * Whether this member vouches for an entry of another cluster: written here by an admin (no
 * owner: by hand as the quickstart does) or by `join`, and marked so since. Where and how such a
 * cluster is reached was said here, first-hand; an entry only passed on was said by a peer.
 */
export function vouchedEntry(c: Cluster): boolean {
  return ownerOf(c) === '' || c.metadata.annotations?.[ANNOTATIONS.vouched] !== undefined;
}

/**
 * `desired`, the next state of the entry `current` here, still vouched for if `current` was: an
 * entry an admin wrote stays vouched for once the sync takes it over.
 */
export function keepingVouch(desired: KubeObject, current: KubeObject | undefined): KubeObject {
  if (current === undefined || !isClusterEntry(current) || !vouchedEntry(current as Cluster)) return desired;
  const by = current.metadata.annotations?.[ANNOTATIONS.vouched] ?? VOUCHED_BY.admin;
  return { ...desired, metadata: { ...desired.metadata, annotations: { ...desired.metadata.annotations, [ANNOTATIONS.vouched]: by } } };
}

/** Who vouches for an entry, as its annotation says. */
export const VOUCHED_BY = { admin: 'admin', join: 'join' } as const;

function isClusterEntry(o: KubeObject): boolean {
  return o.apiVersion === API_GROUP_VERSION && o.kind === KINDS.cluster;
}

function olderThan(a: Cluster, b: Cluster): boolean {
  const at = a.metadata.creationTimestamp ?? '';
  const bt = b.metadata.creationTimestamp ?? '';
  // RFC 3339 in UTC with second precision: text order is time order.
  return at !== bt ? at < bt : (a.metadata.name ?? '') < (b.metadata.name ?? '');
}

/** Whether this member reaches the cluster with ID `id` through an entry it vouches for. */
export function reachedFirstHand(clusters: readonly Cluster[], id: string): boolean {
  const speaker = speakerFor(clusters, id);
  return speaker !== undefined && vouchedEntry(speaker);
}

/**
 * The Cluster that speaks for the cluster with ID `id`, of the enabled ones describing it: one
 * this member vouches for before any other, whatever their ages; then the oldest (then by name).
 */
export function speakerFor(clusters: readonly Cluster[], id: string): Cluster | undefined {
  let speaker: Cluster | undefined;
  for (const c of clusters) {
    if (c.spec?.clusterID !== id || isDisabled(c)) continue;
    if (!speaker) speaker = c;
    else if (vouchedEntry(c) !== vouchedEntry(speaker)) speaker = vouchedEntry(c) ? c : speaker;
    else if (olderThan(c, speaker)) speaker = c;
  }
  return speaker;
}

/**
 * What may not become of a Cluster delivered by the peer with ID `from` (`current`: the entry of
 * that name here).
 */
export function clusterEntryRefusal(desired: Cluster, from: string, current: KubeObject | undefined, f: RegistryFacts): Refusal | undefined {
  const id = desired.spec?.clusterID ?? '';
  // A cluster describes itself: a Cluster is passed on only by (or on behalf of) the cluster it names.
  if (!id || id !== ownerOf(desired)) return { reason: 'a Cluster is synced only when it is owned by the cluster it describes' };
  const secretRef = desired.spec.authInfo?.secretRef;
  if (secretRef?.name || secretRef?.namespace) {
    const ref = credentialsRef(desired, f.namespace);
    if ('problem' in ref) return { reason: ref.problem };
    // Credentials belong to the first member whose Cluster names them: another naming them too
    // would make our Cluster of that member read them, or hold up their updates.
    if (f.clusters.some((c) => c.spec?.clusterID !== id && namesCredentials(c, ref))) {
      return { reason: `its spec.authInfo.secretRef names ${ref.namespace}/${ref.name}, the credentials of another member`, untilRegistryChanges: true };
    }
  }
  if (from === id && reachedFirstHand(f.clusters, id)) return undefined;
  const name = desired.metadata.name ?? '';
  const other = f.clusters.find((c) => c.spec?.clusterID === id && c.metadata.name !== name);
  if (other) return { reason: `cluster ${id} is described here by Cluster ${other.metadata.name ?? ''}: a peer introduces no second entry of it`, untilRegistryChanges: true };
  // What this member holds of that name: the copy it knows of, else its registry's entry (the
  // copies' own cache may not have listed yet).
  const held = current ?? f.clusters.find((c) => c.metadata.name === name);
  if (held !== undefined && reachOf(held as Cluster) !== reachOf(desired)) {
    return { reason: `where and how cluster ${id} is reached (endpoints, CA, credentials Secret) is changed only by that cluster itself, not passed on by a peer` };
  }
  return undefined;
}

/** What may not become of a registry credentials Secret delivered by the peer with ID `from`. */
export function credentialsRefusal(desired: KubeObject, from: string, current: KubeObject | undefined, f: RegistryFacts): Refusal | undefined {
  const owner = ownerOf(desired);
  if ((desired.metadata.namespace ?? '') !== f.namespace) return { reason: `credentials are read only from the controller namespace ${f.namespace}` };
  const namers = f.clusters.filter((c) => namesCredentials(c, desired.metadata));
  if (namers.some((c) => c.spec?.clusterID === f.localClusterID)) return { reason: "this cluster's own reader credentials are never overwritten by a peer" };
  // Credentials are those of the cluster whose Cluster names them, and of no one else.
  if (!namers.some((c) => c.spec?.clusterID === owner)) return { reason: 'credentials are synced only for the cluster whose Cluster names them (waiting for that Cluster)', untilRegistryChanges: true };
  if ((from === owner && reachedFirstHand(f.clusters, owner)) || current === undefined) return undefined;
  // Second-hand: a fresh token for the server already held (a member cut off past its token's
  // lifetime still comes back), never a token for another server.
  const held = f.credentialsTarget(current);
  if (held === undefined || held !== f.credentialsTarget(desired)) {
    return { reason: `credentials of cluster ${owner} for another server or CA are taken only from that cluster itself, not passed on by a peer` };
  }
  return undefined;
}

/**
 * Whether `copy` is the Secret a Cluster of this registry (`clusters`) reads the copy's owner
 * with: deleting it would cut this cluster off from the one member that can give it the next.
 */
export function credentialsInUse(copy: KubeObject, clusters: readonly Cluster[]): boolean {
  const owner = ownerOf(copy);
  return isSecret(copy) && clusters.some((c) => c.spec?.clusterID === owner && namesCredentials(c, copy.metadata));
}

/** Whether a Secret is a registry credentials Secret. */
export function isCredentials(o: KubeObject): boolean {
  return o['type'] === CLUSTER_SECRET.type;
}

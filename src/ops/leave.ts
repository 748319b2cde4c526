// `cluster-registry leave`: a cluster leaves its group, in the order that keeps it out. First
// every reader token the members hold for it stops working (its reader ServiceAccount is made
// anew, and tokens are bound to the old one), so no member reads it again or passes its entry on.
// Then each member given forgets it (its Cluster and the credentials Secret that names), and it
// forgets every member. Grants of hub-and-spoke sync between it and them are revoked with the
// reader tokens. Nothing synced is deleted here: each side's controller collects the copies
// owned by the other after its grace period, as for any member that left.
import { ANNOTATIONS, CLUSTER_SECRET } from '../core/api/keys.ts';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../core/api/resources.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { credentialsRef } from '../core/trust/index.ts';
import { isNotFound, sleep, type ResourceRef } from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { tokenOf } from '../registry/reader-credentials.ts';
import { dropHubCredentials, revokeGrantsBetween, type HubCredentialsPlace } from './hub-grant.ts';
import type { JoinSide, OperationOptions } from './join.ts';

const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const TOKEN_REVIEWS: ResourceRef = { group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews' };

export interface LeaveOptions extends OperationOptions, HubCredentialsPlace {
  /** The leaver's reader ServiceAccount (the controller's --reader-service-account-name). */
  readonly readerServiceAccount: string;
}

export class LeaveError extends Error {
  override readonly name = 'LeaveError';
}

const nameOf = (o: KubeObject): string => o.metadata.name ?? '';

/** Makes the reader ServiceAccount anew, so every token minted for the old one is refused. */
async function revokeReaders(leaver: JoinSide, o: LeaveOptions): Promise<void> {
  const call = o.signal ? { signal: o.signal } : {};
  let old: KubeObject | undefined;
  try {
    old = await leaver.rest.get(SERVICE_ACCOUNTS, o.namespace, o.readerServiceAccount, call);
    await leaver.rest.delete(SERVICE_ACCOUNTS, o.namespace, o.readerServiceAccount, { ...call, preconditions: { uid: old.metadata.uid } });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const { labels, annotations } = old?.metadata ?? {};
  await leaver.rest.create(SERVICE_ACCOUNTS, o.namespace, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: o.readerServiceAccount, namespace: o.namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
  }, call);
  o.progress(`${leaver.label}: reader ServiceAccount ${o.namespace}/${o.readerServiceAccount} made anew: the tokens members hold for it no longer work`);
}

/**
 * Deletes the Clusters `which` picks on one side, and the credentials Secrets they name there:
 * only registry credentials owned by the cluster the entry describes (or by no one), and only
 * while no Cluster that stays names them.
 */
async function forget(side: JoinSide, which: (c: Cluster) => boolean, o: LeaveOptions): Promise<string[]> {
  const call = o.signal ? { signal: o.signal } : {};
  const gone: string[] = [];
  const all = (await side.rest.list<Cluster>(CLUSTERS, call)).items;
  const kept = new Set(all.filter((c) => !which(c)).map((c) => `${c.spec.authInfo?.secretRef?.namespace ?? ''}/${c.spec.authInfo?.secretRef?.name ?? ''}`));
  for (const c of all.filter(which)) {
    // Already on its way out: nothing more to do with it.
    if (c.metadata.deletionTimestamp) continue;
    // Credentials are only ever those of the controller namespace: an entry naming a Secret
    // elsewhere (another registry's, say) gets nothing deleted on its word.
    const ref = credentialsRef(c, o.namespace);
    try {
      await side.rest.delete(CLUSTERS, undefined, nameOf(c), { ...call, preconditions: { uid: c.metadata.uid } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    gone.push(`Cluster ${nameOf(c)}`);
    if ('problem' in ref || kept.has(`${ref.namespace}/${ref.name}`)) continue;
    try {
      const secret = await side.rest.get<Secret>(SECRETS, ref.namespace, ref.name, call);
      const owner = secret.metadata.annotations?.[ANNOTATIONS.ownership];
      if (secret.type !== CLUSTER_SECRET.type || (owner !== undefined && owner !== c.spec.clusterID) || secret.metadata.deletionTimestamp) continue;
      await side.rest.delete(SECRETS, ref.namespace, ref.name, { ...call, preconditions: { uid: secret.metadata.uid } });
      gone.push(`Secret ${ref.namespace}/${ref.name}`);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return gone;
}

/**
 * Waits until the revocation holds: the members given hold the leaver's old token, and the
 * leaver's API server refuses it (servers cache tokens a few seconds); and each of them no
 * longer sees the leaver Ready, so none passes its entry on to another.
 */
async function revocationHolds(leaver: JoinSide, id: string, members: readonly JoinSide[], o: LeaveOptions): Promise<void> {
  const call = o.signal ? { signal: o.signal } : {};
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  const entries = async (m: JoinSide) => (await m.rest.list<Cluster>(CLUSTERS, call)).items.filter((c) => c.spec.clusterID === id);
  const tokens = new Set<string>();
  for (const m of members) {
    for (const c of await entries(m)) {
      const ref = credentialsRef(c, o.namespace);
      if ('problem' in ref) continue;
      const secret = await m.rest.get<Secret>(SECRETS, ref.namespace, ref.name, call).catch(() => undefined);
      const token = tokenOf(secret && secretText(secret, CLUSTER_SECRET.kubeconfigKey));
      if (token) tokens.add(token);
    }
  }
  for (;;) {
    const accepted = [];
    for (const token of tokens) {
      const review = await leaver.rest.create<KubeObject & { status?: { authenticated?: boolean } }>(TOKEN_REVIEWS, undefined, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', metadata: {}, spec: { token } }, call);
      if (review.status?.authenticated) accepted.push(token);
    }
    const stillReady: string[] = [];
    for (const m of members) if ((await entries(m)).some((c) => c.status?.state === 'Ready')) stillReady.push(m.label);
    if (accepted.length === 0 && stillReady.length === 0) return;
    if (Date.now() > deadline) {
      throw new LeaveError(accepted.length > 0 ? `the leaving cluster still accepts the reader tokens members hold after ${SETTLE_TIMEOUT_MS / 1000}s` : `${stillReady.join(', ')} still see the leaving cluster Ready after ${SETTLE_TIMEOUT_MS / 1000}s`);
    }
    await sleep(SETTLE_PAUSE_MS, o.signal);
  }
}

/**
 * Hub-and-spoke grants between the leaver and the members given, both ways: a member's grant to
 * the leaver as its spoke, and the leaver's grants to members. Each went with the ServiceAccount
 * that held it (its tokens die with it); the credentials either side keeps for the other as its
 * hub go too.
 */
async function revokeHubGrants(leaver: JoinSide, id: string, members: readonly JoinSide[], ids: readonly string[], o: LeaveOptions): Promise<void> {
  const say = (side: JoinSide, gone: string[]): void => {
    if (gone.length > 0) o.progress(`${side.label}: hub-and-spoke: deleted ${gone.join(', ')}`);
  };
  for (const m of members) {
    say(m, [...(await revokeGrantsBetween(m, new Set([id]), o)), ...(await dropHubCredentials(m, new Set([id]), o))]);
  }
  say(leaver, [...(await revokeGrantsBetween(leaver, new Set(ids), o)), ...(await dropHubCredentials(leaver, new Set(ids), o))]);
}

/** The leaver's own reader Secret, so its controller mints a token of the new reader at once (its old one is dead). */
async function dropOwnReaderSecret(leaver: JoinSide, self: Cluster | undefined, o: LeaveOptions): Promise<void> {
  const ref = self && credentialsRef(self, o.namespace);
  if (!ref || 'problem' in ref) return;
  const call = o.signal ? { signal: o.signal } : {};
  try {
    const secret = await leaver.rest.get<Secret>(SECRETS, ref.namespace, ref.name, call);
    if (secret.type !== CLUSTER_SECRET.type || secret.metadata.annotations?.[ANNOTATIONS.ownership]) return;
    await leaver.rest.delete(SECRETS, ref.namespace, ref.name, { ...call, preconditions: { uid: secret.metadata.uid } });
    o.progress(`${leaver.label}: its reader Secret ${ref.namespace}/${ref.name} dropped; the controller writes it anew with a token of the new reader`);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** How long entries may keep coming back (a controller still reading a member while others go) before leave gives up. */
const SETTLE_TIMEOUT_MS = 60_000;
const SETTLE_PAUSE_MS = 2_000;

/**
 * Deletes what `forget` picks until a look after a pause finds nothing: until its connections
 * close, a controller may pass an entry back from a member it still reads.
 */
async function forgetForGood(side: JoinSide, which: (c: Cluster) => boolean, o: LeaveOptions): Promise<string[]> {
  const all: string[] = [];
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (let round = 0; ; round++) {
    const gone = await forget(side, which, o);
    if (gone.length === 0 && round > 0) return all;
    all.push(...gone.filter((g) => !all.includes(g)));
    if (Date.now() > deadline) throw new LeaveError(`${side.label}: ${gone.join(', ')} kept coming back for ${SETTLE_TIMEOUT_MS / 1000}s`);
    await sleep(SETTLE_PAUSE_MS, o.signal);
  }
}

/** Takes `leaver` out of its group; `members` are the members it can reach to forget it. */
export async function leave(leaver: JoinSide, members: readonly JoinSide[], o: LeaveOptions): Promise<void> {
  const id = await kubeSystemUID(leaver.rest, o.signal);
  const ids = await Promise.all(members.map((m) => kubeSystemUID(m.rest, o.signal)));
  const same = members.find((_, i) => ids[i] === id);
  if (same) throw new LeaveError(`${same.label} is the leaving cluster itself (ID ${id})`);
  const listed = (await leaver.rest.list<Cluster>(CLUSTERS, o.signal ? { signal: o.signal } : {})).items;
  const self = listed.find((c) => c.spec.clusterID === id);
  const name = self ? nameOf(self) : id;
  await revokeReaders(leaver, o);
  await revokeHubGrants(leaver, id, members, ids, o);
  await revocationHolds(leaver, id, members, o);
  await dropOwnReaderSecret(leaver, self, o);
  for (const m of members) {
    const gone = await forgetForGood(m, (c) => c.spec.clusterID === id, o);
    o.progress(`${m.label}: ${gone.length > 0 ? `deleted ${gone.join(', ')}` : `had no entry for ${name}`}`);
  }
  const gone = await forgetForGood(leaver, (c) => c.spec.clusterID !== id, o);
  o.progress(`${leaver.label}: ${gone.length > 0 ? `deleted ${gone.join(', ')}` : 'knew no other member'}`);
  const told = new Set(ids);
  const untold = listed.filter((c) => c.spec.clusterID !== id && !told.has(c.spec.clusterID)).map(nameOf);
  if (untold.length > 0) {
    o.progress(`${untold.join(', ')} still list ${name}; they can no longer read it, and forget it when its Cluster is deleted there (or run leave with them)`);
  }
  o.progress(`left: ${name} is out of the group; the copies each side holds of the other's objects are collected after the controllers' grace period`);
  // A reader token can read its own cluster's reader Secret (that is how credentials travel), so
  // one copied away follows every rotation until its ServiceAccount is made anew.
  o.progress(`${name} held the members' reader tokens: if it is not to be trusted, make each member's reader ServiceAccount anew too`);
}

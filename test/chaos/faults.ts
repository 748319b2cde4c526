// The faults the chaos harness injects into a running group, each healed before it returns: the
// harness checks the invariants once every fault of a round has healed. A fault's duration (how
// long an API server stays down, a role binding stays deleted) is drawn from the seeded random
// source: that time is the fault itself, not a wait for an outcome.
import { CLUSTER_SECRET } from '../../src/core/api/keys.ts';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster } from '../../src/core/api/types.ts';
import { isNotFound, sleep, type KubeObject, type RestClient } from '../../src/kube/index.ts';
import { applyObjects, deployManifests } from '../../src/registry/install.ts';
import { tokenOf } from '../../src/registry/reader-credentials.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { compactEtcd } from '../support/kube-helpers.ts';
import type { Random } from './random.ts';

export const FAULT_KINDS = ['apiserver-kill', 'apiserver-pause', 'controller-kill', 'etcd-compaction', 'rbac-revoke', 'token-rotation', 'concurrent-edits'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** How often each kind is drawn, relative to the others. */
export const FAULT_WEIGHTS: Readonly<Record<FaultKind, number>> = {
  'apiserver-kill': 2,
  'apiserver-pause': 2,
  'controller-kill': 2,
  'etcd-compaction': 1,
  'rbac-revoke': 2,
  'token-rotation': 1,
  'concurrent-edits': 2,
};

/** The name of the reader's bindings (deploy/manifests/rbac-reader.yaml): a ClusterRoleBinding and a RoleBinding. */
const READER = 'cluster-registry-controller-reader';

export interface FaultTarget {
  readonly sandbox: Sandbox;
  readonly member: string;
  readonly rest: RestClient;
  readonly rng: Random;
}

/** kill -9 the member's API server, keep it down for a while, start it again on the same data. */
export async function apiserverKill(t: FaultTarget): Promise<string> {
  const apiserver = t.sandbox.cluster(t.member).apiserver;
  const downMs = t.rng.int(0, 2000);
  await apiserver.kill();
  await sleep(downMs);
  await apiserver.start();
  return `killed ${t.member}'s API server for ${downMs} ms`;
}

/** SIGSTOP the member's API server: to everyone it is a partitioned member (connections hang), then SIGCONT. */
export async function apiserverPause(t: FaultTarget): Promise<string> {
  const apiserver = t.sandbox.cluster(t.member).apiserver;
  const pausedMs = t.rng.int(1000, 6000);
  apiserver.pause();
  try {
    await sleep(pausedMs);
  } finally {
    apiserver.resume();
  }
  return `paused ${t.member}'s API server for ${pausedMs} ms`;
}

/** kill -9 the member's controller (at whatever it was doing) and start it again. */
export async function controllerKill(t: FaultTarget): Promise<string> {
  const controller = t.sandbox.cluster(t.member).extras[0];
  if (!controller) throw new Error(`${t.member} runs no controller`);
  const downMs = t.rng.int(0, 1500);
  await controller.kill();
  await sleep(downMs);
  await controller.start();
  return `killed ${t.member}'s controller for ${downMs} ms`;
}

/**
 * Compacts the shared etcd at its current revision: every watch that resumes from before it
 * (after a restart, a partition) gets 410 Gone and must relist.
 */
export async function etcdCompaction(t: Pick<FaultTarget, 'sandbox'>): Promise<string> {
  return `compacted etcd at revision ${await compactEtcd(t.sandbox.etcd.clientURL, { racing: true })}`;
}

/**
 * Deletes the reader's RoleBinding (Secrets), ClusterRoleBinding (the registry) or both on the
 * member: its peers are refused what they read of it (403) until the bindings are back, which
 * must never pass for the absence of the objects behind them.
 */
export async function rbacRevoke(t: FaultTarget): Promise<string> {
  const kinds = t.rng.pick([['RoleBinding'], ['ClusterRoleBinding'], ['RoleBinding', 'ClusterRoleBinding']]);
  const bindings = deployManifests('manifests').filter((o) => kinds.includes(o.kind ?? '') && o.metadata.name === READER);
  const heldMs = t.rng.int(1000, 5000);
  const path = (o: KubeObject): string =>
    o.kind === 'RoleBinding' ? `/apis/rbac.authorization.k8s.io/v1/namespaces/${o.metadata.namespace ?? ''}/rolebindings/${READER}` : `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${READER}`;
  try {
    for (const b of bindings) await t.rest.request({ method: 'DELETE', path: path(b) });
    await sleep(heldMs);
  } finally {
    await eventually(`${t.member}'s reader bindings restored`, () => applyObjects(t.rest, bindings).then(() => true), 60_000);
  }
  return `revoked ${kinds.join(' and ')} of ${t.member}'s reader for ${heldMs} ms`;
}

/** The reader token the member hands its peers, and where it keeps it. */
async function readerToken(rest: RestClient, member: string): Promise<{ namespace: string; name: string; token: string | undefined }> {
  const ref = (await rest.get<Cluster>(CLUSTERS, undefined, member)).spec.authInfo?.secretRef;
  if (!ref?.name || !ref.namespace) throw new Error(`${member}'s Cluster names no reader Secret`);
  const s = await rest.get<Secret>(SECRETS, ref.namespace, ref.name).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  return { namespace: ref.namespace, name: ref.name, token: s ? tokenOf(secretText(s, CLUSTER_SECRET.kubeconfigKey)) : undefined };
}

/**
 * Deletes the member's reader Secret, as if its token had run out: the member's controller must
 * issue a fresh token at once, and its peers must take it up (their copies of the Secret follow)
 * without losing the member. Returns once the new token is in place.
 */
export async function tokenRotation(t: FaultTarget): Promise<string> {
  const before = await readerToken(t.rest, t.member);
  await t.rest.delete(SECRETS, before.namespace, before.name).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
  await eventually(`${t.member} to issue a new reader token`, async () => {
    const now = await readerToken(t.rest, t.member);
    return (now.token !== undefined && now.token !== before.token) || undefined;
  }, 60_000);
  return `made ${t.member} issue a new reader token`;
}

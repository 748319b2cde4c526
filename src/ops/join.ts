// `cluster-registry join`: the upstream quickstart's Cluster-and-Secret swap, both ways, in one
// idempotent command. Each side's local Cluster and reader Secret (provisioned by its
// controller) are copied to the other as synced copies owned by their cluster, so later
// changes (a rotated token) flow through the controllers; then it waits until each side sees
// the other Ready.
import { CLUSTER_SECRET, CORE_RULE_NAMES } from '../core/api/keys.ts';
import { coreResourceSyncRules } from '../core/api/core-rules.ts';
import type { Cluster } from '../core/api/types.ts';
import { upstreamMembersHint } from '../core/registry/index.ts';
import { credentialsRef, VOUCHED_BY } from '../core/trust/index.ts';
import { isNotFound, sleep, type RestClient } from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { copyOnce } from '../sync/copy-once.ts';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../core/api/resources.ts';

export interface JoinSide {
  readonly rest: RestClient;
  /** For messages: the kubeconfig/context it came from. */
  readonly label: string;
}

/** What every operation across clusters (join, leave) is given. */
export interface OperationOptions {
  /** The controller namespace on every side (credentials Secrets live there). */
  readonly namespace: string;
  readonly progress: (message: string) => void;
  readonly signal?: AbortSignal;
}

export interface JoinOptions extends OperationOptions {
  readonly timeoutMs: number;
}

export class JoinError extends Error {
  override readonly name = 'JoinError';
}

interface Member {
  readonly side: JoinSide;
  readonly id: string;
  readonly cluster: Cluster;
  readonly secret: Secret;
}

function nameOf(c: Cluster): string {
  return c.metadata.name ?? '';
}

/** Waits for the side's controller to have provisioned its local Cluster and reader Secret. */
async function member(side: JoinSide, o: JoinOptions, deadline: number): Promise<Member> {
  const id = await kubeSystemUID(side.rest, o.signal);
  let said = '';
  const say = (m: string) => {
    if (m !== said) o.progress(`${side.label}: ${m}`);
    said = m;
  };
  for (;;) {
    const locals = (await side.rest.list<Cluster>(CLUSTERS, o.signal ? { signal: o.signal } : {})).items.filter((c) => c.spec.clusterID === id);
    if (locals.length > 1) throw new JoinError(`${side.label} has ${locals.length} Clusters for its own ID ${id} (${locals.map(nameOf).join(', ')}); delete all but one`);
    const cluster = locals[0];
    if (!cluster) {
      say(`waiting for a local Cluster (spec.clusterID ${id}); is the controller running with --provision-local-cluster?`);
    } else {
      const ref = credentialsRef(cluster, o.namespace);
      if ('problem' in ref) throw new JoinError(`${side.label}: the local Cluster ${nameOf(cluster)}: ${ref.problem}; peers could not read it`);
      try {
        const secret = await side.rest.get<Secret>(SECRETS, ref.namespace, ref.name, o.signal ? { signal: o.signal } : {});
        if (secret.type === CLUSTER_SECRET.type && secretText(secret, CLUSTER_SECRET.kubeconfigKey)) {
          say(`local Cluster ${nameOf(cluster)} (ID ${id}) and its reader Secret ${ref.namespace}/${ref.name} found`);
          return { side, id, cluster, secret };
        }
        say(`waiting for the controller to fill the reader Secret ${ref.namespace}/${ref.name}`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        say(`waiting for the controller to create the reader Secret ${ref.namespace}/${ref.name}`);
      }
    }
    if (Date.now() > deadline) throw new JoinError(`${side.label}: ${said || 'not ready'} (timed out)`);
    await sleep(1000, o.signal);
  }
}

/** Copies `from`'s Cluster and Secret into `to`. */
async function copyInto(from: Member, to: Member, o: JoinOptions): Promise<void> {
  const name = nameOf(from.cluster);
  const existing = (await to.side.rest.list<Cluster>(CLUSTERS, o.signal ? { signal: o.signal } : {})).items;
  const sameName = existing.find((c) => nameOf(c) === name);
  if (sameName && sameName.spec.clusterID !== from.id) {
    throw new JoinError(`${to.side.label} already has a Cluster named ${name} for another cluster (ID ${sameName.spec.clusterID}); Cluster names must be unique in a group`);
  }
  const ctx = { target: to.side.rest, targetClusterID: to.id, sourceClusterID: from.id, targetClusters: existing, ...(o.signal ? { signal: o.signal } : {}) };
  // Made as the core rules make them, so the controllers on both sides keep them up to date.
  const rules = new Map(coreResourceSyncRules(o.namespace).map((r) => [r.metadata.name, { name: r.metadata.name ?? '', spec: r.spec }]));
  for (const [rule, obj, what] of [
    [CORE_RULE_NAMES.clusterSecrets, from.secret, `Secret ${from.secret.metadata.namespace ?? ''}/${from.secret.metadata.name ?? ''}`],
    [CORE_RULE_NAMES.clusters, from.cluster, `Cluster ${name}`],
  ] as const) {
    // The entry join writes is one this side vouches for: it speaks for that cluster here.
    const outcome = await copyOnce(rules.get(rule)!, obj, rule === CORE_RULE_NAMES.clusters ? { ...ctx, vouch: VOUCHED_BY.join } : ctx);
    const verb = outcome.action === 'skipped' ? `left as is (${outcome.reason}: an object there is not owned by ${name})` : outcome.action;
    o.progress(`${to.side.label}: ${what} ${verb}`);
  }
}

/** Waits until `viewer` sees `peer`'s Cluster Ready; returns its last status message otherwise. */
async function waitReady(viewer: Member, peerName: string, o: JoinOptions, deadline: number): Promise<void> {
  let last = '';
  for (;;) {
    try {
      const c = await viewer.side.rest.get<Cluster>(CLUSTERS, undefined, peerName, o.signal ? { signal: o.signal } : {});
      const state = c.status?.state ?? 'pending';
      const line = `${state}${c.status?.message ? `: ${c.status.message}` : ''}`;
      if (line !== last) o.progress(`${viewer.side.label}: Cluster ${peerName} is ${line}`);
      last = line;
      if (state === 'Ready' && c.status?.type === 'Peer') return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (Date.now() > deadline) throw new JoinError(`${viewer.side.label} does not see ${peerName} Ready (${last || 'no status'})`);
    await sleep(1000, o.signal);
  }
}

export async function join(a: JoinSide, b: JoinSide, o: JoinOptions): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  const [ma, mb] = await Promise.all([member(a, o, deadline), member(b, o, deadline)]);
  if (ma.id === mb.id) throw new JoinError(`${a.label} and ${b.label} are the same cluster (ID ${ma.id})`);
  if (nameOf(ma.cluster) === nameOf(mb.cluster)) {
    throw new JoinError(`both clusters are named ${nameOf(ma.cluster)}; Cluster names must be unique in a group`);
  }
  await copyInto(ma, mb, o);
  await copyInto(mb, ma, o);
  await Promise.all([waitReady(ma, nameOf(mb.cluster), o, deadline), waitReady(mb, nameOf(ma.cluster), o, deadline)]);
  o.progress(`joined: ${nameOf(ma.cluster)} and ${nameOf(mb.cluster)} see each other Ready`);
  // Advice only: the join itself is done whatever this says.
  try {
    const listed = await Promise.all([a, b].map(async (s) => (await s.rest.list<Cluster>(CLUSTERS, o.signal ? { signal: o.signal } : {})).items));
    const hint = upstreamMembersHint(listed.flat());
    if (hint) o.progress(hint);
  } catch (err) {
    if (o.signal?.aborted) throw err;
    o.progress(`could not check which members run another controller: ${err instanceof Error ? err.message : String(err)}`);
  }
}

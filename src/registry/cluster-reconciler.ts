// The Cluster reconciler, one for the local Cluster and its peers' (upstream has a separate
// per-peer status reconciler): which Cluster is the local one by the kube-system UID, each
// Cluster's state and conditions, its connection kept or dropped with its credentials, and its
// status written when it changed. Where this differs from upstream: docs/api.md.
import { isDeepStrictEqual } from 'node:util';
import { isDisabled } from '../core/api/cluster.ts';
import { ANNOTATIONS, CLUSTER_CONDITIONS, CLUSTER_SECRET, CLUSTER_STATES, CLUSTER_TYPES, OUR_IMPLEMENTATION } from '../core/api/keys.ts';
import type { Cluster, ClusterMetadata, ClusterState, ClusterStatus } from '../core/api/types.ts';
import {
  clusterMetadata,
  conditionOf,
  groupSyncProblems,
  pickEndpoint,
  removeCondition,
  runsOurs,
  setCondition,
  type ConditionInput,
  type NodeInfo,
  type TransitionEvent,
  unreachableMessage,
} from '../core/registry/index.ts';
import {
  deepCopy,
  isConflict,
  isForbidden,
  isNotFound,
  type EventRecorder,
  type Informer,
  type KubeObject,
  type Logger,
  type ReconcileResult,
  type ObjectReader,
  type ObjectClient,
} from '../kube/index.ts';
import { credentialsRef, speakerFor, vouchedEntry } from '../core/trust/index.ts';
import { ensureCoreResources } from './core-resources.ts';
import { PeerConfigError, type PeerConnection } from '../peers/connection.ts';
import type { PeerManager } from '../peers/manager.ts';
import type { ReaderCredentials } from './reader-credentials.ts';
import type { Inventory } from './inventory.ts';
import { CLUSTERS, NODES, SECRETS, secretText, type Secret } from '../core/api/resources.ts';

export interface ClusterReconcilerOptions {
  readonly rest: ObjectClient;
  readonly localClusterID: string;
  /** The controller namespace. */
  readonly namespace: string;
  readonly networkName: string;
  readonly manageLocalClusterSecret: boolean;
  readonly coreResourcesSourceEnabled: boolean;
  readonly refreshIntervalMs: number;
  readonly clusters: Informer<Cluster>;
  /** Credential Secrets of the controller namespace. */
  readonly secrets: Informer<Secret>;
  readonly nodes: Informer<NodeInfo & KubeObject>;
  readonly peers: PeerManager;
  readonly reader: ReaderCredentials;
  /** SIG-Multicluster's view of the group (About API, cluster inventory), where served. */
  readonly inventory: Inventory;
  readonly events: EventRecorder;
  readonly enqueue: (name: string) => void;
  readonly log: Logger;
  readonly now?: () => Date;
}

/** A failed reconcile with the Cluster state it leaves, and whether retrying soon can help. */
class ClusterError extends Error {
  readonly state: ClusterState;
  readonly transient: boolean;
  constructor(state: ClusterState, message: string, transient = false) {
    super(message);
    this.state = state;
    this.transient = transient;
  }
}

/** Not a failure: the connection or the peer's caches are still coming up. Status is left as it is. */
class NotYet extends Error {
  readonly retryMs: number;
  constructor(message: string, retryMs = 250) {
    super(message);
    this.retryMs = retryMs;
  }
}
/** The first probe's outcome also arrives as a health change; this is only the safety net. */
const CONNECTING_RETRY_MS = 1000;
/** How soon a failed attempt to mark the local Cluster is retried. */
const MARK_RETRY_MS = 30_000;

/** `result`, reconciling again at the latest after `ms` (a backoff retry it asks for stays as it is). */
function noLaterThan(result: ReconcileResult, ms: number): ReconcileResult {
  return result.requeue ? result : { requeueAfter: Math.min(result.requeueAfter ?? ms, ms) };
}

/** How long the local Nodes may take to list before that is reported as a failure. */
const NODES_PATIENCE_MS = 30_000;
/** How long a reachable peer may take to fill our caches before that is reported as a failure. */
const PEER_CACHE_PATIENCE_MS = 30_000;
/** Far beyond any real group; each peer costs a connection and its caches. */
const MAX_PEERS = 250;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

interface StatusDraft {
  status: ClusterStatus;
  events: TransitionEvent[];
}

export class ClusterReconciler {
  private readonly o: ClusterReconcilerOptions;
  private readonly now: () => Date;
  private localVersion: { value: string; at: number } | undefined;
  private readonly started: number;
  /** The cluster ID each Cluster had when last reconciled, so a change releases its duplicates. */
  private readonly lastIDs = new Map<string, string>();
  /** Whether the last attempt to mark the local Cluster failed (logged once per streak). */
  private markFailing = false;

  constructor(opts: ClusterReconcilerOptions) {
    this.o = opts;
    this.now = opts.now ?? (() => new Date());
    this.started = this.now().getTime();
  }

  readonly reconcile = async (name: string, signal: AbortSignal): Promise<ReconcileResult> => {
    const cached = this.o.clusters.store.get(name);
    const previousID = this.lastIDs.get(name);
    if (previousID !== undefined && previousID !== cached?.spec?.clusterID) this.enqueueDescribing(previousID, name);
    if (!cached) {
      this.lastIDs.delete(name);
      this.o.peers.remove(name);
      this.enqueueConflicting();
      await this.o.inventory.withdraw(name, signal);
      return {};
    }
    this.lastIDs.set(name, cached.spec?.clusterID ?? '');
    const cluster = deepCopy(cached);
    const isLocal = cluster.spec?.clusterID !== undefined && cluster.spec.clusterID === this.o.localClusterID;
    // Reset as upstream does (metadata and message cleared, conditions kept) so nothing stale survives.
    const draft: StatusDraft = {
      status: { type: isLocal ? CLUSTER_TYPES.local : CLUSTER_TYPES.peer, conditions: [...(cached.status?.conditions ?? [])] },
      events: [],
    };
    /** Sets a condition; `quiet` when the Event of its change would only repeat another's. */
    const set = (c: ConditionInput, quiet = false): void => {
      const r = setCondition(draft.status.conditions ?? [], c, this.now());
      draft.status.conditions = r.conditions;
      if (r.event && !quiet) draft.events.push(r.event);
    };

    // Not while other Clusters claim this cluster's ID: the mark would vouch for one of them.
    const markFailed = isLocal && this.localRivals(name).length === 0 && !(await this.markOurs(cluster, signal));
    if (!isLocal && cached.status?.conditions?.some((c) => c.type === CLUSTER_CONDITIONS.localConflict.type)) {
      // It stopped claiming the local ID: the remaining claimants may no longer conflict (upstream's check for this never fired).
      draft.status.conditions = removeCondition(draft.status.conditions ?? [], CLUSTER_CONDITIONS.localConflict.type);
      this.enqueueConflicting();
    }
    if (isDisabled(cluster)) {
      this.o.peers.remove(name);
      if (cluster.spec?.clusterID) this.enqueueDescribing(cluster.spec.clusterID, name);
      draft.status = { type: draft.status.type, state: CLUSTER_STATES.disabled, conditions: [] };
      return this.finish(cluster, draft, markFailed ? { requeueAfter: MARK_RETRY_MS } : {}, signal);
    }

    let result: ReconcileResult = this.refresh();
    try {
      // The CRD requires spec.clusterID only once spec is there; a Cluster without it is bad input.
      if (!cluster.spec?.clusterID) throw new ClusterError(CLUSTER_STATES.failed, 'spec.clusterID is missing: set it to the kube-system namespace UID of the cluster this Cluster describes');
      if (isLocal) {
        result = await this.reconcileLocal(cluster, draft, set, signal);
      } else {
        await this.reconcilePeer(cluster, draft, set, signal);
      }
      draft.status.state = CLUSTER_STATES.ready;
      set(conditionOf(CLUSTER_CONDITIONS.ready, true));
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof NotYet) return { requeueAfter: err.retryMs };
      const e = err instanceof ClusterError ? err : new ClusterError(CLUSTER_STATES.failed, errorText(err), true);
      draft.status.state = e.state;
      draft.status.message = e.message;
      set(conditionOf(CLUSTER_CONDITIONS.ready, false, e.message));
      // Whatever stops us reading a peer (its credentials gone, say) also means we cannot tell
      // whether it is in sync: a True from an earlier check would go stale. Ready's Event says it.
      if (!isLocal) set(conditionOf(CLUSTER_CONDITIONS.clustersSynced, false, e.message), true);
      this.o.log.warn({ cluster: name, state: e.state, error: e.message }, 'cluster not ready');
      // Bad input waits for a change (or the refresh); anything else is retried with backoff.
      result = e.transient ? { requeue: true } : this.refresh();
    }
    if (isLocal) {
      for (const type of [CLUSTER_CONDITIONS.clustersSynced.type, CLUSTER_CONDITIONS.peerCacheWithinBudget.type]) draft.status.conditions = removeCondition(draft.status.conditions ?? [], type);
    }
    if (markFailed) result = noLaterThan(result, MARK_RETRY_MS);
    return this.finish(cluster, draft, result, signal);
  };

  /** Other Clusters that claim the local cluster's ID. */
  private localRivals(name: string): Cluster[] {
    return this.o.clusters.store.list().filter((c) => c.spec?.clusterID === this.o.localClusterID && c.metadata?.name !== name);
  }

  /**
   * Marks the local Cluster (a disabled one too) as run by ours. The mark travels with the Cluster
   * to every member, so that each can tell which of its peers run upstream's controller (and need
   * what docs/compatibility.md says). Only a hint: failing to write it fails nothing else, is
   * logged once until it succeeds, and is retried soon (false). The patch is guarded by the
   * version read, so the status written after it never lands on a change it did not see.
   */
  private async markOurs(cluster: Cluster, signal: AbortSignal): Promise<boolean> {
    if (runsOurs(cluster)) return true;
    const name = cluster.metadata.name ?? '';
    try {
      const mark = { metadata: { resourceVersion: cluster.metadata.resourceVersion, annotations: { [ANNOTATIONS.implementation]: OUR_IMPLEMENTATION } } };
      const patched = await this.o.rest.patch<Cluster>(CLUSTERS, undefined, name, 'merge', mark, { signal });
      cluster.metadata = { ...cluster.metadata, annotations: patched.metadata.annotations, resourceVersion: patched.metadata.resourceVersion };
      this.markFailing = false;
      return true;
    } catch (err) {
      if (signal.aborted) throw err;
      // A newer version is on its way through the informer; its reconcile marks it.
      if (isConflict(err) || isNotFound(err)) return true;
      if (!this.markFailing) this.o.log.warn({ cluster: name, error: errorText(err) }, 'marking the local Cluster as run by this controller failed; retrying');
      this.markFailing = true;
      return false;
    }
  }

  /** The periodic refresh; interval 0 turns it off, as upstream's default does. */
  private refresh(): ReconcileResult {
    return this.o.refreshIntervalMs > 0 ? { requeueAfter: this.o.refreshIntervalMs } : {};
  }

  private async finish(cluster: Cluster, draft: StatusDraft, result: ReconcileResult, signal: AbortSignal): Promise<ReconcileResult> {
    if (!isDeepStrictEqual(normalize(cluster.status), normalize(draft.status))) {
      try {
        await this.o.rest.updateStatus(CLUSTERS, undefined, { ...cluster, status: draft.status });
      } catch (err) {
        // A newer version is on its way through the informer; reconcile that one.
        if (isConflict(err)) return { requeue: true };
        if (isNotFound(err)) return {};
        throw err;
      }
    }
    for (const e of draft.events) this.o.events.event(cluster, e.type, e.reason, e.message);
    await this.o.inventory.publish({ ...cluster, status: draft.status }, signal);
    return result;
  }

  private async reconcileLocal(cluster: Cluster, draft: StatusDraft, set: (c: ConditionInput) => void, signal: AbortSignal): Promise<ReconcileResult> {
    const name = cluster.metadata?.name ?? '';
    this.o.peers.remove(name);
    set(conditionOf(CLUSTER_CONDITIONS.localCluster, true));

    const rivals = this.localRivals(name);
    if (rivals.length > 0) {
      // Only rivals that do not know yet: each marked one would otherwise requeue the other forever.
      for (const r of rivals) {
        const marked = r.status?.conditions?.find((c) => c.type === CLUSTER_CONDITIONS.localConflict.type)?.status === 'True';
        if (!marked) this.o.enqueue(r.metadata.name ?? '');
      }
      set(conditionOf(CLUSTER_CONDITIONS.localConflict, true));
      throw new ClusterError(CLUSTER_STATES.failed, `${CLUSTER_CONDITIONS.localConflict.true.message}: ${[name, ...rivals.map((r) => r.metadata?.name ?? '')].sort().join(', ')}`);
    }
    set(conditionOf(CLUSTER_CONDITIONS.localConflict, false));
    try {
      await this.checkNodesListable(signal);
      if (!this.o.nodes.hasSynced()) {
        if (this.now().getTime() - this.started < NODES_PATIENCE_MS && !this.o.nodes.lastError) throw new NotYet('listing the local Nodes');
        throw new Error(nodesUnlistable(this.o.nodes.lastError));
      }
      Object.assign(draft.status, clusterMetadata(this.o.nodes.store.list(), await this.localServerVersion(signal)));
      set(conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, true));
    } catch (err) {
      if (err instanceof NotYet) throw err;
      set(conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, false, errorText(err)));
      throw new ClusterError(CLUSTER_STATES.failed, `cannot read cluster metadata: ${errorText(err)}`, true);
    }

    let result: ReconcileResult = this.refresh();
    const ref = cluster.spec.authInfo?.secretRef;
    const checked = ref?.name && ref.namespace ? credentialsRef(cluster, this.o.namespace) : undefined;
    // Members read credentials only from their controller namespace: they would refuse this entry.
    if (checked && 'problem' in checked) throw new ClusterError(CLUSTER_STATES.invalidAuthInfo, checked.problem);
    if (this.o.manageLocalClusterSecret && checked) {
      try {
        const { recheckAt } = await this.o.reader.ensure(cluster, signal);
        // Token rotation is due even when periodic refresh is off (interval 0).
        const due = Math.max(1000, recheckAt - this.now().getTime());
        result = noLaterThan(result, due);
      } catch (err) {
        throw new ClusterError(CLUSTER_STATES.failed, `cannot maintain the reader credentials Secret ${checked.namespace}/${checked.name}: ${errorText(err)}`, true);
      }
    }
    try {
      await ensureCoreResources(this.o.rest, cluster, { namespace: this.o.namespace, coreSourceEnabled: this.o.coreResourcesSourceEnabled }, signal);
    } catch (err) {
      throw new ClusterError(CLUSTER_STATES.failed, `cannot maintain the core resources: ${errorText(err)}`, true);
    }
    // Another ID in the About API is reported, not fatal: the group goes on by the kube-system UID.
    const idProperty = await this.o.inventory.clusterIDCondition(this.o.localClusterID, signal);
    if (idProperty) set(idProperty);
    else draft.status.conditions = removeCondition(draft.status.conditions ?? [], CLUSTER_CONDITIONS.clusterIDProperty.type);
    return result;
  }

  private async reconcilePeer(cluster: Cluster, draft: StatusDraft, set: (c: ConditionInput) => void, signal: AbortSignal): Promise<void> {
    const name = cluster.metadata?.name ?? '';
    set(conditionOf(CLUSTER_CONDITIONS.localCluster, false));
    // One connection per member: of several Clusters describing one peer, one speaks for it (one
    // this member vouches for before any other), so the same source is never read twice under two
    // names, and an entry another member passed on cannot squat a cluster's identity.
    const speaker = speakerFor(this.o.clusters.store.list(), cluster.spec.clusterID);
    if (speaker && speaker.metadata.name !== name) {
      this.o.peers.remove(name);
      throw new ClusterError(CLUSTER_STATES.failed, `cluster ID ${cluster.spec.clusterID} is already described by Cluster ${speaker.metadata.name ?? ''}; nothing is synced through this one`);
    }
    // The others stop speaking at once (even those that cannot reach it) and say why.
    for (const c of this.o.clusters.store.list()) {
      const other = c.metadata.name ?? '';
      if (c.spec?.clusterID !== cluster.spec.clusterID || other === name) continue;
      if (this.o.peers.get(other)) {
        this.o.peers.remove(other);
        this.o.enqueue(other);
      } else if (c.status?.state === CLUSTER_STATES.ready) this.o.enqueue(other);
    }
    // Entries others introduced fill the places first: one an admin or join wrote is never locked out.
    if (!this.o.peers.get(name) && this.o.peers.all().length >= MAX_PEERS && !vouchedEntry(cluster)) {
      throw new ClusterError(CLUSTER_STATES.failed, `too many peers: at most ${MAX_PEERS} are connected`);
    }
    const ref = credentialsRef(cluster, this.o.namespace);
    if ('problem' in ref) {
      this.o.peers.remove(name);
      throw new ClusterError(ref.missing ? CLUSTER_STATES.missingAuthInfo : CLUSTER_STATES.invalidAuthInfo, ref.problem);
    }
    const kubeconfig = await this.peerKubeconfig(ref.name, signal).catch((err: unknown) => {
      this.o.peers.remove(name);
      throw err;
    });

    let conn: PeerConnection;
    try {
      conn = this.o.peers.ensure({
        name,
        expectedID: cluster.spec.clusterID,
        secretID: `${ref.namespace}/${ref.name}`,
        kubeconfig,
        endpoint: pickEndpoint(cluster, this.o.networkName),
      });
    } catch (err) {
      if (err instanceof PeerConfigError) {
        // Unusable new credentials end the old connection too: the Cluster says what it uses now.
        this.o.peers.remove(name);
        throw new ClusterError(CLUSTER_STATES.invalidAuthInfo, `invalid kubeconfig in Secret ${ref.namespace}/${ref.name}: ${err.message}`);
      }
      throw err;
    }

    const health = conn.health;
    switch (health.state) {
      case 'connecting':
        throw new NotYet('connecting to the peer', CONNECTING_RETRY_MS);
      case 'unreachable':
        throw new ClusterError(CLUSTER_STATES.failed, unreachableMessage(health.since, health.error));
      case 'mismatch': {
        throw new ClusterError(CLUSTER_STATES.failed, `invalid cluster ID: the credentials reach cluster ${health.observedID}, but spec.clusterID is ${cluster.spec.clusterID}; nothing is synced from it`);
      }
      case 'alive':
        break;
    }

    const peer = conn.peer;
    if (!peer) throw new ClusterError(CLUSTER_STATES.failed, 'peer connection closed', true);
    // Reported, not fatal: what fits is still read, and nothing is created or deleted on the word of a cache that does not.
    const overBudget = conn.cacheBudgetExceeded;
    set(conditionOf(CLUSTER_CONDITIONS.peerCacheWithinBudget, overBudget === undefined, overBudget ?? ''));
    const peerNodes = peer.informers.forResource<NodeInfo & KubeObject>({ ...NODES });
    const peerClusters = peer.informers.forResource<Cluster>({ ...CLUSTERS });
    if (!peerNodes.hasSynced() || !peerClusters.hasSynced()) {
      // Over its cache budget, the peer is said to be now, not only once the patience is out.
      if (this.now().getTime() - health.since < PEER_CACHE_PATIENCE_MS && overBudget === undefined) throw new NotYet("reading the peer's registry and nodes");
      const why = overBudget ?? peerClusters.lastError ?? peerNodes.lastError;
      throw new ClusterError(
        CLUSTER_STATES.failed,
        `the peer answers but its Clusters or Nodes could not be listed${why ? ` (${why})` : ''} for ${PEER_CACHE_PATIENCE_MS / 1000}s: check the reader's RBAC and that the CRDs are installed there`,
        true,
      );
    }
    let version: string | undefined;
    try {
      version = await serverVersion(peer.rest, signal);
    } catch (err) {
      set(conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, false, errorText(err)));
      throw new ClusterError(CLUSTER_STATES.failed, `cannot read the peer's version: ${errorText(err)}`, true);
    }
    Object.assign(draft.status, clusterMetadata(peerNodes.store.list(), version) satisfies ClusterMetadata);
    set(conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, true));
    const problems = groupSyncProblems(this.o.clusters.store.list(), peerClusters.store.list());
    set(conditionOf(CLUSTER_CONDITIONS.clustersSynced, problems.length === 0, problems.join(', ')));
  }

  /** The kubeconfig of a peer's credentials Secret (in the controller namespace); bad input is InvalidAuthInfo. */
  private async peerKubeconfig(name: string, signal: AbortSignal): Promise<string> {
    const namespace = this.o.namespace;
    const id = `${namespace}/${name}`;
    // The cache holds only credential-typed Secrets of our namespace; anything else is read directly,
    // so a Secret of the wrong type is reported as such, not as missing.
    let secret = this.o.secrets.store.getByName(namespace, name);
    if (!secret) {
      try {
        secret = await this.o.rest.get<Secret>(SECRETS, namespace, name, { signal });
      } catch (err) {
        if (isForbidden(err)) throw new ClusterError(CLUSTER_STATES.invalidAuthInfo, `cannot read Secret ${id}: forbidden`);
        if (!isNotFound(err)) throw err;
      }
    }
    if (!secret) throw new ClusterError(CLUSTER_STATES.invalidAuthInfo, `credentials Secret ${id} not found`);
    if (secret.type !== CLUSTER_SECRET.type) throw new ClusterError(CLUSTER_STATES.invalidAuthInfo, `invalid secret type of ${id}: ${secret.type ?? ''} (want ${CLUSTER_SECRET.type})`);
    const kubeconfig = secretText(secret, CLUSTER_SECRET.kubeconfigKey);
    if (!kubeconfig) throw new ClusterError(CLUSTER_STATES.invalidAuthInfo, `Secret ${id} has no ${CLUSTER_SECRET.kubeconfigKey} key`);
    return kubeconfig;
  }

  /**
   * A watch that was open when the permission went away keeps running, so a synced cache can
   * outlive the right to read Nodes: the server is asked on every local reconcile.
   */
  private async checkNodesListable(signal: AbortSignal): Promise<void> {
    try {
      await this.o.rest.list(NODES, { limit: 1, signal });
    } catch (err) {
      if (isForbidden(err)) throw new Error(nodesUnlistable('403 Forbidden'));
      throw err;
    }
  }

  private async localServerVersion(signal: AbortSignal): Promise<string> {
    const cached = this.localVersion;
    const now = this.now().getTime();
    if (cached && now - cached.at < Math.max(this.o.refreshIntervalMs, 60_000)) return cached.value;
    const value = await serverVersion(this.o.rest, signal);
    this.localVersion = { value, at: now };
    return value;
  }

  /** A Cluster left or stopped describing `id`: the others describing it may now speak for it. */
  private enqueueDescribing(id: string, except: string): void {
    for (const c of this.o.clusters.store.list()) {
      if (c.spec?.clusterID === id && c.metadata.name !== except) this.o.enqueue(c.metadata.name ?? '');
    }
  }

  /** A deleted or changed Cluster may settle another's conflict: look at every local claimant again. */
  private enqueueConflicting(): void {
    for (const c of this.o.clusters.store.list()) {
      if (c.spec?.clusterID === this.o.localClusterID) this.o.enqueue(c.metadata?.name ?? '');
    }
  }
}

function nodesUnlistable(reason: string | undefined): string {
  return `cannot list Nodes${reason ? ` (${reason})` : ''}: the controller needs get, list and watch on nodes`;
}

async function serverVersion(rest: ObjectReader, signal: AbortSignal): Promise<string> {
  const v = await rest.getJson<{ gitVersion?: string }>('/version', { signal });
  return v.gitVersion ?? '';
}

/** Status as stored: empty arrays and absent fields compare equal. */
function normalize(s: ClusterStatus | undefined): unknown {
  return JSON.parse(JSON.stringify(s ?? {}, (_k, v: unknown) => (Array.isArray(v) && v.length === 0 ? undefined : v))) as unknown;
}

// One connection to a peer cluster: built from the peer's Cluster and its credentials Secret,
// probed every few seconds, and trusted only once the peer proves to be the cluster the Cluster
// resource names (its kube-system UID equals spec.clusterID; upstream kept syncing from a peer with
// the wrong ID). Its informers on the peer start only then, so nothing is read from an unverified peer.
import { createHash } from 'node:crypto';
import { API_GROUP, CLUSTER_SECRET, gvkOf, KINDS, LAST_APPLIED_ANNOTATIONS, NODES, SECRETS, secretText } from '../core/api/index.ts';
import { without } from '../core/api/clone.ts';
import type { Cluster, ClusterFeature, KubeObject, KubernetesAPIEndpoint } from '../core/api/types.ts';
import { annotationsRead, CREDENTIALS_REFUSED, normalizeServerAddress, peerClusterStatus, unusableSettings, type NodeInfo } from '../core/registry/index.ts';
import { ApiError, CacheBudget, ClusterConfig, Discovery, InformerFactory, KubeconfigError, ResponseTooLargeError, RestClient, sleep, withoutManagedFields, type CacheLimits, type Logger, type PeerReader } from '../kube/index.ts';
import { selectPeer } from '../kube/kubeconfig.ts';
import { kubeSystemUID, PeerIdentityError } from './identity.ts';

export interface PeerInputs {
  /** Name of the peer's Cluster resource here. */
  readonly name: string;
  /** spec.clusterID: who the peer must prove to be. */
  readonly expectedID: string;
  /** "<namespace>/<name>" of the credentials Secret. */
  readonly secretID: string;
  readonly kubeconfig: string;
  /** The endpoint picked for our network, if the Cluster lists any. */
  readonly endpoint: KubernetesAPIEndpoint | undefined;
}

export type PeerHealth =
  | { readonly state: 'connecting' }
  | { readonly state: 'alive'; readonly since: number; readonly checkedAt: number }
  | { readonly state: 'unreachable'; readonly error: string; readonly since: number; readonly checkedAt: number }
  | { readonly state: 'mismatch'; readonly observedID: string; readonly checkedAt: number };

/** What a connection is built from; any change rebuilds it (upstream ignored endpoint changes on a live connection). */
export function peerFingerprint(i: PeerInputs): string {
  return createHash('sha256')
    .update(JSON.stringify([i.expectedID, i.secretID, i.kubeconfig, i.endpoint?.serverAddress ?? '', i.endpoint?.caBundle ?? '']))
    .digest('hex');
}

export class PeerConfigError extends Error {
  override readonly name = 'PeerConfigError';
}

/**
 * The peer's kubeconfig with the endpoint override applied: its address and CA replace the
 * kubeconfig's. A peer's kubeconfig arrives through a Secret that peers sync to each other, so it
 * is read in peer mode: inline credentials for an https server only. Anything else is refused
 * before a file is read or a connection made, since a file path, an exec plugin or an auth
 * provider would let one compromised member read our files (our own token) or run commands on
 * every other member.
 */
export function peerClusterConfig(i: PeerInputs): ClusterConfig {
  const field = 'spec.kubernetesApiEndpoints[].serverAddress';
  let address: string | undefined;
  if (i.endpoint?.serverAddress) {
    try {
      address = normalizeServerAddress(i.endpoint.serverAddress);
    } catch {
      throw new PeerConfigError(`${field} is not a valid URL`);
    }
  }
  try {
    return ClusterConfig.forPeer(i.kubeconfig, { server: address === undefined ? undefined : { address, field }, caData: i.endpoint?.caBundle || undefined });
  } catch (err) {
    throw new PeerConfigError(err instanceof KubeconfigError ? err.message : 'unreadable kubeconfig');
  }
}

/**
 * Where the kubeconfig of a credentials Secret sends its token (server, CA and TLS server name,
 * as one comparable text); undefined when it cannot be read as a peer's kubeconfig.
 */
export function credentialsTarget(secret: KubeObject): string | undefined {
  const text = secretText(secret, CLUSTER_SECRET.kubeconfigKey);
  if (!text) return undefined;
  try {
    const sel = selectPeer(text);
    return JSON.stringify([sel.server, sel.cluster.caData ?? '', sel.cluster.tlsServerName ?? '']);
  } catch {
    return undefined;
  }
}

/**
 * What our caches keep of a peer's objects: no field ownership and no last-applied records (a
 * second copy of the object, which every copy drops), which nothing read from a peer looks at; of
 * its ClusterFeatures only what rules are gated on (a feature's name and labels), since a peer may
 * make them as large as it likes and they are never copied; of its ResourceSyncRules no status:
 * every member writes its own entry there, so a rule grows with the group, and the relay copies
 * rules without status; and of its Clusters' status only what is read of it (see
 * peerClusterStatus): a peer holds a Cluster per member, and their copies carry no status.
 */
export function peerCacheTransform(obj: KubeObject): KubeObject {
  const g = gvkOf(obj);
  if (g.group === '' && g.kind === 'Node') return nodeInfoOf(obj);
  dropLastApplied(obj);
  if (g.group === API_GROUP && g.kind === KINDS.resourceSyncRule) {
    return withoutManagedFields(without(obj, ['status']));
  }
  if (g.group === API_GROUP && g.kind === KINDS.cluster) {
    const c = obj as Cluster;
    if (c.status) c.status = peerClusterStatus(c.status);
    return withoutManagedFields(obj);
  }
  if (g.group !== API_GROUP || g.kind !== KINDS.clusterFeature) return withoutManagedFields(obj);
  const { name, uid, resourceVersion, labels, deletionTimestamp } = obj.metadata;
  const featureName = (obj as ClusterFeature).spec?.featureName;
  const kept: ClusterFeature = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name, uid, resourceVersion, ...(labels ? { labels } : {}), ...(deletionTimestamp ? { deletionTimestamp } : {}) },
    spec: { featureName: typeof featureName === 'string' ? featureName : '' },
  };
  return kept;
}

function dropLastApplied(obj: KubeObject): void {
  const annotations = obj.metadata.annotations;
  if (!annotations || !LAST_APPLIED_ANNOTATIONS.some((k) => Object.hasOwn(annotations, k))) return;
  obj.metadata.annotations = without(annotations, LAST_APPLIED_ANNOTATIONS);
}

/** Of a peer's Node, what its Cluster's metadata is made of (a peer's Nodes may be many and large). */
function nodeInfoOf(node: KubeObject): KubeObject {
  const n = node as NodeInfo & KubeObject;
  const { name, uid, resourceVersion, labels, annotations } = n.metadata;
  const kept = annotationsRead(annotations ?? {});
  const { kubeletVersion, kubeProxyVersion } = n.status?.nodeInfo ?? {};
  const info: KubeObject = {
    apiVersion: n.apiVersion,
    kind: n.kind,
    metadata: { name, uid, resourceVersion, ...(labels ? { labels } : {}), ...(Object.keys(kept).length > 0 ? { annotations: kept } : {}) },
    ...(n.spec?.providerID !== undefined ? { spec: { providerID: n.spec.providerID } } : {}),
    status: { nodeInfo: { ...(kubeletVersion !== undefined ? { kubeletVersion } : {}), ...(kubeProxyVersion !== undefined ? { kubeProxyVersion } : {}) } },
  };
  return info;
}

export interface PeerConnectionOptions {
  readonly inputs: PeerInputs;
  readonly healthIntervalMs: number;
  /**
   * What our caches of the peer may hold (it decides what it serves): the registry's (its
   * Clusters, features, rules, Nodes and credentials) and the rules' sources each this much, all
   * of it within `allPeers`, the budget of every peer's caches together.
   */
  readonly cacheLimits: CacheLimits;
  readonly allPeers: CacheBudget;
  /** The controller namespace: the peer's Secrets there are the registry's. */
  readonly namespace: string;
  /** Called whenever the health state changes, or the peer's caches go over or back within their budget. */
  readonly onChange: (conn: PeerConnection) => void;
  readonly log: Logger;
}

const PROBE_TIMEOUT_MS = 5000;
const PROBE_MAX_RESPONSE_BYTES = 64 * 2 ** 10;

/**
 * Limits for every request to a peer: a member we do not control must not be able to hold our
 * requests or memory (a Retry-After of a day, an endless body, a trickle of bytes).
 */
export const PEER_CLIENT_LIMITS = {
  // We only read from peers: the client itself refuses anything else.
  readOnly: true,
  timeoutMs: 15_000,
  maxRetryAfterMs: 10_000,
  maxResponseBytes: 64 * 2 ** 20,
  maxWatchLineBytes: 16 * 2 ** 20,
} as const;

export interface PeerClients {
  readonly rest: PeerReader;
  readonly informers: InformerFactory;
  readonly discovery: Discovery;
}

export class PeerConnection {
  readonly name: string;
  readonly fingerprint: string;
  readonly inputs: PeerInputs;
  private healthState: PeerHealth = { state: 'connecting' };
  private readonly opts: PeerConnectionOptions;
  private readonly config: ClusterConfig;
  private readonly abort = new AbortController();
  private clients: (PeerClients & { probe: PeerReader }) | undefined;
  private informersStarted = false;
  /** The registry's caches of the peer, and those of the rules' sources: neither can crowd out the other. */
  private readonly budgets: { readonly registry: CacheBudget; readonly sources: CacheBudget };

  /** Throws PeerConfigError for unusable credentials, before anything is read or connected. */
  constructor(opts: PeerConnectionOptions) {
    this.opts = opts;
    this.inputs = opts.inputs;
    this.name = opts.inputs.name;
    this.fingerprint = peerFingerprint(opts.inputs);
    this.config = peerClusterConfig(opts.inputs);
    const onChange = (why: string | undefined): void => {
      if (this.abort.signal.aborted) return;
      if (why) this.opts.log.warn({ peer: this.name, error: why }, 'peer cache budget exceeded');
      else if (this.cacheBudgetExceeded === undefined) this.opts.log.info({ peer: this.name }, 'peer caches within their budget again');
      this.opts.onChange(this);
    };
    this.budgets = {
      registry: new CacheBudget({ limits: opts.cacheLimits, onChange, parent: opts.allPeers }),
      sources: new CacheBudget({ limits: opts.cacheLimits, onChange, parent: opts.allPeers }),
    };
  }

  /** Why our caches of the peer are over their budget (some of its objects not read), or undefined. */
  get cacheBudgetExceeded(): string | undefined {
    return this.budgets.registry.exceeded ?? this.budgets.sources.exceeded;
  }

  /** The budget a cache of the peer is charged to. */
  private budgetFor(scope: { group: string; resource: string; namespace?: string }): CacheBudget {
    const registry = scope.group === API_GROUP || (scope.group === '' && (scope.resource === NODES.resource || (scope.resource === SECRETS.resource && scope.namespace === this.opts.namespace)));
    return registry ? this.budgets.registry : this.budgets.sources;
  }

  get health(): PeerHealth {
    return this.healthState;
  }

  /** Alive and proven to be the cluster its Cluster resource names. */
  get verified(): boolean {
    return this.healthState.state === 'alive';
  }

  /** Has been verified at least once: its informers run (and keep their caches while it is unreachable). */
  get opened(): boolean {
    return this.informersStarted;
  }

  /** The peer's clients and informers; only while verified. */
  get peer(): PeerClients | undefined {
    return this.verified ? this.clients : undefined;
  }

  /** The clients of a connection that has been verified once, whatever its health now. */
  get openedClients(): PeerClients | undefined {
    return this.informersStarted ? this.clients : undefined;
  }

  /**
   * Builds the clients, then probes at once and every interval until stopped; health changes are
   * reported through onChange. Never blocks the caller: the first probe's outcome arrives
   * as a health change.
   */
  start(): void {
    const loop = async (): Promise<void> => {
      try {
        const conn = await this.config.connection();
        // Stopped meanwhile: clients made now would never be closed (nor their metric series dropped).
        if (this.abort.signal.aborted) return;
        const rest = new RestClient(conn, { ...PEER_CLIENT_LIMITS, userAgent: 'cluster-registry/peer', peer: this.name });
        // Probes share the peer's one connection, with no retries and a short deadline, so a slow
        // peer is seen as slow at once. A probe reads one namespace: a large answer is a
        // misbehaving peer, not a big cluster.
        const probe = rest.withOptions({ timeoutMs: PROBE_TIMEOUT_MS, maxRetries: 0, maxResponseBytes: PROBE_MAX_RESPONSE_BYTES, userAgent: 'cluster-registry/probe' });
        const discovery = new Discovery(rest);
        // Nothing read from a peer looks at field ownership: its caches leave it out.
        const informers = new InformerFactory({ cluster: this.name, rest, discovery, transform: peerCacheTransform, budgetFor: (s) => this.budgetFor(s), logger: this.opts.log });
        this.clients = { rest, probe, discovery, informers };
      } catch (err) {
        if (this.abort.signal.aborted) return;
        this.report({ state: 'unreachable', error: unusableSettings(err instanceof Error ? err.message : 'error'), since: Date.now(), checkedAt: Date.now() });
        return;
      }
      while (!this.abort.signal.aborted) {
        await this.probeOnce();
        await sleep(this.opts.healthIntervalMs, this.abort.signal);
      }
    };
    void loop();
  }

  stop(): void {
    this.abort.abort();
    this.clients?.rest.close();
    this.clients?.probe.close();
  }

  private async probeOnce(): Promise<void> {
    const clients = this.clients;
    if (!clients) return;
    const now = Date.now();
    let next: PeerHealth;
    try {
      const uid = await kubeSystemUID(clients.probe, this.abort.signal);
      if (uid !== this.inputs.expectedID) {
        next = { state: 'mismatch', observedID: uid, checkedAt: now };
      } else {
        next = { state: 'alive', since: this.healthState.state === 'alive' ? this.healthState.since : now, checkedAt: now };
      }
    } catch (err) {
      if (this.abort.signal.aborted) return;
      const since = this.healthState.state === 'unreachable' ? this.healthState.since : now;
      next = { state: 'unreachable', error: describeProbeError(err), since, checkedAt: now };
    }
    if (next.state === 'alive' && !this.informersStarted) {
      this.informersStarted = true;
      clients.informers.start(this.abort.signal);
    }
    this.report(next);
  }

  private report(next: PeerHealth): void {
    // A probe that finished after stop() must not revive a closed connection's callbacks.
    if (this.abort.signal.aborted) return;
    const prev = this.healthState;
    const changed = next.state !== prev.state || (next.state === 'unreachable' && prev.state === 'unreachable' && next.error !== prev.error);
    this.healthState = next;
    if (changed) {
      this.opts.log.info({ peer: this.name, state: next.state, ...(next.state === 'unreachable' ? { error: next.error } : {}) }, 'peer health changed');
      this.opts.onChange(this);
    }
  }
}

/** A short, secret-free reason for a failed probe. */
function describeProbeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 401) return CREDENTIALS_REFUSED.unauthorized;
    if (err.code === 403) return CREDENTIALS_REFUSED.forbidden;
    return `the peer answered ${err.code} ${err.reason ?? ''}`.trim();
  }
  if (err instanceof PeerIdentityError) return err.message;
  const e = err as { code?: string; message?: string; name?: string };
  if (e.code) return `cannot reach the peer: ${e.code}`;
  if (err instanceof ResponseTooLargeError) return "the peer's answer is larger than a probe may read";
  // Other messages may quote what the peer sent, so only the kind of failure is said.
  if (e.name === 'TimeoutError' || /timeout|timed out/i.test(e.message ?? '')) return `the peer did not answer within ${PROBE_TIMEOUT_MS / 1000}s`;
  return `cannot reach the peer: ${e.name ?? 'error'}`;
}

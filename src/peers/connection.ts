// One connection to a peer cluster: built from the peer's Cluster and its credentials Secret,
// probed every few seconds, and trusted only once the peer proves to be the cluster the Cluster
// resource names (its kube-system UID equals spec.clusterID; upstream kept syncing from a peer with
// the wrong ID). Its informers on the peer start only then, so nothing is read from an unverified peer.
import { createHash } from 'node:crypto';
import type { KubernetesAPIEndpoint } from '../core/api/types.ts';
import { normalizeServerAddress } from '../core/registry/index.ts';
import { ApiError, ClusterConfig, Discovery, InformerFactory, KubeconfigError, ResponseTooLargeError, RestClient, sleep, withoutManagedFields, type Logger } from '../kube/index.ts';
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

export interface PeerConnectionOptions {
  readonly inputs: PeerInputs;
  readonly healthIntervalMs: number;
  /** Called whenever the health state changes. */
  readonly onHealthChange: (conn: PeerConnection) => void;
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
  readonly rest: RestClient;
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
  private clients: (PeerClients & { probe: RestClient }) | undefined;
  private informersStarted = false;

  /** Throws PeerConfigError for unusable credentials, before anything is read or connected. */
  constructor(opts: PeerConnectionOptions) {
    this.opts = opts;
    this.inputs = opts.inputs;
    this.name = opts.inputs.name;
    this.fingerprint = peerFingerprint(opts.inputs);
    this.config = peerClusterConfig(opts.inputs);
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
   * reported through onHealthChange. Never blocks the caller: the first probe's outcome arrives
   * as a health change.
   */
  start(): void {
    const loop = async (): Promise<void> => {
      try {
        const conn = await this.config.connection();
        const rest = new RestClient(conn, { ...PEER_CLIENT_LIMITS, userAgent: 'cluster-registry/peer' });
        // Probes get their own socket and no retries, so a slow peer is seen as slow at once.
        // A probe reads one namespace: a large answer is a misbehaving peer, not a big cluster.
        const probe = new RestClient(conn, { ...PEER_CLIENT_LIMITS, timeoutMs: PROBE_TIMEOUT_MS, maxRetries: 0, maxResponseBytes: PROBE_MAX_RESPONSE_BYTES, userAgent: 'cluster-registry/probe' });
        const discovery = new Discovery(rest);
        // Nothing read from a peer looks at field ownership: its caches leave it out.
        const informers = new InformerFactory({ cluster: this.name, rest, discovery, transform: withoutManagedFields, logger: this.opts.log });
        this.clients = { rest, probe, discovery, informers };
      } catch (err) {
        if (this.abort.signal.aborted) return;
        this.report({ state: 'unreachable', error: `unusable connection settings: ${err instanceof Error ? err.message : 'error'}`, since: Date.now(), checkedAt: Date.now() });
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
      this.opts.onHealthChange(this);
    }
  }
}

/** A short, secret-free reason for a failed probe. */
function describeProbeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 401) return 'the peer rejected our credentials (401 Unauthorized)';
    if (err.code === 403) return 'our credentials may not read the kube-system namespace (403 Forbidden)';
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

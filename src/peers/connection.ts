// One connection to a peer cluster: built from the peer's Cluster and its credentials Secret,
// probed every few seconds, and trusted only once the peer proves to be the cluster the Cluster
// resource names (its kube-system UID equals spec.clusterID; upstream bug 14). Its informers on
// the peer start only then, so nothing is read from an unverified peer.
import { createHash } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubernetesAPIEndpoint } from '../core/api/types.ts';
import { normalizeServerAddress } from '../core/registry/index.ts';
import { ApiError, ClusterConfig, Discovery, InformerFactory, RestClient, sleep, type Logger } from '../kube/index.ts';
import { kubeSystemUID } from './identity.ts';

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

/** What a connection is built from; any change rebuilds it (upstream bug 5). */
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
 * kubeconfig's. A peer's kubeconfig arrives through a Secret that peers sync to each other, so
 * it may only carry inline credentials: an exec plugin, an auth provider or a file path would let
 * one compromised member run commands or read files (our own token) on every other member.
 */
export function peerClusterConfig(i: PeerInputs): ClusterConfig {
  let base: KubeConfig;
  try {
    base = ClusterConfig.fromString(i.kubeconfig).kubeConfig;
  } catch (err) {
    throw new PeerConfigError(err instanceof Error ? err.message : 'unreadable kubeconfig');
  }
  const current = base.getCurrentCluster();
  if (!current) throw new PeerConfigError('the kubeconfig has no current cluster');
  const user = base.getCurrentUser();
  if (!user) throw new PeerConfigError('the kubeconfig has no current user');
  const refused = [
    user.exec && 'an exec plugin',
    user.authProvider && 'an auth provider',
    user.certFile && 'a client-certificate file',
    user.keyFile && 'a client-key file',
    current.caFile && 'a certificate-authority file',
  ].filter(Boolean);
  if (refused.length > 0) {
    throw new PeerConfigError(`peer credentials must be inline (token or client certificate data); this kubeconfig uses ${refused.join(', ')}`);
  }
  let server = current.server;
  if (i.endpoint?.serverAddress) {
    try {
      server = normalizeServerAddress(i.endpoint.serverAddress);
    } catch {
      throw new PeerConfigError(`invalid kubernetesApiEndpoints serverAddress ${JSON.stringify(i.endpoint.serverAddress)}`);
    }
  }
  const caData = i.endpoint?.caBundle || current.caData;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...current, server, caData }],
    users: [user],
    contexts: [{ name: 'peer', cluster: current.name, user: user.name }],
    currentContext: 'peer',
  });
  return ClusterConfig.fromKubeConfig(kc);
}

export interface PeerConnectionOptions {
  readonly inputs: PeerInputs;
  readonly healthIntervalMs: number;
  /** Called whenever the health state changes. */
  readonly onHealthChange: () => void;
  readonly log: Logger;
}

const PROBE_TIMEOUT_MS = 5000;

export class PeerConnection {
  readonly name: string;
  readonly fingerprint: string;
  readonly inputs: PeerInputs;
  private healthState: PeerHealth = { state: 'connecting' };
  private readonly opts: PeerConnectionOptions;
  private readonly abort = new AbortController();
  private clients: { rest: RestClient; probe: RestClient; informers: InformerFactory } | undefined;
  private informersStarted = false;

  constructor(opts: PeerConnectionOptions) {
    this.opts = opts;
    this.inputs = opts.inputs;
    this.name = opts.inputs.name;
    this.fingerprint = peerFingerprint(opts.inputs);
  }

  get health(): PeerHealth {
    return this.healthState;
  }

  /** Alive and proven to be the cluster its Cluster resource names. */
  get verified(): boolean {
    return this.healthState.state === 'alive';
  }

  /** The peer's REST client and informers; only once verified. */
  get peer(): { rest: RestClient; informers: InformerFactory } | undefined {
    return this.verified ? this.clients : undefined;
  }

  /**
   * Builds the clients and runs the first probe. Throws PeerConfigError for unusable
   * credentials; an unreachable peer is a health state, not an error.
   */
  async open(): Promise<void> {
    const config = peerClusterConfig(this.inputs);
    let conn: Awaited<ReturnType<ClusterConfig['connection']>>;
    try {
      conn = await config.connection();
    } catch (err) {
      throw new PeerConfigError(`unusable connection settings: ${err instanceof Error ? err.message : 'error'}`);
    }
    const rest = new RestClient(conn, { timeoutMs: 15_000, userAgent: 'cluster-registry/peer' });
    // Probes get their own socket and no retries, so a slow peer is seen as slow at once.
    const probe = new RestClient(conn, { timeoutMs: PROBE_TIMEOUT_MS, maxRetries: 0, userAgent: 'cluster-registry/probe' });
    const informers = new InformerFactory({ cluster: this.name, rest, discovery: new Discovery(rest), logger: this.opts.log });
    this.clients = { rest, probe, informers };
    await this.probeOnce();
  }

  /** Probes every interval until stopped. */
  start(): void {
    const loop = async (): Promise<void> => {
      while (!this.abort.signal.aborted) {
        await sleep(this.opts.healthIntervalMs, this.abort.signal);
        if (this.abort.signal.aborted) break;
        await this.probeOnce();
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
    // A probe that finished after stop() must not revive a closed connection's callbacks.
    if (this.abort.signal.aborted) return;
    const changed = next.state !== this.healthState.state || (next.state === 'unreachable' && this.healthState.state === 'unreachable' && next.error !== this.healthState.error);
    this.healthState = next;
    if (next.state === 'alive' && !this.informersStarted) {
      this.informersStarted = true;
      clients.informers.start(this.abort.signal);
    }
    if (changed) {
      this.opts.log.info({ peer: this.name, state: next.state, ...(next.state === 'unreachable' ? { error: next.error } : {}) }, 'peer health changed');
      this.opts.onHealthChange();
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
  const e = err as { code?: string; message?: string; name?: string };
  if (e.code) return `cannot reach the peer: ${e.code}`;
  if (e.name === 'TimeoutError' || /timeout|timed out/i.test(e.message ?? '')) return `the peer did not answer within ${PROBE_TIMEOUT_MS / 1000}s`;
  return `cannot reach the peer: ${e.name ?? 'error'}`;
}

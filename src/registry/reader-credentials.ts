// The local Cluster's reader kubeconfig Secret, in upstream's format but with a
// bounded-lifetime token from the TokenRequest API instead of a long-lived token Secret. The
// token is rotated when a third of its lifetime is left; peers pick the new Secret up without
// restarting, and the old token stays valid until it expires, so no peer loses its connection.
import { CLUSTER_SECRET } from '../core/api/keys.ts';
import { COPY_MARKS, hasCopyMarks } from '../core/api/source-identity.ts';
import type { Cluster } from '../core/api/types.ts';
import { endpointCA, mergeCABundles, normalizeServerAddress, pickEndpoint, readerKubeconfig } from '../core/registry/index.ts';
import { isNotFound, parsePeerKubeconfig, type Logger, type RestClient } from '../kube/index.ts';
import { SECRETS, secretText, type Secret } from '../core/api/resources.ts';

export interface ReaderCredentialsOptions {
  readonly rest: RestClient;
  /** Namespace of the reader ServiceAccount (the controller namespace). */
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly ttlSeconds: number;
  /** Rotate this often; 0 rotates when a third of the lifetime is left. */
  readonly refreshSeconds: number;
  readonly apiServerEndpointAddress: string;
  /** PEM of the CA the controller itself trusts for the local API server. */
  readonly localCA: string | undefined;
  readonly log: Logger;
  readonly now?: () => number;
}

/** Rotate when less than this share of the token's lifetime is left. */
const ROTATE_AT_REMAINING = 1 / 3;
/**
 * How much longer than our TTL a token in the reader Secret may live before it counts as planted:
 * the API server issues exactly the lifetime asked for, so any margin only absorbs rounding.
 */
const LIFETIME_TOLERANCE = 1.1;

interface TokenTimes {
  readonly issuedAt: number;
  readonly expiresAt: number;
}

interface TokenClaims extends TokenTimes {
  readonly subject: string;
}

/**
 * iat/exp/sub of a JWT, unverified. The subject is checked all the same: a valid token says truly
 * whose it is, so one of another identity in our Secret is never handed to peers, and a forged
 * one gains nothing (the API server refuses it).
 */
function tokenClaims(token: string): TokenClaims | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat?: unknown; exp?: unknown; sub?: unknown };
    if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number') return undefined;
    return { issuedAt: payload.iat * 1000, expiresAt: payload.exp * 1000, subject: typeof payload.sub === 'string' ? payload.sub : '' };
  } catch {
    return undefined;
  }
}

function withoutKeys(map: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> | undefined {
  if (!map) return undefined;
  const rest = Object.fromEntries(Object.entries(map).filter(([k]) => !keys.includes(k)));
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** When a token with these times is due for rotation (ms since the epoch). */
export function rotationDue(t: TokenTimes, refreshSeconds = 0): number {
  const byLifetime = t.expiresAt - (t.expiresAt - t.issuedAt) * ROTATE_AT_REMAINING;
  return refreshSeconds > 0 ? Math.min(byLifetime, t.issuedAt + refreshSeconds * 1000) : byLifetime;
}

/** The token in the Secret's kubeconfig, read as strictly as a peer's (anyone may have written it). */
export function tokenOf(kubeconfig: string | undefined): string | undefined {
  if (!kubeconfig) return undefined;
  try {
    return [...parsePeerKubeconfig(kubeconfig).users.values()][0]?.token;
  } catch {
    return undefined;
  }
}

export class ReaderCredentialsError extends Error {
  override readonly name = 'ReaderCredentialsError';
}

export class ReaderCredentials {
  private readonly o: ReaderCredentialsOptions;
  private readonly now: () => number;
  /** The last token the API server issued us. */
  private lastMinted: string | undefined;

  constructor(opts: ReaderCredentialsOptions) {
    this.o = opts;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Makes the Secret named by the local Cluster's secretRef hold a current reader kubeconfig.
   * Returns when it should be checked again (the token's rotation time).
   */
  async ensure(cluster: Cluster, signal: AbortSignal): Promise<{ recheckAt: number }> {
    const ref = cluster.spec.authInfo?.secretRef;
    if (!ref?.name || !ref.namespace) throw new ReaderCredentialsError('the local Cluster has no spec.authInfo.secretRef name and namespace');
    const current = await this.getSecret(ref.namespace, ref.name, signal);
    const currentKubeconfig = current?.type === CLUSTER_SECRET.type ? secretText(current, CLUSTER_SECRET.kubeconfigKey) : undefined;
    const endpoint = pickEndpoint(cluster, '');
    const server = await this.serverAddress(endpoint?.serverAddress, signal);
    const caPem = mergeCABundles(this.o.localCA, endpointCA(endpoint));
    const clusterName = cluster.metadata?.name ?? ref.name;

    let token = tokenOf(currentKubeconfig);
    const claims = token ? tokenClaims(token) : undefined;
    const ours = `system:serviceaccount:${this.o.namespace}:${this.o.serviceAccount}`;
    if (claims && claims.subject !== ours) this.o.log.warn({ secret: `${ref.namespace}/${ref.name}` }, 'the reader Secret held a token of another identity; issuing our own');
    // A token our peers would keep using for longer than ours live (planted by someone who may
    // write that Secret) is replaced; one the API server gave us is taken as it is.
    const outlives = claims !== undefined && token !== this.lastMinted && claims.expiresAt - claims.issuedAt > this.o.ttlSeconds * 1000 * LIFETIME_TOLERANCE;
    if (outlives) this.o.log.warn({ secret: `${ref.namespace}/${ref.name}` }, 'the reader Secret held a token that lives longer than ours; issuing our own');
    const rotated = !claims || claims.subject !== ours || outlives || this.now() >= rotationDue(claims, this.o.refreshSeconds);
    if (rotated) {
      token = await this.mintToken(signal);
      this.lastMinted = token;
    }
    const kubeconfig = readerKubeconfig({ clusterName, userName: this.o.serviceAccount, server, caPem, token: token ?? '' });

    if (kubeconfig !== currentKubeconfig || hasCopyMarks(current)) await this.write(ref.namespace, ref.name, kubeconfig, current, signal);
    if (rotated) this.o.log.info({ secret: `${ref.namespace}/${ref.name}` }, 'reader token issued');
    const fresh = tokenClaims(token ?? '');
    return { recheckAt: fresh ? rotationDue(fresh, this.o.refreshSeconds) : this.now() + 60_000 };
  }

  private async getSecret(namespace: string, name: string, signal: AbortSignal): Promise<Secret | undefined> {
    return this.o.rest.getIfExists<Secret>(SECRETS, namespace, name, { signal });
  }

  /** Server address in upstream's order: the Cluster's endpoint, the flag, the API server's own, our connection's. */
  private async serverAddress(fromEndpoint: string | undefined, signal: AbortSignal): Promise<string> {
    if (fromEndpoint) return normalizeServerAddress(fromEndpoint);
    if (this.o.apiServerEndpointAddress) return normalizeServerAddress(this.o.apiServerEndpointAddress);
    try {
      const api = await this.o.rest.json<{ serverAddressByClientCIDRs?: { clientCIDR?: string; serverAddress?: string }[] }>({
        method: 'GET',
        path: '/api',
        signal,
      });
      const own = api.serverAddressByClientCIDRs?.find((e) => e.clientCIDR === '0.0.0.0/0')?.serverAddress;
      if (own) return normalizeServerAddress(own);
    } catch (err) {
      this.o.log.debug({ err }, 'API server address discovery failed; using our own connection address');
    }
    return normalizeServerAddress(this.o.rest.server.origin);
  }

  private async mintToken(signal: AbortSignal): Promise<string> {
    const { namespace, serviceAccount, ttlSeconds } = this.o;
    try {
      const tr = await this.o.rest.json<{ status?: { token?: string } }>({
        method: 'POST',
        path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: ttlSeconds } },
        signal,
      });
      if (!tr.status?.token) throw new ReaderCredentialsError('TokenRequest returned no token');
      return tr.status.token;
    } catch (err) {
      if (isNotFound(err)) {
        throw new ReaderCredentialsError(`reader ServiceAccount ${namespace}/${serviceAccount} not found: create it (the deploy manifests and chart do)`);
      }
      throw err;
    }
  }

  private async write(namespace: string, name: string, kubeconfig: string, current: Secret | undefined, signal: AbortSignal): Promise<void> {
    const desired: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      type: CLUSTER_SECRET.type,
      data: { [CLUSTER_SECRET.kubeconfigKey]: Buffer.from(kubeconfig).toString('base64') },
    };
    if (current && current.type !== CLUSTER_SECRET.type) {
      // A Secret's type is immutable: replace one of another type (upstream recreates it too).
      this.o.log.info({ secret: `${namespace}/${name}`, type: current.type }, 'replacing a Secret of another type with the reader kubeconfig');
      await this.o.rest.delete(SECRETS, namespace, name, { signal, preconditions: { uid: current.metadata?.uid } });
      current = undefined;
    }
    if (!current) {
      await this.o.rest.create(SECRETS, namespace, desired, { signal });
      return;
    }
    // Keep the Secret's other metadata (labels and annotations others set); replace only data and
    // type, and drop any mark of a copy: our own reader Secret is local, nobody's copy to delete or replace.
    const metadata = { ...current.metadata, annotations: withoutKeys(current.metadata?.annotations, COPY_MARKS.annotations), labels: withoutKeys(current.metadata?.labels, COPY_MARKS.labels) };
    await this.o.rest.update(SECRETS, namespace, { ...current, metadata, type: desired.type, data: desired.data }, { signal });
  }
}

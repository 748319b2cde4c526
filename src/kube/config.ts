// One KubeConfig per cluster, turned into what our REST client needs: the server URL, TLS
// material for the agents, and a provider of auth headers. client-node's KubeConfig keeps doing
// what it is good at (token files re-read every minute, exec plugins cached until expiry, OIDC);
// we only use it to fill request options, never its API clients.
import { KubeConfig } from '@kubernetes/client-node';
import type https from 'node:https';

export interface TlsSettings {
  ca?: Buffer | string;
  cert?: Buffer | string;
  key?: Buffer | string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export interface ConnectionSettings {
  server: URL;
  tls: TlsSettings;
  /** Headers that authenticate the next request (bearer token, basic auth, impersonation). */
  authHeaders(): Promise<Record<string, string>>;
  /** Forget cached credentials, e.g. after a 401, so the next request re-reads or re-runs them. */
  invalidate(): void;
}

// Headers are memoised briefly: KubeConfig re-reads CA and key files on every call, which would
// otherwise be synchronous file I/O per request.
const AUTH_CACHE_MS = 10_000;

export class ClusterConfig {
  readonly kubeConfig: KubeConfig;

  private constructor(kc: KubeConfig) {
    if (!kc.getCurrentCluster()) throw new Error('kubeconfig has no current cluster');
    this.kubeConfig = kc;
  }

  static fromFile(path: string, context?: string): ClusterConfig {
    return ClusterConfig.load((kc) => kc.loadFromFile(path), context, `file ${path}`);
  }

  /** From kubeconfig text, e.g. the `kubeconfig` key of a cluster Secret. */
  static fromString(kubeconfig: string, context?: string): ClusterConfig {
    return ClusterConfig.load((kc) => kc.loadFromString(kubeconfig), context, 'string');
  }

  /**
   * The pod's service account; the projected token file is re-read every minute, so rotation
   * works. `root` prefixes the service-account paths (a test's fake filesystem).
   */
  static inCluster(root = ''): ClusterConfig {
    return ClusterConfig.load((kc) => kc.loadFromCluster(root), undefined, 'in-cluster service account');
  }

  /** A kubeconfig file when a path is given, else the default locations (the CLI's --kubeconfig). */
  static fromFileOrDefault(path: string | undefined, context?: string): ClusterConfig {
    return path ? ClusterConfig.fromFile(path, context) : ClusterConfig.fromDefault(context);
  }

  /** KUBECONFIG, ~/.kube/config, then in-cluster, like kubectl. */
  static fromDefault(context?: string): ClusterConfig {
    return ClusterConfig.load((kc) => kc.loadFromDefault(), context, 'default locations');
  }

  static fromKubeConfig(kc: KubeConfig): ClusterConfig {
    return new ClusterConfig(kc);
  }

  // Parse errors of a kubeconfig can quote its content (YAML error snippets), so only the source
  // and the error class are reported.
  private static load(fill: (kc: KubeConfig) => void, context: string | undefined, source: string): ClusterConfig {
    const kc = new KubeConfig();
    try {
      fill(kc);
    } catch (err) {
      throw new Error(`cannot load kubeconfig from ${source}: ${err instanceof Error ? err.name : 'error'}`);
    }
    if (context !== undefined) {
      if (!kc.getContextObject(context)) throw new Error(`kubeconfig from ${source} has no context ${JSON.stringify(context)}`);
      kc.setCurrentContext(context);
    }
    return new ClusterConfig(kc);
  }

  get server(): string {
    return this.kubeConfig.getCurrentCluster()?.server ?? '';
  }

  /** The namespace of the current context, if it names one. */
  get namespace(): string | undefined {
    const ctx = this.kubeConfig.getContextObject(this.kubeConfig.getCurrentContext());
    return ctx?.namespace || undefined;
  }

  async connection(): Promise<ConnectionSettings> {
    const server = new URL(this.server);
    const first = await this.requestOptions();
    const tls: TlsSettings = {};
    if (first.ca) tls.ca = first.ca as Buffer;
    if (first.cert) tls.cert = first.cert as Buffer;
    if (first.key) tls.key = first.key as Buffer;
    if (first.rejectUnauthorized !== undefined) tls.rejectUnauthorized = first.rejectUnauthorized;
    if (first.servername) tls.servername = first.servername;
    let cached: { at: number; headers: Record<string, string> } | undefined = { at: Date.now(), headers: headersOf(first) };
    return {
      server,
      tls,
      authHeaders: async () => {
        if (cached && Date.now() - cached.at < AUTH_CACHE_MS) return cached.headers;
        const headers = headersOf(await this.requestOptions());
        cached = { at: Date.now(), headers };
        return headers;
      },
      invalidate: () => {
        cached = undefined;
      },
    };
  }

  // Plain-http servers (test setups) get no TLS and only static credentials: KubeConfig refuses
  // to build options for http unless skipTLSVerify is set.
  private async requestOptions(): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { headers: {} };
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster?.server.startsWith('http:') && !cluster.skipTLSVerify) {
      const user = this.kubeConfig.getCurrentUser();
      if (user?.token) opts.headers = { Authorization: `Bearer ${user.token}` };
      return opts;
    }
    await this.kubeConfig.applyToHTTPSOptions(opts);
    if (opts.auth) {
      (opts.headers as Record<string, string>).Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    }
    return opts;
  }
}

function headersOf(opts: https.RequestOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined) out[k] = String(v);
  return out;
}

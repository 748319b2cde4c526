// A selected kubeconfig context as a connection: its TLS material (files read now) and where
// each request's credentials come from (an inline or file token, basic auth, impersonation, or a
// credential plugin). Only exec plugins and auth providers of our own kubeconfig load
// client-node, lazily: its module graph is large, and its own parser reads token files while
// parsing.
import { readFileSync } from 'node:fs';
import type https from 'node:https';
import { errorCode, KubeconfigError, type KubeUser, type Selected } from './kubeconfig.ts';

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

/** Server URL, TLS material (files read now) and an auth header source for a selected context. */
export async function connect(sel: Selected): Promise<ConnectionSettings> {
  const { cluster } = sel;
  const user = sel.user ?? {};
  const tls: TlsSettings = {};
  const ca = material(cluster.caData, cluster.caFile, 'certificate-authority');
  if (ca) tls.ca = ca;
  const cert = material(user.certData, user.certFile, 'client-certificate');
  if (cert) tls.cert = cert;
  const key = material(user.keyData, user.keyFile, 'client-key');
  if (key) tls.key = key;
  if (cluster.insecureSkipTlsVerify) tls.rejectUnauthorized = false;
  if (cluster.tlsServerName) tls.servername = cluster.tlsServerName;

  let auth: AuthSource;
  if (user.exec || user.authProvider) {
    const plugin = new PluginAuth(sel.server, user);
    // The plugin runs once now: a client certificate it returns has to be in the TLS settings,
    // which are fixed for the life of the connection.
    const first = await plugin.apply();
    if (!tls.cert && first.cert) tls.cert = first.cert as string | Buffer;
    if (!tls.key && first.key) tls.key = first.key as string | Buffer;
    auth = plugin;
  } else {
    auth = staticAuth(user);
    await auth.headers(); // an unreadable token file fails here, not on the first request
  }
  const impersonation = impersonationHeaders(user);
  return {
    server: new URL(sel.server),
    tls,
    authHeaders: async () => ({ ...(await auth.headers()), ...impersonation }),
    invalidate: () => auth.invalidate(),
  };
}

interface AuthSource {
  headers(): Promise<Record<string, string>>;
  invalidate(): void;
}

function material(data: string | undefined, file: string | undefined, key: string): Buffer | undefined {
  if (data) return Buffer.from(data, 'base64');
  if (file) return readOwnFile(file, key);
  return undefined;
}

function readOwnFile(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new KubeconfigError(`cannot read ${key} file ${file}: ${errorCode(err)}`);
  }
}

function staticAuth(user: KubeUser): AuthSource {
  if (user.tokenFile) {
    const file = new TokenFile(user.tokenFile, user.token);
    return { headers: async () => bearer(file.get()), invalidate: () => file.expire() };
  }
  let fixed: Record<string, string> = {};
  if (user.token) fixed = bearer(user.token);
  else if (user.username !== undefined || user.password !== undefined) {
    fixed = { Authorization: `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}` };
  }
  return { headers: async () => fixed, invalidate: () => undefined };
}

function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

function impersonationHeaders(user: KubeUser): Record<string, string> {
  const h: Record<string, string> = {};
  if (user.impersonateUser) h['Impersonate-User'] = user.impersonateUser;
  if (user.impersonateUid) h['Impersonate-Uid'] = user.impersonateUid;
  if (user.impersonateGroup) h['Impersonate-Group'] = user.impersonateGroup;
  return h;
}

const TOKEN_FILE_REFRESH_MS = 60_000;

/**
 * A token file re-read at most once a minute, or at once after expire() (a 401). A failed or
 * empty read keeps the token we have: the last one read, which the server may still accept, or
 * else the kubeconfig's inline token, as in client-go.
 */
class TokenFile {
  private readonly file: string;
  private token: string | undefined;
  private readAt = -Infinity;

  constructor(file: string, fallback: string | undefined) {
    this.file = file;
    this.token = fallback;
  }

  get(): string {
    if (Date.now() - this.readAt >= TOKEN_FILE_REFRESH_MS) {
      let read: string | undefined;
      try {
        read = readFileSync(this.file, 'utf8').trim();
      } catch (err) {
        if (this.token === undefined) throw new KubeconfigError(`cannot read token-file ${this.file}: ${errorCode(err)}`);
      }
      if (read) this.token = read;
      this.readAt = Date.now();
    }
    if (this.token === undefined) throw new KubeconfigError(`token-file ${this.file} is empty`);
    return this.token;
  }

  expire(): void {
    this.readAt = -Infinity;
  }
}

type ClientNodeKubeConfig = import('@kubernetes/client-node').KubeConfig;

/**
 * Exec plugins and auth providers (OIDC and the cloud ones), delegated to client-node, which
 * caches a plugin's credential until it expires. Only the user's plugin is handed over: CA and
 * client certificate come from us, so client-node reads none of those files.
 */
class PluginAuth implements AuthSource {
  private readonly server: string;
  private readonly user: KubeUser;
  private kubeConfig: Promise<ClientNodeKubeConfig> | undefined;

  constructor(server: string, user: KubeUser) {
    this.server = server;
    this.user = user;
  }

  async apply(): Promise<https.RequestOptions> {
    this.kubeConfig ??= this.load();
    const opts: https.RequestOptions = { headers: {} };
    await (await this.kubeConfig).applyToHTTPSOptions(opts);
    return opts;
  }

  async headers(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries((await this.apply()).headers ?? {})) if (v !== undefined) out[k] = String(v);
    return out;
  }

  // A fresh KubeConfig has no cached credential, so the plugin runs again on the next request.
  invalidate(): void {
    this.kubeConfig = undefined;
  }

  private async load(): Promise<ClientNodeKubeConfig> {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'cluster', server: this.server, skipTLSVerify: false }],
      users: [{ name: 'user', exec: this.user.exec, authProvider: this.user.authProvider }],
      contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
      currentContext: 'context',
    });
    return kc;
  }
}

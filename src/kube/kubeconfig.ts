// Our kubeconfig loader, in two modes because the two kinds of kubeconfig deserve different trust.
// - own: our file, KUBECONFIG, ~/.kube/config or the pod's service account. It may name files
//   (token, CA, client certificate), use basic auth, impersonation or a credential plugin.
// - peer: text from a Secret that a possibly hostile member cluster wrote. An allow-list of keys
//   (https server, CA data, inline token or client certificate) is checked on the parsed text, so
//   no key can make us read a file, run a command, skip TLS verification or send anything but
//   the inline credentials: the model a peer kubeconfig yields refers to nothing outside itself.
// How a selected context's credentials are sent is credentials.ts's part.
import { existsSync, readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Scalar } from 'yaml';

/**
 * A kubeconfig that cannot be used. The message names keys and positions, never a credential or
 * the kubeconfig's text; only errors about files of our own kubeconfig name the file.
 */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

export interface KubeCluster {
  server?: string;
  /** Base64 PEM. */
  caData?: string;
  caFile?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  /** A key this entry uses that we cannot honour; refused when the entry is selected. */
  unsupported?: string;
}

export interface KubeUser {
  token?: string;
  tokenFile?: string;
  /** Base64 PEM. */
  certData?: string;
  certFile?: string;
  /** Base64 PEM. */
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  impersonateUser?: string;
  impersonateUid?: string;
  impersonateGroup?: string;
  exec?: Record<string, unknown>;
  authProvider?: Record<string, unknown>;
  unsupported?: string;
}

export interface KubeContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

export interface Kubeconfig {
  clusters: Map<string, KubeCluster>;
  users: Map<string, KubeUser>;
  contexts: Map<string, KubeContext>;
  currentContext?: string;
}

/** One context resolved: what a connection is built from. */
export interface Selected {
  readonly context: string;
  /** The server URL without a trailing slash. */
  readonly server: string;
  readonly cluster: KubeCluster;
  /** Undefined when the context names no user (anonymous). */
  readonly user: KubeUser | undefined;
  readonly namespace: string | undefined;
}

/** Our override of a peer's address and CA, e.g. from its Cluster's endpoint for our network. */
export interface PeerOverride {
  /** `field` names where the address came from, for the message of a refusal. */
  readonly server?: { readonly address: string; readonly field: string };
  /** Base64 PEM that replaces the kubeconfig's CA. */
  readonly caData?: string;
}

type Mode = 'own' | 'peer';

type Section = 'clusters' | 'users' | 'contexts';

const PEER_TOP_KEYS: ReadonlySet<string> = new Set(['apiVersion', 'kind', 'clusters', 'users', 'contexts', 'current-context', 'preferences', 'extensions']);
const PEER_KEYS: Record<Section, ReadonlySet<string>> = {
  clusters: new Set(['server', 'certificate-authority-data', 'tls-server-name']),
  users: new Set(['token', 'client-certificate-data', 'client-key-data']),
  contexts: new Set(['cluster', 'user', 'namespace']),
};

/** A peer's kubeconfig: only keys of the allow-list, an https server, nothing read from disk. */
export function parsePeerKubeconfig(text: string): Kubeconfig {
  return build(parseYaml(text, 'peer'), 'peer', undefined);
}

/** Our own kubeconfig text; relative file paths resolve against `dir` (else the working directory). */
export function parseKubeconfig(text: string, dir?: string): Kubeconfig {
  return build(parseYaml(text, 'own'), 'own', dir);
}

export function loadKubeconfigFile(path: string): Kubeconfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`cannot read ${path}: ${errorCode(err)}`);
  }
  return parseKubeconfig(text, dirname(resolve(path)));
}

/**
 * Several kubeconfig files merged as kubectl merges KUBECONFIG: missing files are skipped, and
 * the first file that sets a cluster, user, context or the current context wins.
 */
export function loadKubeconfigFiles(paths: readonly string[]): Kubeconfig {
  const merged = emptyKubeconfig();
  let loaded = 0;
  for (const path of new Set(paths.filter(Boolean))) {
    if (!existsSync(path)) continue;
    let kc: Kubeconfig;
    try {
      kc = loadKubeconfigFile(path);
    } catch (err) {
      throw err instanceof KubeconfigError ? new KubeconfigError(`${path}: ${err.message}`) : err;
    }
    loaded++;
    merged.currentContext ??= kc.currentContext;
    firstWins(merged.clusters, kc.clusters);
    firstWins(merged.users, kc.users);
    firstWins(merged.contexts, kc.contexts);
  }
  if (loaded === 0) throw new KubeconfigError('none of the kubeconfig files exists');
  return merged;
}

/** KUBECONFIG, else ~/.kube/config, else the pod's service account, like kubectl. */
export function defaultKubeconfig(): Kubeconfig {
  const env = process.env.KUBECONFIG;
  if (env) return loadKubeconfigFiles(env.split(delimiter));
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return loadKubeconfigFile(home);
  return inClusterKubeconfig();
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const IN_CLUSTER = 'in-cluster';

/**
 * The pod's service account. Its token is a file the kubelet rotates, so it is re-read like any
 * token-file. `root` prefixes the service-account paths (a test's fake filesystem).
 */
export function inClusterKubeconfig(root = ''): Kubeconfig {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new KubeconfigError('not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  const dir = `${root}${SERVICE_ACCOUNT_DIR}`;
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    // A pod without the namespace file has no default namespace.
  }
  const kc = emptyKubeconfig();
  kc.clusters.set(IN_CLUSTER, { server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile: join(dir, 'ca.crt') });
  kc.users.set(IN_CLUSTER, { tokenFile: join(dir, 'token') });
  kc.contexts.set(IN_CLUSTER, { cluster: IN_CLUSTER, user: IN_CLUSTER, namespace });
  kc.currentContext = IN_CLUSTER;
  return kc;
}

/** The named context, or the current one. Names from the kubeconfig never appear in errors. */
export function selectContext(kc: Kubeconfig, context?: string): Selected {
  const name = context ?? kc.currentContext;
  if (name === undefined) throw new KubeconfigError('the kubeconfig has no current context');
  const ctx = kc.contexts.get(name);
  if (!ctx) throw new KubeconfigError(context !== undefined ? `the kubeconfig has no context ${JSON.stringify(context)}` : 'the current context is not defined');
  const cluster = ctx.cluster === undefined ? undefined : kc.clusters.get(ctx.cluster);
  if (!cluster) throw new KubeconfigError("the context's cluster is not defined");
  if (!cluster.server) throw new KubeconfigError("the context's cluster has no server");
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new KubeconfigError("the context's cluster server is not a valid URL");
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new KubeconfigError("the context's cluster server must be an http or https URL");
  const user = ctx.user === undefined ? undefined : kc.users.get(ctx.user);
  if (ctx.user !== undefined && !user) throw new KubeconfigError("the context's user is not defined");
  const unsupported = cluster.unsupported ?? user?.unsupported;
  if (unsupported) throw new KubeconfigError(`${unsupported} is not supported`);
  return { context: name, server: cluster.server.replace(/\/$/, ''), cluster, user, namespace: ctx.namespace };
}

/**
 * A peer's current context with our override applied: the override's address (https only, like
 * the kubeconfig's) and CA replace the kubeconfig's. A peer must name a user.
 */
export function selectPeer(text: string, override: PeerOverride = {}): Selected {
  const sel = selectContext(parsePeerKubeconfig(text));
  if (!sel.user) throw new KubeconfigError('the current context names no user');
  const name = sel.cluster.tlsServerName;
  if (name !== undefined && !isDnsName(name)) throw new KubeconfigError('the cluster tls-server-name is not a DNS name (at most 253 characters, labels of at most 63)');
  const server = override.server ? httpsServer(override.server.address, override.server.field) : sel.server;
  hostNameChecked(server, override.server?.field ?? 'the server');
  return { ...sel, server: server.replace(/\/$/, ''), cluster: { ...sel.cluster, caData: override.caData ?? sel.cluster.caData } };
}

// ---- parsing

function emptyKubeconfig(): Kubeconfig {
  return { clusters: new Map(), users: new Map(), contexts: new Map() };
}

function firstWins<T>(into: Map<string, T>, from: Map<string, T>): void {
  for (const [name, value] of from) if (!into.has(name)) into.set(name, value);
}

// Parsing costs grow with the text. A peer's kubeconfig is a few KB (a CA, a token or client
// certificate); ours may list many clusters, and gets a bound no real one comes near.
const MAX_SIZE: Record<Mode, { bytes: number; text: string }> = {
  peer: { bytes: 64 << 10, text: '64 KiB' },
  own: { bytes: 16 << 20, text: '16 MiB' },
};

// YAML errors quote the text around the error, which may be a credential, so only the position is
// kept; warnings are silenced for the same reason (the yaml package prints them).
function parseYaml(text: string, mode: Mode): unknown {
  const max = MAX_SIZE[mode];
  if (Buffer.byteLength(text, 'utf8') > max.bytes) throw new KubeconfigError(`the kubeconfig is larger than ${max.text}`);
  const lines = new LineCounter();
  // The package's own check for duplicate keys compares every key with every earlier one.
  const doc = parseDocument(text, { logLevel: 'silent', uniqueKeys: false, lineCounter: lines });
  const [error] = doc.errors;
  if (error) throw notYaml(error.linePos?.[0]);
  const found = inspect(doc.contents);
  if (found.duplicateKey) throw notYaml(found.duplicateKey.range ? lines.linePos(found.duplicateKey.range[0]) : undefined);
  // Resolving aliases takes the package time that grows with the square of the text or worse;
  // kubeconfigs are written without them.
  if (mode === 'peer' && found.alias) throw new KubeconfigError('YAML aliases are not allowed in a peer kubeconfig');
  try {
    return doc.toJS();
  } catch {
    throw new KubeconfigError('not valid YAML (bad alias)');
  }
}

function notYaml(pos: { line: number; col: number } | undefined): KubeconfigError {
  return new KubeconfigError(`not valid YAML${pos ? ` (line ${pos.line}, column ${pos.col})` : ''}`);
}

interface Found {
  /** The first key that repeats one of its mapping, in document order. */
  duplicateKey?: Scalar;
  alias?: boolean;
}

/**
 * One pass over the parsed nodes. Keys are duplicates when the package would call them so: both
 * scalars with the same value (NaN equals nothing). The first is the one the package would report
 * first: it checks a key after the keys nested in it, and before its value in a block mapping but
 * after it in a flow mapping.
 */
function inspect(node: unknown, found: Found = {}): Found {
  if (isAlias(node)) found.alias = true;
  else if (isSeq(node)) for (const item of node.items) inspect(item, found);
  else if (isMap(node)) {
    const keys = new Set<unknown>();
    const check = (key: unknown): void => {
      if (!isScalar(key) || Number.isNaN(key.value)) return;
      if (keys.has(key.value)) found.duplicateKey ??= key;
      keys.add(key.value);
    };
    for (const { key, value } of node.items) {
      inspect(key, found);
      if (!node.flow) check(key);
      inspect(value, found);
      if (node.flow) check(key);
    }
  }
  return found;
}

function build(raw: unknown, mode: Mode, dir: string | undefined): Kubeconfig {
  const top = raw === null || raw === undefined ? {} : mapping(raw, 'the kubeconfig');
  if (mode === 'peer') allowOnly(top, PEER_TOP_KEYS, '');
  const kc = emptyKubeconfig();
  kc.currentContext = text(top['current-context'], 'current-context');
  for (const { name, body, at } of entries(top, 'clusters', 'cluster', mode)) kc.clusters.set(name, clusterOf(body, at, mode, dir));
  for (const { name, body, at } of entries(top, 'users', 'user', mode)) kc.users.set(name, userOf(body, at, dir));
  for (const { name, body, at } of entries(top, 'contexts', 'context', mode)) {
    kc.contexts.set(name, { cluster: text(body.cluster, `${at}.cluster`), user: text(body.user, `${at}.user`), namespace: text(body.namespace, `${at}.namespace`) });
  }
  return kc;
}

// Named entries: `- name: x` plus `cluster:`/`user:`/`context:`. Within a file the last entry of
// a name wins, as in kubectl.
function* entries(top: Record<string, unknown>, section: Section, inner: string, mode: Mode): Generator<{ name: string; body: Record<string, unknown>; at: string }> {
  const list = top[section];
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw new KubeconfigError(`${section} must be a list`);
  for (const [i, item] of list.entries()) {
    const at = `${section}[${i}]`;
    const entry = mapping(item, at);
    if (mode === 'peer') allowOnly(entry, new Set(['name', inner]), `${at}.`);
    const name = text(entry.name, `${at}.name`);
    if (name === undefined) throw new KubeconfigError(`${at}.name is missing`);
    const body = entry[inner] === undefined || entry[inner] === null ? {} : mapping(entry[inner], `${at}.${inner}`);
    if (mode === 'peer') allowOnly(body, PEER_KEYS[section], `${at}.${inner}.`);
    yield { name, body, at: `${at}.${inner}` };
  }
}

function clusterOf(b: Record<string, unknown>, at: string, mode: Mode, dir: string | undefined): KubeCluster {
  const server = text(b.server, `${at}.server`);
  if (mode === 'peer' && server !== undefined) httpsServer(server, `${at}.server`);
  return {
    server,
    caData: text(b['certificate-authority-data'], `${at}.certificate-authority-data`),
    caFile: path(b['certificate-authority'], `${at}.certificate-authority`, dir),
    insecureSkipTlsVerify: flag(b['insecure-skip-tls-verify'], `${at}.insecure-skip-tls-verify`),
    tlsServerName: text(b['tls-server-name'], `${at}.tls-server-name`),
    unsupported: present(b['proxy-url']) ? `${at}.proxy-url` : undefined,
  };
}

function userOf(b: Record<string, unknown>, at: string, dir: string | undefined): KubeUser {
  // One group fits our single-valued headers; more would need one header line each.
  const groups = present(b['as-groups']) ? list(b['as-groups'], `${at}.as-groups`) : [];
  const unsupported = present(b['as-user-extra']) ? `${at}.as-user-extra` : groups.length > 1 ? `${at}.as-groups with more than one group` : undefined;
  return {
    token: text(b.token, `${at}.token`),
    tokenFile: path(b['token-file'], `${at}.token-file`, dir),
    certData: text(b['client-certificate-data'], `${at}.client-certificate-data`),
    certFile: path(b['client-certificate'], `${at}.client-certificate`, dir),
    keyData: text(b['client-key-data'], `${at}.client-key-data`),
    keyFile: path(b['client-key'], `${at}.client-key`, dir),
    username: text(b.username, `${at}.username`),
    password: text(b.password, `${at}.password`),
    impersonateUser: text(b.as, `${at}.as`),
    impersonateUid: text(b['as-uid'], `${at}.as-uid`),
    impersonateGroup: groups[0],
    exec: present(b.exec) ? mapping(b.exec, `${at}.exec`) : undefined,
    authProvider: present(b['auth-provider']) ? mapping(b['auth-provider'], `${at}.auth-provider`) : undefined,
    unsupported,
  };
}

// A key label is only echoed when it looks like a key: a crafted "key" could carry anything.
function allowOnly(obj: Record<string, unknown>, allowed: ReadonlySet<string>, prefix: string): void {
  for (const key of Object.keys(obj)) {
    if (allowed.has(key)) continue;
    const label = /^[A-Za-z][A-Za-z0-9_.-]{0,62}$/.test(key) ? key : '<unexpected key>';
    throw new KubeconfigError(`${prefix}${label} is not allowed in a peer kubeconfig`);
  }
}

/** The https URL a peer may point us at; `at` names the field for errors. */
function httpsServer(server: string, at: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`${at} is not a valid URL`);
  }
  if (url.protocol !== 'https:') throw new KubeconfigError(`${at} must be an https URL`);
  if (url.username || url.password) throw new KubeconfigError(`${at} must not carry credentials`);
  return server;
}

/** A name TLS can send as the server name: at most 253 characters, labels of at most 63. */
function isDnsName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => label.length <= 63);
}

/**
 * A peer's server is reached by its host name, which TLS sends as the server name. One OpenSSL
 * cannot take (over 255 bytes) it refuses without a word, and the error then surfaces on another
 * connection, where nothing waits for it: so a name no DNS could hold is refused here.
 */
function hostNameChecked(server: string, at: string): void {
  const host = new URL(server).hostname;
  if (host.startsWith('[') || isIPv4(host)) return;
  if (!isDnsName(host)) throw new KubeconfigError(`${at}'s host name is not a DNS name (at most 253 characters, labels of at most 63)`);
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function mapping(v: unknown, at: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Buffer.isBuffer(v)) throw new KubeconfigError(`${at} must be a mapping`);
  return v as Record<string, unknown>;
}

/** An optional string; empty means unset, as in kubectl. */
function text(v: unknown, at: string): string | undefined {
  if (!present(v)) return undefined;
  if (typeof v !== 'string') throw new KubeconfigError(`${at} must be a string`);
  return v || undefined;
}

function flag(v: unknown, at: string): boolean | undefined {
  if (!present(v)) return undefined;
  if (typeof v !== 'boolean') throw new KubeconfigError(`${at} must be true or false`);
  return v;
}

function list(v: unknown, at: string): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new KubeconfigError(`${at} must be a list of strings`);
  return v as string[];
}

function path(v: unknown, at: string, dir: string | undefined): string | undefined {
  const p = text(v, at);
  return p !== undefined && dir !== undefined && !isAbsolute(p) ? join(dir, p) : p;
}

/** The code of a failed file read (ENOENT, EACCES), never its path or content. */
export function errorCode(err: unknown): string {
  return (err as { code?: string }).code ?? (err instanceof Error ? err.name : 'error');
}

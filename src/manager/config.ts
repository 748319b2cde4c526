// The controller's configuration: upstream's flags, environment variables and defaults, plus
// ours. Precedence: a flag given on the command line, then the environment variable, then the
// default.
import { WELL_KNOWN } from '../core/api/keys.ts';
import { hubCredentialsNamespace, hubCredentialsNamespaceProblem } from '../core/hub/index.ts';
import { MIN_RELEASE_GROWTH } from '../kube/memory-release.ts';
import { DEFAULT_WEBHOOK_PORT } from '../registry/webhook/server.ts';

export interface ControllerConfig {
  kubeconfig: string;
  kubeContext: string;
  metricsAddr: string;
  healthAddr: string;
  namespace: string;
  provisionLocalCluster: string;
  manageLocalClusterSecret: boolean;
  readerServiceAccountName: string;
  /** Ours: lifetime of the reader token minted with TokenRequest; rotated at 2/3 of it. */
  readerTokenTTLSeconds: number;
  /** Ours: rotate the reader token this often (0: at 2/3 of its lifetime). */
  readerTokenRefreshSeconds: number;
  /** Ours: renew hub tokens (hub-and-spoke) this often at the latest (0: halfway through their lifetime). */
  hubTokenRefreshSeconds: number;
  /** Ours: where hub credentials are kept, out of the reader's reach (default: `<namespace>-hub`). */
  hubCredentialsNamespace: string;
  networkName: string;
  apiServerEndpointAddress: string;
  coreResourcesSourceEnabled: boolean;
  leaderElection: {
    enabled: boolean;
    name: string;
    namespace: string;
    leaseDurationSeconds: number;
    releaseOnExit: boolean;
  };
  log: { format: 'json' | 'console'; verbosity: number };
  clusterValidatorWebhook: { enabled: boolean; name: string; port: number; certificateDirectory: string };
  clusterController: { workerCount: number; refreshIntervalSeconds: number };
  /** Ours: growth of the process's anonymous memory, once idle, that calls for giving back what bursts left behind (0: never). */
  idleMemoryReleaseBytes: number;
  /** Ours: how often each peer is probed (upstream's fixed 5 s). */
  peerHealthIntervalSeconds: number;
  /**
   * Ours: what our caches of peers may hold (a peer decides what it serves): of one peer, its
   * registry's and its rules' sources each; and of all peers together.
   */
  peerCache: { perPeer: { maxObjects: number; maxBytes: number }; allPeers: { maxObjects: number; maxBytes: number } };
  syncController: {
    /** Concurrent object syncs (upstream: concurrency of its rule reconciler, default 1). */
    workerCount: number;
    rateLimit: { maxKeys: number; maxRatePerSecond: number; maxBurst: number };
    /** Ours: how long a copy stays after it became an orphan. */
    gcGracePeriodSeconds: number;
    /** Ours: at most one status write per rule this often. */
    statusIntervalSeconds: number;
    /** Ours: copies one rule may make here from one peer. */
    maxCopiesPerRule: number;
  };
}

/** One setting: its flag, its environment variable, its default and how a string becomes its value. */
export interface Setting<T> {
  readonly flag: string;
  readonly env: string;
  readonly description: string;
  readonly defaultValue: T;
  readonly parse: (raw: string) => T;
  readonly assign: (c: ControllerConfig, v: T) => void;
  /** Env-only settings have no flag upstream (the clusterController.* keys). */
  readonly envOnly?: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function parseBool(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (['1', 't', 'true', 'yes', 'y', 'on'].includes(v)) return true;
  if (['0', 'f', 'false', 'no', 'n', 'off'].includes(v)) return false;
  throw new ConfigError(`invalid boolean ${JSON.stringify(raw)}`);
}

function parseInt10(raw: string): number {
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`invalid integer ${JSON.stringify(raw)}`);
  return Number(raw);
}

function parsePort(raw: string): number {
  const n = parseInt10(raw);
  if (n < 1 || n > 65535) throw new ConfigError(`invalid port ${raw}`);
  return n;
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

/** A Go duration ("5s", "1m30s", "24h") in seconds; a bare number is seconds. */
export function parseDuration(raw: string): number {
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s);
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * (DURATION_UNITS[m[2] ?? 's'] ?? 1);
    end = re.lastIndex;
  }
  if (end !== s.length || s.length === 0) throw new ConfigError(`invalid duration ${JSON.stringify(raw)} (use e.g. 5s, 1m30s, 24h)`);
  return total;
}

const BYTE_UNITS: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** A size in bytes: a number, or one with a Ki, Mi or Gi suffix as Kubernetes quantities have. */
export function parseBytes(raw: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)?$/.exec(raw.trim());
  if (!m) throw new ConfigError(`invalid size ${JSON.stringify(raw)} (use e.g. 65536, 512Ki, 64Mi)`);
  return Number(m[1]) * (BYTE_UNITS[m[2] ?? ''] ?? 1);
}

/** A release's growth: 0 (off), or at least MIN_RELEASE_GROWTH, since each release pauses the process. */
function parseReleaseGrowth(raw: string): number {
  const n = parseBytes(raw);
  if (n !== 0 && n < MIN_RELEASE_GROWTH) throw new ConfigError(`invalid idle memory release ${JSON.stringify(raw)}: 0 (never) or at least ${MIN_RELEASE_GROWTH / 2 ** 20}Mi`);
  return n;
}

function parseLogFormat(raw: string): 'json' | 'console' {
  if (raw === 'json' || raw === 'console') return raw;
  throw new ConfigError(`invalid log format ${JSON.stringify(raw)} (json or console)`);
}

const str = (raw: string) => raw;

function setting<T>(s: Setting<T>): Setting<unknown> {
  return s as Setting<unknown>;
}

export const SETTINGS: readonly Setting<unknown>[] = [
  setting({ flag: 'kubeconfig', env: 'KUBECONFIG', description: 'kubeconfig of the local cluster (default: in-cluster, then ~/.kube/config)', defaultValue: '', parse: str, assign: (c, v) => (c.kubeconfig = v) }),
  setting({ flag: 'context', env: 'KUBECONTEXT', description: 'kubeconfig context to use', defaultValue: '', parse: str, assign: (c, v) => (c.kubeContext = v) }),
  setting({ flag: 'metrics-addr', env: 'METRICS_ADDR', description: 'Prometheus metrics listen address', defaultValue: ':8080', parse: str, assign: (c, v) => (c.metricsAddr = v) }),
  setting({ flag: 'health-addr', env: 'HEALTH_ADDR', description: 'health probe (/healthz, /readyz) listen address', defaultValue: ':8090', parse: str, assign: (c, v) => (c.healthAddr = v) }),
  setting({ flag: 'namespace', env: 'NAMESPACE', description: 'namespace the controller runs in', defaultValue: WELL_KNOWN.defaultNamespace, parse: str, assign: (c, v) => (c.namespace = v) }),
  setting({ flag: 'provision-local-cluster', env: 'PROVISION_LOCAL_CLUSTER', description: 'name of the local Cluster to create at start-up (empty: none)', defaultValue: '', parse: str, assign: (c, v) => (c.provisionLocalCluster = v) }),
  setting({ flag: 'manage-local-cluster-secret', env: 'MANAGE_LOCAL_CLUSTER_SECRET', description: 'maintain the reader kubeconfig Secret of the local Cluster', defaultValue: true, parse: parseBool, assign: (c, v) => (c.manageLocalClusterSecret = v) }),
  setting({ flag: 'reader-service-account-name', env: 'READER_SERVICE_ACCOUNT_NAME', description: 'ServiceAccount whose token peers read this cluster with', defaultValue: WELL_KNOWN.readerServiceAccountName, parse: str, assign: (c, v) => (c.readerServiceAccountName = v) }),
  setting({ flag: 'reader-token-ttl', env: 'READER_TOKEN_TTL', description: 'lifetime of the reader token (rotated at 2/3 of it)', defaultValue: 86_400, parse: parseDuration, assign: (c, v) => (c.readerTokenTTLSeconds = v) }),
  setting({ flag: 'reader-token-refresh', env: 'READER_TOKEN_REFRESH', description: 'rotate the reader token this often (0: at 2/3 of its lifetime)', defaultValue: 0, parse: parseDuration, assign: (c, v) => (c.readerTokenRefreshSeconds = v) }),
  setting({ flag: 'hub-token-refresh', env: 'HUB_TOKEN_REFRESH', description: 'renew the hub tokens of HubSyncRules this often (0: halfway through their lifetime)', defaultValue: 0, parse: parseDuration, assign: (c, v) => (c.hubTokenRefreshSeconds = v) }),
  setting({ flag: 'hub-credentials-namespace', env: 'HUB_CREDENTIALS_NAMESPACE', description: "namespace of the hub credentials Secrets HubSyncRules use, which members' reader tokens cannot read (default: <namespace>-hub)", defaultValue: '', parse: str, assign: (c, v) => (c.hubCredentialsNamespace = v) }),
  setting({ flag: 'network-name', env: 'NETWORK_NAME', description: "this controller's network; selects peers' kubernetesApiEndpoints", defaultValue: 'default', parse: str, assign: (c, v) => (c.networkName = v) }),
  setting({ flag: 'apiserver-endpoint-address', env: 'APISERVER_ENDPOINT_ADDRESS', description: 'address of the local API server for peers', defaultValue: '', parse: str, assign: (c, v) => (c.apiServerEndpointAddress = v) }),
  setting({ flag: 'core-resources-source-enabled', env: 'CORE_RESOURCES_SOURCE_ENABLED', description: 'advertise the core ClusterFeature (peers pull the registry from us)', defaultValue: true, parse: parseBool, assign: (c, v) => (c.coreResourcesSourceEnabled = v) }),
  setting({ flag: 'enable-leader-election', env: 'LEADER_ELECTION_ENABLED', description: 'elect a leader among replicas', defaultValue: true, parse: parseBool, assign: (c, v) => (c.leaderElection.enabled = v) }),
  setting({ flag: 'leader-election-name', env: 'LEADER_ELECTION_NAME', description: 'name of the leader election Lease', defaultValue: WELL_KNOWN.leaderElectionName, parse: str, assign: (c, v) => (c.leaderElection.name = v) }),
  setting({ flag: 'leader-election-namespace', env: 'LEADER_ELECTION_NAMESPACE', description: 'namespace of the Lease (default: the controller namespace)', defaultValue: '', parse: str, assign: (c, v) => (c.leaderElection.namespace = v) }),
  setting({ flag: 'leader-election-lease-duration', env: 'LEADER_ELECTION_LEASEDURATION', description: 'lease duration; renew deadline is two thirds of it', defaultValue: 15, parse: parseDuration, assign: (c, v) => (c.leaderElection.leaseDurationSeconds = v) }),
  setting({ flag: 'leader-election-release-on-exit', env: 'LEADER_ELECTION_RELEASEONEXIT', description: 'release the Lease on graceful shutdown', defaultValue: true, parse: parseBool, assign: (c, v) => (c.leaderElection.releaseOnExit = v) }),
  setting({ flag: 'log-verbosity', env: 'LOG_VERBOSITY', description: 'log verbosity (0: info; 1 and more: debug)', defaultValue: 0, parse: parseInt10, assign: (c, v) => (c.log.verbosity = v) }),
  setting<'json' | 'console'>({ flag: 'log-format', env: 'LOG_FORMAT', description: 'json or console', defaultValue: 'json', parse: parseLogFormat, assign: (c, v) => (c.log.format = v) }),
  setting({ flag: 'cluster-validator-webhook-enabled', env: 'CLUSTER_VALIDATOR_WEBHOOK_ENABLED', description: 'serve the Cluster validating webhook', defaultValue: true, parse: parseBool, assign: (c, v) => (c.clusterValidatorWebhook.enabled = v) }),
  setting({ flag: 'cluster-validator-webhook-name', env: 'CLUSTER_VALIDATOR_WEBHOOK_NAME', description: 'ValidatingWebhookConfiguration to keep pointed at our certificate', defaultValue: WELL_KNOWN.webhookConfigurationName, parse: str, assign: (c, v) => (c.clusterValidatorWebhook.name = v) }),
  setting({ flag: 'cluster-validator-webhook-port', env: 'CLUSTER_VALIDATOR_WEBHOOK_PORT', description: 'webhook HTTPS port', defaultValue: DEFAULT_WEBHOOK_PORT, parse: parsePort, assign: (c, v) => (c.clusterValidatorWebhook.port = v) }),
  setting({ flag: 'cluster-validator-webhook-certificate-directory', env: 'CLUSTER_VALIDATOR_WEBHOOK_CERTIFICATE_DIRECTORY', description: 'accepted for compatibility; the certificate lives in a Secret shared by all replicas', defaultValue: '/tmp/webhooks/clusterValidator/certificates', parse: str, assign: (c, v) => (c.clusterValidatorWebhook.certificateDirectory = v) }),
  setting({ flag: 'peer-health-interval', env: 'PEER_HEALTH_INTERVAL', description: 'how often each peer is probed', defaultValue: 5, parse: parseDuration, assign: (c, v) => (c.peerHealthIntervalSeconds = v) }),
  setting({ flag: 'peer-cache-max-objects', env: 'PEER_CACHE_MAX_OBJECTS', description: "objects our caches of one peer's rule sources may hold (and of its registry, apart); a peer over it is reported and its further objects are not read", defaultValue: 20_000, parse: parseInt10, assign: (c, v) => (c.peerCache.perPeer.maxObjects = v) }),
  setting({ flag: 'peer-cache-max-bytes', env: 'PEER_CACHE_MAX_BYTES', description: "bytes (as JSON) our caches of one peer's rule sources may hold (and of its registry, apart), e.g. 32Mi", defaultValue: 32 * 2 ** 20, parse: parseBytes, assign: (c, v) => (c.peerCache.perPeer.maxBytes = v) }),
  setting({ flag: 'all-peers-cache-max-objects', env: 'ALL_PEERS_CACHE_MAX_OBJECTS', description: 'objects our caches of all peers may hold together', defaultValue: 60_000, parse: parseInt10, assign: (c, v) => (c.peerCache.allPeers.maxObjects = v) }),
  setting({ flag: 'all-peers-cache-max-bytes', env: 'ALL_PEERS_CACHE_MAX_BYTES', description: 'bytes (as JSON) our caches of all peers may hold together, e.g. 96Mi', defaultValue: 96 * 2 ** 20, parse: parseBytes, assign: (c, v) => (c.peerCache.allPeers.maxBytes = v) }),
  setting({ flag: 'idle-memory-release', env: 'IDLE_MEMORY_RELEASE', description: 'once idle and grown this much since the last release, give back the memory bursts of work left behind (one full collection), e.g. 16Mi; 0: never, else at least 8Mi', defaultValue: 16 * 2 ** 20, parse: parseReleaseGrowth, assign: (c, v) => (c.idleMemoryReleaseBytes = v) }),
  setting({ flag: 'orphan-grace-period', env: 'ORPHAN_GRACE_PERIOD', description: 'how long a synced copy stays after its source, rule, peer or feature went away', defaultValue: 600, parse: parseDuration, assign: (c, v) => (c.syncController.gcGracePeriodSeconds = v) }),
  setting({ flag: 'rule-max-copies', env: 'RULE_MAX_COPIES', description: 'copies one ResourceSyncRule may make here from one peer; beyond it, no more are made and the rule says why', defaultValue: 25_000, parse: parseInt10, assign: (c, v) => (c.syncController.maxCopiesPerRule = v) }),
  setting({ flag: 'rule-status-interval', env: 'RULE_STATUS_INTERVAL', description: 'at most one ResourceSyncRule status write per rule this often', defaultValue: 5, parse: parseDuration, assign: (c, v) => (c.syncController.statusIntervalSeconds = v) }),
  setting({ flag: '', env: 'SYNCCONTROLLER_WORKERCOUNT', description: 'concurrent object syncs', defaultValue: 16, parse: parseInt10, assign: (c, v) => (c.syncController.workerCount = v), envOnly: true }),
  setting({ flag: '', env: 'SYNCCONTROLLER_RATELIMIT_MAXKEYS', description: 'objects whose sync rate is remembered, per rule and peer', defaultValue: 1024, parse: parseInt10, assign: (c, v) => (c.syncController.rateLimit.maxKeys = v), envOnly: true }),
  setting({ flag: '', env: 'SYNCCONTROLLER_RATELIMIT_MAXRATEPERSECOND', description: 'syncs per second of one object', defaultValue: 5, parse: parseInt10, assign: (c, v) => (c.syncController.rateLimit.maxRatePerSecond = v), envOnly: true }),
  setting({ flag: '', env: 'SYNCCONTROLLER_RATELIMIT_MAXBURST', description: 'extra syncs of one object allowed at once', defaultValue: 10, parse: parseInt10, assign: (c, v) => (c.syncController.rateLimit.maxBurst = v), envOnly: true }),
  setting({ flag: '', env: 'CLUSTERCONTROLLER_WORKERCOUNT', description: 'Cluster reconciler workers', defaultValue: 2, parse: parseInt10, assign: (c, v) => (c.clusterController.workerCount = v), envOnly: true }),
  // Upstream's default 0 never refreshes, so metadata and peer status go stale.
  setting({ flag: '', env: 'CLUSTERCONTROLLER_REFRESHINTERVALSECONDS', description: 'periodic Cluster refresh', defaultValue: 60, parse: parseInt10, assign: (c, v) => (c.clusterController.refreshIntervalSeconds = v), envOnly: true }),
];

function emptyConfig(): ControllerConfig {
  return {
    kubeconfig: '',
    kubeContext: '',
    metricsAddr: '',
    healthAddr: '',
    namespace: '',
    provisionLocalCluster: '',
    manageLocalClusterSecret: true,
    readerServiceAccountName: '',
    readerTokenTTLSeconds: 0,
    readerTokenRefreshSeconds: 0,
    hubTokenRefreshSeconds: 0,
    hubCredentialsNamespace: '',
    networkName: '',
    apiServerEndpointAddress: '',
    coreResourcesSourceEnabled: true,
    leaderElection: { enabled: true, name: '', namespace: '', leaseDurationSeconds: 0, releaseOnExit: true },
    log: { format: 'json', verbosity: 0 },
    clusterValidatorWebhook: { enabled: true, name: '', port: 0, certificateDirectory: '' },
    clusterController: { workerCount: 0, refreshIntervalSeconds: 0 },
    peerHealthIntervalSeconds: 0,
    idleMemoryReleaseBytes: 0,
    peerCache: { perPeer: { maxObjects: 0, maxBytes: 0 }, allPeers: { maxObjects: 0, maxBytes: 0 } },
    syncController: { workerCount: 0, rateLimit: { maxKeys: 0, maxRatePerSecond: 0, maxBurst: 0 }, gcGracePeriodSeconds: 0, statusIntervalSeconds: 0, maxCopiesPerRule: 0 },
  };
}

/**
 * Resolves the configuration from flags given on the command line (by flag name, raw strings)
 * and the environment. An empty environment variable counts as set (viper's AllowEmptyEnv).
 */
export function resolveConfig(flags: Readonly<Record<string, string>>, env: Readonly<Record<string, string | undefined>>): ControllerConfig {
  const c = emptyConfig();
  for (const s of SETTINGS) {
    const raw = s.flag && s.flag in flags ? flags[s.flag] : env[s.env];
    let value = s.defaultValue;
    if (raw !== undefined) {
      try {
        value = s.parse(raw);
      } catch (err) {
        const where = s.flag && s.flag in flags ? `--${s.flag}` : `$${s.env}`;
        throw new ConfigError(`${where}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    s.assign(c, value);
  }
  if (!c.leaderElection.namespace) c.leaderElection.namespace = c.namespace;
  c.hubCredentialsNamespace = hubCredentialsNamespace(c.namespace, c.hubCredentialsNamespace);
  const hubNamespaceProblem = hubCredentialsNamespaceProblem(c.hubCredentialsNamespace, c.namespace);
  if (hubNamespaceProblem) throw new ConfigError(`--hub-credentials-namespace: ${hubNamespaceProblem}`);
  if (c.clusterController.workerCount < 1) throw new ConfigError('$CLUSTERCONTROLLER_WORKERCOUNT must be at least 1');
  if (c.syncController.workerCount < 1) throw new ConfigError('$SYNCCONTROLLER_WORKERCOUNT must be at least 1');
  const rl = c.syncController.rateLimit;
  if (rl.maxKeys < 1 || rl.maxRatePerSecond < 1 || rl.maxBurst < 0) throw new ConfigError('$SYNCCONTROLLER_RATELIMIT_MAXKEYS and _MAXRATEPERSECOND must be at least 1, _MAXBURST not negative');
  if (c.syncController.gcGracePeriodSeconds < 0) throw new ConfigError('--orphan-grace-period must not be negative');
  if (c.syncController.statusIntervalSeconds <= 0) throw new ConfigError('--rule-status-interval must be positive');
  if (c.syncController.maxCopiesPerRule < 1) throw new ConfigError('--rule-max-copies must be positive');
  if (c.readerTokenTTLSeconds < 600) throw new ConfigError('--reader-token-ttl must be at least 10m (the API server refuses shorter tokens)');
  if (c.peerHealthIntervalSeconds <= 0) throw new ConfigError('--peer-health-interval must be positive');
  if ([c.peerCache.perPeer, c.peerCache.allPeers].some((l) => l.maxObjects < 1 || l.maxBytes < 1)) throw new ConfigError('--peer-cache-max-* and --all-peers-cache-max-* must be positive');
  if (c.clusterController.refreshIntervalSeconds < 0) throw new ConfigError('$CLUSTERCONTROLLER_REFRESHINTERVALSECONDS must not be negative (0 turns the refresh off)');
  if (c.leaderElection.enabled && c.leaderElection.leaseDurationSeconds < 2) throw new ConfigError('--leader-election-lease-duration must be at least 2s');
  return c;
}

/** "host:port" or ":port" as Node's listen() wants it. */
export function parseListenAddress(addr: string): { host: string | undefined; port: number } {
  const i = addr.lastIndexOf(':');
  if (i < 0) throw new ConfigError(`invalid listen address ${JSON.stringify(addr)} (use host:port or :port)`);
  const host = addr.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const port = parseInt10(addr.slice(i + 1));
  if (port < 0 || port > 65535) throw new ConfigError(`invalid port in ${addr}`);
  return { host: host || undefined, port };
}

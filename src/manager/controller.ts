// The long-running controller process: metrics and health on every replica; leader election;
// and, on the leader, the local caches, the peer connections and the Cluster reconciler.
import { CLUSTER_SECRET, LABEL_TRUE, LABELS, RECORDERS } from '../core/api/keys.ts';
import type { Cluster } from '../core/api/types.ts';
import type { NodeInfo } from '../core/registry/index.ts';
import {
  Backoff,
  ClusterConfig,
  Controller,
  Discovery,
  EventRecorder,
  HealthServer,
  InformerFactory,
  LeaderElector,
  RestClient,
  collectProcessMetrics,
  sleep,
  type KubeObject,
  type Logger,
} from '../kube/index.ts';
import { ClusterReconciler } from './cluster-reconciler.ts';
import type { ControllerConfig } from './config.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import type { PeerConnection } from '../peers/connection.ts';
import { PeerManager } from '../peers/manager.ts';
import { PeerMirror } from './peer-mirror.ts';
import { provisionLocalCluster } from './provision.ts';
import { ReaderCredentials } from './reader-credentials.ts';
import { ClusterValidatorWebhook } from './webhook/index.ts';
import { CLUSTER_FEATURES, CLUSTERS, NODES, RESOURCE_SYNC_RULES, SECRETS, type Secret } from '../core/api/resources.ts';
import { clusterSpecChanged, coreObjectChanged, enqueueOn, nodeMetadataChanged, peerClusterChanged } from './triggers.ts';

export const USER_AGENT = 'cluster-registry-controller';

function localClusterConfig(cfg: ControllerConfig): ClusterConfig {
  const context = cfg.kubeContext || undefined;
  return ClusterConfig.fromFileOrDefault(cfg.kubeconfig || undefined, context);
}

/** Retries `fn` with backoff until it succeeds or the signal aborts, logging each failure. */
async function retrying<T>(what: string, log: Logger, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  const backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (signal.aborted) throw err;
      log.warn({ error: err instanceof Error ? err.message : String(err) }, `${what} failed; retrying`);
      await sleep(backoff.next(), signal);
    }
  }
}

export async function runController(cfg: ControllerConfig, log: Logger, processSignal: AbortSignal): Promise<void> {
  // Everything stops on this: a shutdown signal, a lost lease or a component that cannot run.
  const lifetime = new AbortController();
  const signal = AbortSignal.any([processSignal, lifetime.signal]);
  let fatal: Error | undefined;
  const die = (err: unknown): void => {
    fatal ??= err instanceof Error ? err : new Error(String(err));
    lifetime.abort();
  };

  const config = localClusterConfig(cfg);
  const conn = await config.connection();
  const rest = new RestClient(conn, { userAgent: USER_AGENT });
  const localCA = conn.tls.ca?.toString();
  const localClusterID = await retrying('reading the local cluster ID', log, signal, () => kubeSystemUID(rest, signal));
  log.info({ clusterID: localClusterID, server: rest.server.origin }, 'local cluster identified');

  collectProcessMetrics();
  const metrics = new HealthServer({ address: cfg.metricsAddr, probes: false, logger: log });
  const health = new HealthServer({ address: cfg.healthAddr, metrics: false, logger: log });
  await metrics.start(signal);
  await health.start(signal);

  const events = new EventRecorder({ rest, component: RECORDERS.clusters, logger: log });
  void events.start(signal);

  // One informer per local resource for the whole process: the webhook (every replica) and the
  // leader's controllers share the Cluster cache.
  const factory = new InformerFactory({ cluster: 'local', rest, discovery: new Discovery(rest), logger: log });
  const webhook = cfg.clusterValidatorWebhook.enabled
    ? new ClusterValidatorWebhook({
        rest,
        informers: factory,
        namespace: cfg.namespace,
        configurationName: cfg.clusterValidatorWebhook.name,
        port: cfg.clusterValidatorWebhook.port,
        localClusterID: () => localClusterID,
        log,
      })
    : undefined;
  factory.start(signal);
  // A webhook that cannot serve (port taken, certificate Secret unusable) ends the process with
  // a logged reason rather than an unhandled rejection.
  const webhookDone = webhook?.start(signal).catch((err: unknown) => die(new Error(`the cluster validator webhook failed: ${err instanceof Error ? err.message : String(err)}`)));
  if (webhook) {
    let serving = false;
    void webhook.ready().then(() => (serving = true));
    health.addReadyCheck('webhook', () => {
      if (!serving) throw new Error('the cluster validator webhook is not serving yet');
    });
  }

  const work = async (leaderSignal: AbortSignal): Promise<void> => {
    await Promise.all([runLeader({ cfg, log, rest, localCA, localClusterID, events, health, factory }, leaderSignal), webhook?.onStartedLeading(leaderSignal)]);
  };
  try {
    await campaign(cfg, rest, log, signal, work);
  } catch (err) {
    die(err);
  } finally {
    lifetime.abort();
    await webhookDone;
    rest.close();
  }
  if (fatal) throw fatal;
}

/**
 * Runs `work` while leading, or right away without leader election; returns when the signal
 * aborts. A lost lease (the local API server unreachable past the renew deadline) ends the term:
 * all leader work stops (the elector waits for it), then this process campaigns again, since
 * every term builds its state afresh and nothing of a stopped term keeps running.
 */
async function campaign(cfg: ControllerConfig, rest: RestClient, log: Logger, signal: AbortSignal, work: (s: AbortSignal) => Promise<void>): Promise<void> {
  if (!cfg.leaderElection.enabled) {
    await work(signal);
    return;
  }
  const leaseMs = cfg.leaderElection.leaseDurationSeconds * 1000;
  const retryPeriodMs = Math.min(2000, leaseMs / 2 / 1.25);
  while (!signal.aborted) {
    const elector = new LeaderElector({
      rest,
      namespace: cfg.leaderElection.namespace,
      name: cfg.leaderElection.name,
      leaseDurationMs: leaseMs,
      renewDeadlineMs: leaseMs / 2,
      retryPeriodMs,
      releaseOnCancel: cfg.leaderElection.releaseOnExit,
      logger: log,
      callbacks: {
        onStartedLeading: (leaderSignal) => work(leaderSignal),
        onNewLeader: (identity) => log.info({ leader: identity }, 'leader observed'),
      },
    });
    await elector.start(signal);
    if (signal.aborted) return;
    log.warn('lost the leader election lease; all leader work stopped; campaigning again');
    await sleep(retryPeriodMs, signal);
  }
}

interface LeaderDeps {
  cfg: ControllerConfig;
  log: Logger;
  rest: RestClient;
  localCA: string | undefined;
  localClusterID: string;
  events: EventRecorder;
  health: HealthServer;
  factory: InformerFactory;
}

/** Everything only the leader runs; returns when the signal aborts. */
async function runLeader(d: LeaderDeps, signal: AbortSignal): Promise<void> {
  const { cfg, log, rest } = d;
  log.info('leading: starting the registry controllers');
  const factory = d.factory;
  const clusters = factory.forResource<Cluster>({ ...CLUSTERS });
  const secrets = factory.forResource<Secret>({ ...SECRETS, namespace: cfg.namespace, fieldSelector: `type=${CLUSTER_SECRET.type}` });
  const nodes = factory.forResource<NodeInfo & KubeObject>({ ...NODES });

  // The reconciler needs the queue (to requeue peers) and the queue the reconciler: the closure breaks the cycle.
  const controller = new Controller({
    name: 'clusters',
    reconcile: (key, s) => reconciler.reconcile(key, s),
    workers: cfg.clusterController.workerCount,
    logger: log,
  });
  const enqueue = (name: string): void => controller.enqueue(name);
  const mirrors = new Map<PeerConnection, { mirror: PeerMirror; unsubscribe: (() => void)[] }>();
  const peers: PeerManager = new PeerManager({
    healthIntervalMs: cfg.peerHealthIntervalSeconds * 1000,
    onChange: enqueue,
    onOpened: (c) => {
      if (mirrors.has(c) || !c.peer) return;
      const mirror = new PeerMirror({
        peer: c,
        local: rest,
        localClusterID: d.localClusterID,
        namespace: cfg.namespace,
        localClusters: () => clusters.store.list(),
        alivePeerIDs: () => peers.aliveIDs(),
        log,
      });
      mirror.start();
      const thisPeer = () => [c.name];
      const unsubscribe = [
        enqueueOn(c.peer.informers.forResource<Cluster>({ ...CLUSTERS }), enqueue, thisPeer, peerClusterChanged),
        enqueueOn(c.peer.informers.forResource<NodeInfo & KubeObject>({ ...NODES }), enqueue, thisPeer, nodeMetadataChanged),
      ];
      mirrors.set(c, { mirror, unsubscribe });
    },
    onClosed: (c) => {
      const m = mirrors.get(c);
      m?.mirror.stop();
      for (const u of m?.unsubscribe ?? []) u();
      mirrors.delete(c);
    },
    log,
  });
  const reconciler = new ClusterReconciler({
    rest,
    localClusterID: d.localClusterID,
    namespace: cfg.namespace,
    networkName: cfg.networkName,
    manageLocalClusterSecret: cfg.manageLocalClusterSecret,
    coreResourcesSourceEnabled: cfg.coreResourcesSourceEnabled,
    refreshIntervalMs: cfg.clusterController.refreshIntervalSeconds * 1000,
    clusters,
    secrets,
    nodes,
    peers,
    reader: new ReaderCredentials({
      rest,
      namespace: cfg.namespace,
      serviceAccount: cfg.readerServiceAccountName,
      ttlSeconds: cfg.readerTokenTTLSeconds,
      refreshSeconds: cfg.readerTokenRefreshSeconds,
      apiServerEndpointAddress: cfg.apiServerEndpointAddress,
      localCA: d.localCA,
      log,
    }),
    events: d.events,
    enqueue,
    log,
  });

  const names = (cs: readonly Cluster[]): string[] => cs.map((c) => c.metadata.name ?? '');
  const localNames = (): string[] => names(clusters.store.list().filter((c) => c.spec?.clusterID === d.localClusterID));
  // The informers outlive this term (the webhook shares them): every handler added here is removed when it ends.
  const handlers: (() => void)[] = [];
  handlers.push(enqueueOn(clusters, enqueue, (c) => [c.metadata.name ?? ''], clusterSpecChanged));
  // The group changed: peers' ClustersSynced and local conflicts depend on the whole list.
  handlers.push(clusters.addEventHandler({ onAdd: () => names(clusters.store.list()).forEach(enqueue), onDelete: () => names(clusters.store.list()).forEach(enqueue) }));
  handlers.push(enqueueOn(
    secrets,
    enqueue,
    (s) => names(clusters.store.list().filter((c) => c.spec?.authInfo?.secretRef?.name === s.metadata.name && c.spec?.authInfo?.secretRef?.namespace === s.metadata.namespace)),
    () => true,
  ));
  handlers.push(enqueueOn(nodes, enqueue, localNames, nodeMetadataChanged));
  // Tampered or deleted core objects are restored at once, not at the next refresh.
  const coreSelector = `${LABELS.coreSyncResource}=${LABEL_TRUE}`;
  for (const ref of [RESOURCE_SYNC_RULES, CLUSTER_FEATURES]) {
    handlers.push(enqueueOn(factory.forResource({ ...ref, labelSelector: coreSelector }), enqueue, localNames, coreObjectChanged));
  }

  d.health.addReadyCheck('caches', () => {
    if (!clusters.hasSynced() || !secrets.hasSynced()) throw new Error('local caches not synced yet');
  });
  if (cfg.provisionLocalCluster) {
    const name = cfg.provisionLocalCluster;
    void retrying('provisioning the local Cluster', log, signal, () =>
      provisionLocalCluster(rest, { name, clusterID: d.localClusterID, namespace: cfg.namespace, apiServerEndpointAddress: cfg.apiServerEndpointAddress }, signal),
    )
      .then((created) => log.info({ cluster: name, created }, created ? 'provisioned the local Cluster' : 'local Cluster already exists'))
      .catch(() => undefined);
  }
  try {
    await controller.start(signal, [clusters, secrets, nodes]);
  } finally {
    for (const unsubscribe of handlers) unsubscribe();
    peers.stopAll();
  }
}

// The controller process. Every replica serves metrics, health and the Cluster validating
// webhook; the leader (or every replica without leader election) runs the components of a term:
// the registry, the resource sync and the webhook's certificate duties, over one set of peer
// connections built afresh for each term.
import { CLUSTERS, SECRETS, type Secret } from '../core/api/resources.ts';
import { CLUSTER_SECRET, RECORDERS } from '../core/api/keys.ts';
import type { Cluster } from '../core/api/types.ts';
import {
  Backoff,
  ClusterConfig,
  Discovery,
  EventRecorder,
  HealthServer,
  InformerFactory,
  LeaderElector,
  RestClient,
  collectProcessMetrics,
  releaseIdleMemory,
  sleep,
  type Logger,
} from '../kube/index.ts';
import { kubeSystemUID } from '../peers/identity.ts';
import { PeerManager } from '../peers/manager.ts';
import type { ControllerConfig } from './config.ts';
import { provisionLocalCluster } from '../registry/provision.ts';
import { runRegistry } from '../registry/registry.ts';
import { ClusterValidatorWebhook, secretNameFor } from '../registry/webhook/index.ts';
import { RELAY_SETTLE_MS, SyncEngine, type PeerSource } from '../sync/engine.ts';
import { HubRules } from '../hub/rules.ts';
import { runTerm, runTerms, type Component } from './components.ts';

export const USER_AGENT = 'cluster-registry-controller';
/** How often the controller looks whether it is idle with memory to give back: after two quiet looks, so a burst's slack goes within a minute of its end. */
const MEMORY_LOOK_MS = 15_000;

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

/** The sync's view of the term's peer connections: those verified at least once. */
function syncPeers(peers: PeerManager): PeerSource {
  return {
    aliveIDs: () => peers.aliveIDs(),
    subscribe: (l) =>
      peers.subscribe({
        opened: (c) => {
          const clients = c.openedClients;
          if (clients) l.opened({ name: c.name, id: c.inputs.expectedID, clients });
        },
        closed: (c) => l.closed(c.name),
        changed: () => l.healthChanged(),
      }),
  };
}

export async function runController(cfg: ControllerConfig, log: Logger, processSignal: AbortSignal): Promise<void> {
  // Everything stops on this: a shutdown signal or a component every replica needs that cannot run.
  const lifetime = new AbortController();
  const signal = AbortSignal.any([processSignal, lifetime.signal]);
  let fatal: Error | undefined;
  const die = (err: unknown): void => {
    fatal ??= err instanceof Error ? err : new Error(String(err));
    lifetime.abort();
  };

  const config = ClusterConfig.fromFileOrDefault(cfg.kubeconfig || undefined, cfg.kubeContext || undefined);
  const conn = await config.connection();
  const rest = new RestClient(conn, { userAgent: USER_AGENT });
  const localCA = conn.tls.ca?.toString();
  const localClusterID = await retrying('reading the local cluster ID', log, signal, () => kubeSystemUID(rest, signal));
  log.info({ clusterID: localClusterID, server: rest.server.origin }, 'local cluster identified');

  collectProcessMetrics();
  void releaseIdleMemory({ growthBytes: cfg.idleMemoryReleaseBytes, intervalMs: MEMORY_LOOK_MS, log }, signal).catch((err: unknown) =>
    log.warn({ error: err instanceof Error ? err.message : String(err) }, 'giving back idle memory failed; the controller goes on without it'),
  );
  const metrics = new HealthServer({ address: cfg.metricsAddr, probes: false, logger: log });
  const health = new HealthServer({ address: cfg.healthAddr, metrics: false, logger: log });
  await metrics.start(signal);
  await health.start(signal);

  const events = new EventRecorder({ rest, component: RECORDERS.clusters, logger: log });
  const syncEvents = new EventRecorder({ rest, component: RECORDERS.clusterController, logger: log });
  void events.start(signal);
  void syncEvents.start(signal);

  // One informer per local resource for the whole process: the webhook (every replica) and the
  // leader's components share the caches.
  const discovery = new Discovery(rest);
  const factory = new InformerFactory({ cluster: 'local', rest, discovery, logger: log });
  const clusters = factory.forResource<Cluster>({ ...CLUSTERS });
  const secrets = factory.forResource<Secret>({ ...SECRETS, namespace: cfg.namespace, fieldSelector: `type=${CLUSTER_SECRET.type}` });
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
  if (cfg.provisionLocalCluster) {
    const name = cfg.provisionLocalCluster;
    void retrying('provisioning the local Cluster', log, signal, () =>
      provisionLocalCluster(rest, { name, clusterID: localClusterID, namespace: cfg.namespace, apiServerEndpointAddress: cfg.apiServerEndpointAddress }, signal),
    )
      .then((created) => log.info({ cluster: name, created }, created ? 'provisioned the local Cluster' : 'local Cluster already exists'))
      .catch(() => undefined);
  }

  const sc = cfg.syncController;
  // A term's components, over peer connections of its own.
  const term = async (termSignal: AbortSignal): Promise<void> => {
    const peers = new PeerManager({ healthIntervalMs: cfg.peerHealthIntervalSeconds * 1000, cacheLimits: cfg.peerCache, namespace: cfg.namespace, log });
    const components: Component[] = [
      { name: 'registry', run: (s) => runRegistry({ cfg, log, rest, localCA, localClusterID, events, health, factory, clusters, secrets, peers }, s) },
      {
        name: 'sync',
        run: (s) =>
          new SyncEngine({
            local: rest,
            localFactory: factory,
            localDiscovery: discovery,
            localClusterID,
            namespace: cfg.namespace,
            reserved: [{ group: '', kind: 'Secret', namespace: cfg.namespace, name: secretNameFor(cfg.clusterValidatorWebhook.name) }],
            closedNamespaces: [cfg.hubCredentialsNamespace],
            peers: syncPeers(peers),
            clusters,
            events: syncEvents,
            settings: {
              workers: sc.workerCount,
              rateLimit: { ratePerSecond: sc.rateLimit.maxRatePerSecond, burst: sc.rateLimit.maxBurst, maxKeys: sc.rateLimit.maxKeys },
              gcGracePeriodMs: sc.gcGracePeriodSeconds * 1000,
              gcIntervalMs: Math.min(30_000, Math.max(1000, (sc.gcGracePeriodSeconds * 1000) / 4)),
              statusIntervalMs: sc.statusIntervalSeconds * 1000,
              maxCopiesPerRule: sc.maxCopiesPerRule,
              // A peer's copies, however many rules make them, hold no more than our caches of it may.
              copiesPerPeer: cfg.peerCache.perPeer,
              relaySettleMs: RELAY_SETTLE_MS,
            },
            log,
          }).start(s),
      },
    ];
    components.push({
      name: 'hub sync',
      run: (s) =>
        new HubRules({
          local: { rest, factory, discovery },
          namespace: cfg.namespace,
          credentialsNamespace: cfg.hubCredentialsNamespace,
          // A hub is a member that decides what it serves: our caches of it keep to a peer's budget, and each rule to the copies a rule may make.
          cacheLimits: cfg.peerCache.perPeer,
          maxObjectsPerRule: sc.maxCopiesPerRule,
          localClusterID,
          clusters,
          events: syncEvents,
          statusIntervalMs: sc.statusIntervalSeconds * 1000,
          tokenRefreshSeconds: cfg.hubTokenRefreshSeconds,
          logger: log,
        }).run(s),
    });
    if (webhook) components.push({ name: 'webhook certificates', run: (s) => webhook.onStartedLeading(s) });
    try {
      await runTerm(components, termSignal, log);
    } finally {
      peers.stopAll();
    }
  };
  // A failed term is said in the log, in an Event on the local Cluster and in readiness, then retried.
  let lastFailure: Error | undefined;
  health.addReadyCheck('leader-work', () => {
    if (lastFailure) throw lastFailure;
  });
  const work = (leaderSignal: AbortSignal): Promise<void> =>
    runTerms(
      (s) => {
        // A new term is running: the failure of the last one no longer describes this replica.
        lastFailure = undefined;
        return term(s);
      },
      leaderSignal,
      log,
      (err) => {
        lastFailure = err;
        const local = clusters.store.list().find((c) => c.spec?.clusterID === localClusterID);
        if (local) events.event(local, 'Warning', 'ControllerComponentFailed', err.message);
      },
    );
  try {
    // The lease has a client (and an HTTP/2 connection) of its own, so renewals never queue behind the sync's writes or wait out a GOAWAY's drain.
    const leaseRest = new RestClient(conn, { userAgent: `${USER_AGENT} leader-election` });
    try {
      await campaign(cfg, leaseRest, log, signal, work);
    } finally {
      leaseRest.close();
    }
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
  // controller-runtime's proportions (15 s lease, 10 s renew deadline, 2 s retries): a busy API
  // server answering a renewal in a few seconds must not cost the lease.
  const leaseMs = cfg.leaderElection.leaseDurationSeconds * 1000;
  const renewDeadlineMs = (leaseMs * 2) / 3;
  const retryPeriodMs = Math.min(2000, renewDeadlineMs / 1.25);
  while (!signal.aborted) {
    const elector = new LeaderElector({
      rest,
      namespace: cfg.leaderElection.namespace,
      name: cfg.leaderElection.name,
      leaseDurationMs: leaseMs,
      renewDeadlineMs,
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

// The registry for one leader term: the Cluster reconciler with the caches and events it follows,
// and the peer connections it opens (shared with the sync through the peer manager).
import { LABEL_TRUE, LABELS } from '../core/api/keys.ts';
import { CLUSTER_FEATURES, CLUSTERS, NODES, RESOURCE_SYNC_RULES, type Secret } from '../core/api/resources.ts';
import type { Cluster } from '../core/api/types.ts';
import type { NodeInfo } from '../core/registry/index.ts';
import { Controller, type EventRecorder, type HealthServer, type Informer, type InformerFactory, type KubeObject, type Logger, type RestClient } from '../kube/index.ts';
import type { PeerManager } from '../peers/manager.ts';
import { Inventory } from './inventory.ts';
import { ClusterReconciler } from './cluster-reconciler.ts';
import { ReaderCredentials } from './reader-credentials.ts';
import { clusterSpecChanged, coreObjectChanged, nodeMetadataChanged, peerClusterChanged } from './triggers.ts';

/** The settings of the process the registry uses. */
export interface RegistrySettings {
  readonly namespace: string;
  readonly networkName: string;
  readonly manageLocalClusterSecret: boolean;
  readonly coreResourcesSourceEnabled: boolean;
  readonly readerServiceAccountName: string;
  readonly readerTokenTTLSeconds: number;
  readonly readerTokenRefreshSeconds: number;
  readonly apiServerEndpointAddress: string;
  readonly clusterController: { readonly workerCount: number; readonly refreshIntervalSeconds: number };
}

export interface RegistryOptions {
  readonly cfg: RegistrySettings;
  readonly log: Logger;
  readonly rest: RestClient;
  readonly localCA: string | undefined;
  readonly localClusterID: string;
  readonly events: EventRecorder;
  readonly health: HealthServer;
  readonly factory: InformerFactory;
  readonly clusters: Informer<Cluster>;
  readonly secrets: Informer<Secret>;
  readonly peers: PeerManager;
}

/** Runs the Cluster reconciler until the signal aborts. */
export async function runRegistry(o: RegistryOptions, signal: AbortSignal): Promise<void> {
  const { cfg, log, rest, factory, clusters, secrets, peers } = o;
  const nodes = factory.forResource<NodeInfo & KubeObject>({ ...NODES });
  // The reconciler needs the queue (to requeue peers) and the queue the reconciler: the closure breaks the cycle.
  const controller = new Controller({
    name: 'clusters',
    reconcile: (key, s) => reconciler.reconcile(key, s),
    workers: cfg.clusterController.workerCount,
    logger: log,
  });
  const enqueue = (name: string): void => controller.enqueue(name);
  const reconciler = new ClusterReconciler({
    rest,
    localClusterID: o.localClusterID,
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
      localCA: o.localCA,
      log,
    }),
    inventory: new Inventory({ rest, namespace: cfg.namespace, log }),
    events: o.events,
    enqueue,
    log,
  });

  const names = (cs: readonly Cluster[]): string[] => cs.map((c) => c.metadata.name ?? '');
  const localNames = (): string[] => names(clusters.store.list().filter((c) => c.spec?.clusterID === o.localClusterID));
  // The informers outlive this term (the webhook shares them): every handler added here is removed when it ends.
  const handlers: (() => void)[] = [];
  handlers.push(controller.watch(clusters, (c) => [c.metadata.name ?? ''], { update: clusterSpecChanged }));
  // The group changed: peers' ClustersSynced and local conflicts depend on the whole list.
  handlers.push(clusters.addEventHandler({ onAdd: () => names(clusters.store.list()).forEach(enqueue), onDelete: () => names(clusters.store.list()).forEach(enqueue) }));
  handlers.push(
    controller.watch(secrets, (s) => names(clusters.store.list().filter((c) => c.spec?.authInfo?.secretRef?.name === s.metadata.name && c.spec?.authInfo?.secretRef?.namespace === s.metadata.namespace))),
  );
  handlers.push(controller.watch(nodes, localNames, { update: nodeMetadataChanged }));
  // Tampered or deleted core objects are restored at once, not at the next refresh.
  const coreSelector = `${LABELS.coreSyncResource}=${LABEL_TRUE}`;
  for (const ref of [RESOURCE_SYNC_RULES, CLUSTER_FEATURES]) {
    handlers.push(controller.watch(factory.forResource({ ...ref, labelSelector: coreSelector }), localNames, { update: coreObjectChanged }));
  }
  // Each peer's own registry and nodes feed its status; its health changes reach it at once.
  const peerHandlers = new Map<object, (() => void)[]>();
  handlers.push(
    peers.subscribe({
      opened: (c) => {
        const informers = c.openedClients?.informers;
        if (!informers) return;
        const thisPeer = (): string[] => [c.name];
        peerHandlers.set(c, [
          controller.watch(informers.forResource<Cluster>({ ...CLUSTERS }), thisPeer, { update: peerClusterChanged }),
          controller.watch(informers.forResource<NodeInfo & KubeObject>({ ...NODES }), thisPeer, { update: nodeMetadataChanged }),
        ]);
      },
      closed: (c) => {
        for (const u of peerHandlers.get(c) ?? []) u();
        peerHandlers.delete(c);
      },
      changed: (c) => enqueue(c.name),
    }),
  );

  o.health.addReadyCheck('caches', () => {
    if (!clusters.hasSynced() || !secrets.hasSynced()) throw new Error('local caches not synced yet');
  });
  try {
    // Nodes are not waited for: a cluster where they cannot be listed still runs, and says why.
    await controller.start(signal, [clusters, secrets]);
  } finally {
    for (const unsubscribe of handlers) unsubscribe();
    for (const hs of peerHandlers.values()) for (const u of hs) u();
  }
}

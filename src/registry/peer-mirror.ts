// Keeps our copies of a verified peer's self-description fresh: its own Cluster resource and
// its reader credentials Secret, read from the peer. This is how a rotated reader token reaches
// us before the old one expires. Copies are made as the core rules make them (registry-copy.ts),
// so upstream peers see ordinary synced copies.
import { CLUSTER_SECRET } from '../core/api/keys.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { objectKey, type Informer, type Logger, type RestClient } from '../kube/index.ts';
import type { PeerConnection } from './peer-connection.ts';
import { copyRegistryObject, type RegistryKind } from './registry-copy.ts';
import { CLUSTERS, SECRETS } from './resources.ts';

export interface PeerMirrorOptions {
  readonly peer: PeerConnection;
  readonly local: RestClient;
  readonly localClusterID: string;
  /** The controller namespace (where credential Secrets live). */
  readonly namespace: string;
  /** Our local Clusters (templates and ownership need them). */
  readonly localClusters: () => readonly Cluster[];
  readonly alivePeerIDs: () => ReadonlySet<string>;
  readonly log: Logger;
}

export class PeerMirror {
  private readonly o: PeerMirrorOptions;
  private unsubscribe: (() => void)[] = [];
  private clusters: Informer<Cluster> | undefined;
  private secrets: Informer | undefined;

  constructor(opts: PeerMirrorOptions) {
    this.o = opts;
  }

  /** Watches the peer's Clusters and credential Secrets (through the peer connection's shared informers). */
  start(): void {
    const peer = this.o.peer.peer;
    if (!peer) return;
    this.clusters = peer.informers.forResource<Cluster>({ ...CLUSTERS });
    this.secrets = peer.informers.forResource({ ...SECRETS, namespace: this.o.namespace, fieldSelector: `type=${CLUSTER_SECRET.type}` });
    const kick = (): void => void this.sync();
    for (const inf of [this.clusters, this.secrets] as Informer[]) {
      this.unsubscribe.push(inf.addEventHandler({ onAdd: kick, onUpdate: kick }));
    }
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** The peer's own Cluster: the one there that describes the peer itself. */
  private selfCluster(): Cluster | undefined {
    const id = this.o.peer.inputs.expectedID;
    return this.clusters?.store.list().find((c) => c.spec?.clusterID === id && c.metadata?.name === this.o.peer.name);
  }

  async sync(): Promise<void> {
    const self = this.selfCluster();
    if (!self || !this.o.peer.verified) return;
    try {
      await this.mirror('cluster', self);
      const ref = self.spec.authInfo?.secretRef;
      const secret = ref?.name && ref.namespace === this.o.namespace ? this.secrets?.store.getByName(ref.namespace, ref.name) : undefined;
      if (secret) await this.mirror('secret', secret);
    } catch (err) {
      // The next event or the Cluster reconciler's refresh retries; status is the reconciler's to report.
      this.o.log.warn({ peer: this.o.peer.name, err: err instanceof Error ? err.message : String(err) }, 'mirroring the peer registry entry failed');
    }
  }

  private async mirror(kind: RegistryKind, source: KubeObject): Promise<void> {
    const outcome = await copyRegistryObject(kind, source, {
      target: this.o.local,
      targetClusterID: this.o.localClusterID,
      sourceClusterID: this.o.peer.inputs.expectedID,
      namespace: this.o.namespace,
      targetClusters: this.o.localClusters(),
      alivePeerIDs: this.o.alivePeerIDs(),
    });
    if (outcome.action === 'created' || outcome.action === 'updated') {
      this.o.log.info({ peer: this.o.peer.name, kind, object: objectKey(source), action: outcome.action }, 'mirrored peer registry entry');
    }
  }
}

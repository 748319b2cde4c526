// Keeps our copies of a verified peer's self-description fresh: its own Cluster resource and
// its reader credentials Secret, read from the peer. This is how a rotated reader token reaches
// us before the old one expires. Copies are made as the core rules make them (registry-copy.ts),
// so upstream peers see ordinary synced copies.
import { isDeepStrictEqual } from 'node:util';
import { CLUSTER_SECRET } from '../core/api/keys.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { objectKey, type Informer, type Logger, type RestClient } from '../kube/index.ts';
import type { PeerConnection } from '../peers/connection.ts';
import { copyRegistryObject, type RegistryKind } from './registry-copy.ts';
import { CLUSTERS, SECRETS } from '../core/api/resources.ts';

const MIRROR_RETRY_MS = 5000;

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
  private running = false;
  private dirty = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(opts: PeerMirrorOptions) {
    this.o = opts;
  }

  /** Watches the peer's Clusters and credential Secrets (through the peer connection's shared informers). */
  start(): void {
    const peer = this.o.peer.peer;
    if (!peer) return;
    this.clusters = peer.informers.forResource<Cluster>({ ...CLUSTERS });
    this.secrets = peer.informers.forResource({ ...SECRETS, namespace: this.o.namespace, fieldSelector: `type=${CLUSTER_SECRET.type}` });
    // Only what a copy carries matters; status heartbeats do not.
    const carried = (o: KubeObject) => [o['spec'], o['data'], o['type'], o.metadata.labels, o.metadata.annotations];
    const onUpdate = (a: KubeObject, b: KubeObject): void => {
      if (!isDeepStrictEqual(carried(a), carried(b))) this.kick();
    };
    for (const inf of [this.clusters, this.secrets] as Informer[]) {
      this.unsubscribe.push(inf.addEventHandler({ onAdd: this.kick, onUpdate }));
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** Asks for a sync; bursts of events coalesce into one sync at a time (and one more after it). */
  readonly kick = (): void => {
    if (this.stopped) return;
    this.dirty = true;
    if (!this.running) void this.drain();
  };

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.dirty && !this.stopped) {
        this.dirty = false;
        if (!(await this.syncOnce())) {
          this.retryTimer = setTimeout(this.kick, MIRROR_RETRY_MS).unref();
          break;
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** The peer's own Cluster: the one there that describes the peer itself. */
  private selfCluster(): Cluster | undefined {
    const id = this.o.peer.inputs.expectedID;
    return this.clusters?.store.list().find((c) => c.spec?.clusterID === id && c.metadata.name === this.o.peer.name);
  }

  /** One pass; false when it failed and should be retried. */
  private async syncOnce(): Promise<boolean> {
    const self = this.selfCluster();
    if (!self || !this.o.peer.verified) return true;
    try {
      await this.mirror('cluster', self);
      const ref = self.spec.authInfo?.secretRef;
      const secret = ref?.name && ref.namespace === this.o.namespace ? this.secrets?.store.getByName(ref.namespace, ref.name) : undefined;
      if (secret) await this.mirror('secret', secret);
      return true;
    } catch (err) {
      // The reconciler reports the peer's health; a failed copy is retried here.
      this.o.log.warn({ peer: this.o.peer.name, error: err instanceof Error ? err.message : String(err) }, 'mirroring the peer registry entry failed; retrying');
      return false;
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

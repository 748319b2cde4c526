// What one peer advertises: its ClusterFeatures, read through the peer connection's shared
// informer and turned into the (featureName, labels) pairs rules are gated on.
import { CLUSTER_FEATURES } from '../core/api/index.ts';
import type { ClusterFeature } from '../core/api/types.ts';
import { advertisedFeature, type AdvertisedFeature } from '../core/rules/index.ts';
import type { InformerFactory, InformerLease } from '../kube/index.ts';

export class PeerFeatures {
  private readonly lease: InformerLease<ClusterFeature>;
  private readonly listeners = new Set<() => void>();
  private readonly unsubscribe: () => void;

  constructor(informers: InformerFactory) {
    this.lease = informers.acquire<ClusterFeature>({ ...CLUSTER_FEATURES });
    const changed = (): void => {
      if (this.lease.informer.hasSynced()) for (const l of this.listeners) l();
    };
    const relevant = (a: ClusterFeature, b: ClusterFeature): boolean => JSON.stringify(advertisedFeature(a)) !== JSON.stringify(advertisedFeature(b));
    this.unsubscribe = this.lease.informer.addEventHandler({ onAdd: changed, onUpdate: (a, b) => relevant(a, b) && changed(), onDelete: changed });
    void this.lease.informer.waitForSync().then((ok) => ok && changed());
  }

  /**
   * The advertised features, or undefined until the peer's ClusterFeatures have been listed (and
   * while its cache of them lacks one its budget refused: a feature missing there is no withdrawal).
   */
  advertised(): AdvertisedFeature[] | undefined {
    const inf = this.lease.informer;
    return inf.complete ? inf.store.list().map(advertisedFeature) : undefined;
  }

  /** `listener` runs on every change once the features are known; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.listeners.clear();
    this.unsubscribe();
    this.lease.release();
  }
}

// Publishes the group through SIG-Multicluster's APIs where a cluster serves them (their CRDs are
// the SIG's; nothing happens where they are absent): this cluster's ID as the About API's
// ClusterProperty, each member as a ClusterProfile in the controller namespace. Discovery says
// whether they are served; a miss is remembered a while, so clusters without them cost nothing.
// Failing to publish fails nothing else: it is logged and tried again on the next reconcile.
import { CLUSTER_CONDITIONS } from '../core/api/keys.ts';
import type { Cluster } from '../core/api/types.ts';
import { CLUSTER_ID_PROPERTY, CLUSTER_MANAGER, CLUSTER_MANAGER_LABEL, CLUSTER_PROFILE, CLUSTER_PROPERTY, clusterIDMismatch, clusterIDProperty, clusterProfileChanged, clusterProfileFor, conditionOf, type ClusterProfile, type ConditionInput } from '../core/registry/index.ts';
import { Discovery, NoKindMatchError, type Logger, type ResourceRef, type RestClient } from '../kube/index.ts';

const FIELD_MANAGER = 'cluster-registry-inventory';

export class Inventory {
  private readonly rest: RestClient;
  private readonly namespace: string;
  private readonly log: Logger;
  private readonly discovery: Discovery;

  constructor(o: { rest: RestClient; namespace: string; log: Logger }) {
    this.rest = o.rest;
    this.namespace = o.namespace;
    this.log = o.log.child({ component: 'inventory' });
    this.discovery = new Discovery(o.rest, { missTtlMs: 30_000 });
  }

  /**
   * Makes sure the About API holds this cluster's ID; the condition saying whether it does, or
   * undefined where the About API is not served. Another value there is reported, never replaced.
   */
  async clusterIDCondition(clusterID: string, signal: AbortSignal): Promise<ConditionInput | undefined> {
    const resource = await this.served(CLUSTER_PROPERTY);
    if (!resource) return undefined;
    let existing = await this.rest.getIfExists(resource, undefined, CLUSTER_ID_PROPERTY, { signal });
    if (!existing) existing = await this.rest.create(resource, undefined, clusterIDProperty(clusterID), { fieldManager: FIELD_MANAGER, signal });
    const mismatch = clusterIDMismatch(existing, clusterID);
    return conditionOf(CLUSTER_CONDITIONS.clusterIDProperty, mismatch === undefined, mismatch);
  }

  /** Writes the member's ClusterProfile where the inventory API is served. */
  async publish(cluster: Cluster, signal: AbortSignal): Promise<void> {
    const resource = await this.served(CLUSTER_PROFILE);
    if (!resource) return;
    const wanted = clusterProfileFor(cluster, this.namespace);
    const name = wanted.metadata.name ?? '';
    try {
      let current = await this.rest.getIfExists<ClusterProfile>(resource, this.namespace, name, { signal });
      // A profile another manager keeps is theirs.
      if (current && current.metadata.labels?.[CLUSTER_MANAGER_LABEL] !== CLUSTER_MANAGER) return;
      if (!current) current = await this.rest.create(resource, this.namespace, { ...wanted, status: undefined }, { fieldManager: FIELD_MANAGER, signal });
      if (!clusterProfileChanged(current, wanted)) return;
      const written = await this.rest.update(resource, this.namespace, { ...wanted, metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...wanted.metadata.labels } }, status: current.status }, { fieldManager: FIELD_MANAGER, signal });
      await this.rest.updateStatus(resource, this.namespace, { ...written, status: wanted.status }, { fieldManager: FIELD_MANAGER, signal });
    } catch (err) {
      this.log.info({ cluster: name, err }, 'publishing the ClusterProfile failed; tried again on the next reconcile');
    }
  }

  /** Removes the ClusterProfile of a member that left (only one we manage). */
  async withdraw(name: string, signal: AbortSignal): Promise<void> {
    const resource = await this.served(CLUSTER_PROFILE);
    if (!resource) return;
    try {
      const current = await this.rest.getIfExists<ClusterProfile>(resource, this.namespace, name, { signal });
      if (current?.metadata.labels?.[CLUSTER_MANAGER_LABEL] === CLUSTER_MANAGER) await this.rest.delete(resource, this.namespace, name, { preconditions: { uid: current.metadata.uid ?? '' }, signal });
    } catch (err) {
      this.log.info({ cluster: name, err }, 'removing the ClusterProfile failed');
    }
  }

  private async served(gvk: { group: string; version: string; kind: string }): Promise<ResourceRef | undefined> {
    try {
      const r = await this.discovery.resourceFor(gvk);
      return { group: r.group, version: r.version, resource: r.resource };
    } catch (err) {
      if (err instanceof NoKindMatchError) return undefined;
      throw err;
    }
  }
}

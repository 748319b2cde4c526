// Publishes the group through SIG-Multicluster's APIs where a cluster serves them (their CRDs are
// the SIG's; nothing happens where they are absent): this cluster's ID as the About API's
// ClusterProperty, each member as a ClusterProfile in the controller namespace, owned by its
// Cluster (so it goes with it, even while no controller runs). Discovery says whether they are
// served; a miss is remembered a while, so clusters without them cost nothing, and a resource that
// went away is looked up again. Failing to publish fails nothing else: it is logged and tried
// again on the next reconcile, and no call waits long (a slow API holds up no health check).
import { CLUSTER_CONDITIONS } from '../core/api/keys.ts';
import type { Cluster } from '../core/api/types.ts';
import { CLUSTER_ID_PROPERTY, CLUSTER_MANAGER, CLUSTER_MANAGER_LABEL, CLUSTER_PROFILE, CLUSTER_PROPERTY, clusterIDMismatch, clusterIDProperty, clusterProfileChanged, clusterProfileFor, conditionOf, type ClusterProfile, type ConditionInput } from '../core/registry/index.ts';
import { ApiError, Discovery, isNotFound, NoKindMatchError, type Logger, type ResourceRef, type ObjectClient } from '../kube/index.ts';

const FIELD_MANAGER = 'cluster-registry-inventory';
/** Each call's limit, retries included. */
const CALL_TIMEOUT_MS = 5_000;

export class Inventory {
  private readonly rest: ObjectClient;
  private readonly namespace: string;
  private readonly log: Logger;
  private readonly discovery: Discovery;

  constructor(o: { rest: ObjectClient; namespace: string; log: Logger }) {
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
    const call = { signal, timeoutMs: CALL_TIMEOUT_MS };
    try {
      let existing = await this.rest.getIfExists(resource, undefined, CLUSTER_ID_PROPERTY, call);
      existing ??= await this.rest.create(resource, undefined, clusterIDProperty(clusterID), { ...call, fieldManager: FIELD_MANAGER });
      const mismatch = clusterIDMismatch(existing, clusterID);
      return conditionOf(CLUSTER_CONDITIONS.clusterIDProperty, mismatch === undefined, mismatch);
    } catch (err) {
      return (await this.goneAway(err)) ? undefined : conditionOf(CLUSTER_CONDITIONS.clusterIDProperty, false, `cannot read or write ClusterProperty ${CLUSTER_ID_PROPERTY}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Writes the member's ClusterProfile where the inventory API is served. */
  async publish(cluster: Cluster, signal: AbortSignal): Promise<void> {
    const name = cluster.metadata.name ?? '';
    const call = { signal, timeoutMs: CALL_TIMEOUT_MS, fieldManager: FIELD_MANAGER };
    try {
      const resource = await this.served(CLUSTER_PROFILE);
      if (!resource) return;
      let current = await this.rest.getIfExists<ClusterProfile>(resource, this.namespace, name, call);
      // A profile another manager keeps is theirs.
      if (current && current.metadata.labels?.[CLUSTER_MANAGER_LABEL] !== CLUSTER_MANAGER) return;
      const wanted = clusterProfileFor(cluster, this.namespace, current?.status);
      current ??= await this.rest.create(resource, this.namespace, { ...wanted, status: undefined }, call);
      if (!clusterProfileChanged(current, wanted)) return;
      const written = await this.rest.update(resource, this.namespace, { ...wanted, metadata: { ...current.metadata, labels: { ...current.metadata.labels, ...wanted.metadata.labels }, ownerReferences: wanted.metadata.ownerReferences }, status: current.status }, call);
      await this.rest.updateStatus(resource, this.namespace, { ...written, status: wanted.status }, call);
    } catch (err) {
      if (!(await this.goneAway(err))) this.log.info({ cluster: name, err }, 'publishing the ClusterProfile failed; tried again on the next reconcile');
    }
  }

  /** Removes the ClusterProfile of a member that left (only one we manage). */
  async withdraw(name: string, signal: AbortSignal): Promise<void> {
    try {
      const resource = await this.served(CLUSTER_PROFILE);
      if (!resource) return;
      const current = await this.rest.getIfExists<ClusterProfile>(resource, this.namespace, name, { signal, timeoutMs: CALL_TIMEOUT_MS });
      if (current?.metadata.labels?.[CLUSTER_MANAGER_LABEL] === CLUSTER_MANAGER) await this.rest.delete(resource, this.namespace, name, { preconditions: { uid: current.metadata.uid ?? '' }, signal, timeoutMs: CALL_TIMEOUT_MS });
    } catch (err) {
      // The ownerReference to its Cluster has the garbage collector remove it anyway.
      if (!(await this.goneAway(err))) this.log.info({ cluster: name, err }, 'removing the ClusterProfile failed; the garbage collector removes it with its Cluster');
    }
  }

  /** Whether a failure says the resource itself is no longer served (its CRD deleted): then discovery is asked again. */
  private async goneAway(err: unknown): Promise<boolean> {
    if (!isNotFound(err) || (err instanceof ApiError && err.details?.name)) return false;
    await this.discovery.refresh().catch(() => undefined);
    return true;
  }

  /** The resource where it is served; undefined where it is not, or where discovery cannot say now (tried again next time). */
  private async served(gvk: { group: string; version: string; kind: string }): Promise<ResourceRef | undefined> {
    try {
      const r = await this.discovery.resourceFor(gvk);
      return { group: r.group, version: r.version, resource: r.resource };
    } catch (err) {
      if (!(err instanceof NoKindMatchError)) this.log.info({ kind: gvk.kind, err }, 'discovery failed; the SIG-Multicluster APIs are skipped until the next reconcile');
      return undefined;
    }
  }
}

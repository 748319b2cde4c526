// One hub-and-spoke sync: the objects of one kind that a hub declares for this cluster (the
// spoke). Spec, labels and annotations come down; status, the generation echo and listed Secrets
// go up, and only after the status write succeeded does the spec advance (the hub always sees
// where the spoke stands before it is moved on). Level-triggered over two caches, the hub's and
// the spoke's, keyed by the hub object.
//
// Everything the hub sends is input from another cluster: a mapped place that is no valid name,
// a system or protected namespace, or a kind that would grant rights here is refused. A spoke
// object is deleted only when the very hub object it was made from (its UID, recorded on it) is
// confirmed gone by the hub itself; an unreachable hub, or a rule that stopped selecting an
// object, deletes nothing.
//
// Usable as a library: give it the clients and informer factories of both clusters and a checked
// rule (`checkHubRule`), and run `start` next to your own controllers.
import { HUB_ANNOTATIONS } from '../core/api/keys.ts';
import { NAMESPACES, SECRETS, type Secret } from '../core/api/resources.ts';
import { metaTime } from '../core/api/time.ts';
import type { KubeObject } from '../core/api/types.ts';
import { desiredLocal, hubReport, localChanged, localPlace, namespaceFor, parseOrigin, paused, removalOf, secretUpload, type HubRule, type Place } from '../core/hub/index.ts';
import { copyPolicy } from '../core/rules/index.ts';
import {
  ApiError,
  Backoff,
  Controller,
  isAlreadyExists,
  isConflict,
  objectKey,
  silentLogger,
  sleep,
  splitKey,
  type ApiResource,
  type Discovery,
  type Informer,
  type InformerFactory,
  type InformerLease,
  type Logger,
  type ResourceRef,
  type RestClient,
} from '../kube/index.ts';

export interface ClusterSide {
  rest: RestClient;
  factory: InformerFactory;
  discovery: Discovery;
}

export interface HubSyncOptions {
  rule: HubRule;
  /** This cluster: where the objects are made. */
  local: ClusterSide;
  /** The hub: read, and written only as the rule allows (status, generation echo, listed Secrets). */
  hub: ClusterSide;
  /** This cluster's ID, stamped on the reports: two spokes reporting on one hub object would overwrite each other. */
  localClusterID?: string;
  /** Namespaces the hub may never fill here besides the system ones (the controller's own, say). */
  protectedNamespaces?: readonly string[];
  logger?: Logger;
  /** Called with an object's failure (or undefined when it synced): where a caller records Events. */
  onOutcome?: (hubKey: string, error: string | undefined) => void;
}

export interface HubSyncCounts {
  matched: number;
  synced: number;
  failed: number;
  lastError: string;
  lastSyncTime: string;
}

const FIELD_MANAGER = 'cluster-registry-hub-sync';

/** An object's outcome: written or checked (synced), or why not. */
type Outcome = { ok: true } | { ok: false; error: string };

/** A reconcile to run again soon without counting as a failure (a write raced another). */
class Retry extends Error {}

export class HubSync {
  private readonly opts: HubSyncOptions;
  private readonly log: Logger;
  private readonly outcomes = new Map<string, Outcome>();
  private lastError = '';
  private lastSyncTime = '';
  private running: { hub: Informer; local: Informer; namespaces: Informer; secrets: Map<string, Informer>; localResource: ApiResource; hubResource: ApiResource; hubWrites: (method: string, path: string) => boolean } | undefined;

  constructor(opts: HubSyncOptions) {
    this.opts = opts;
    this.log = (opts.logger ?? silentLogger).child({ hubSyncRule: opts.rule.name, hub: opts.rule.hub });
  }

  /** Whether the hub client may send this write (make it the client's `allowWrite`): nothing before the sync knows its kind's path. */
  readonly hubWriteAllowed = (method: string, path: string): boolean => this.running?.hubWrites(method, path) ?? false;

  /** Runs until the signal aborts; the caches it took from the local factory are given back then. */
  async start(signal: AbortSignal): Promise<void> {
    const rule = this.opts.rule;
    const [localResource, hubResource] = await this.resolve(signal);
    if (!localResource || !hubResource) return;
    const leases: InformerLease[] = [];
    const lease = (l: InformerLease) => (leases.push(l), l.informer);
    const unsubscribe: (() => void)[] = [];
    try {
      const labelSelector = rule.selector.toString();
      const resource = (r: ApiResource): ResourceRef => ({ group: r.group, version: r.version, resource: r.resource });
      const hub = this.opts.hub.factory.acquire({ ...resource(hubResource), ...(labelSelector ? { labelSelector } : {}) });
      leases.push(hub);
      const local = lease(this.opts.local.factory.acquire(resource(localResource)));
      const namespaces = lease(this.opts.local.factory.acquire(NAMESPACES));
      // Listed Secrets are watched by name: the controller needs no right to list every Secret.
      const secrets = new Map(rule.secrets.names.map((n) => [n, lease(this.opts.local.factory.acquire({ ...SECRETS, fieldSelector: `metadata.name=${n}` }))] as const));
      const suffixed = rule.secrets.names.map((n) => `${n}${rule.secrets.remoteSuffix}`);
      this.running = { hub: hub.informer, local, namespaces, secrets, localResource, hubResource, hubWrites: hubWrites(resource(hubResource), suffixed) };
      const controller = new Controller({ name: `hub-sync-${rule.name}`, reconcile: (key, s) => this.reconcile(key, s), logger: this.log, workers: 2 });
      unsubscribe.push(controller.watch(hub.informer, (o) => (localPlace(placeOf(o), rule.names) ? [objectKey(o)] : [])));
      // A spoke object of this rule leads back to the hub object it was made from.
      unsubscribe.push(controller.watch(local, (o) => this.originKeys(o)));
      for (const informer of secrets.values()) {
        unsubscribe.push(
          controller.watch(informer, (s) => {
            const owner = s.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === rule.gvk.kind);
            const obj = owner && local.store.getByName(s.metadata.namespace, owner.name);
            return obj ? this.originKeys(obj) : [];
          }),
        );
      }
      await controller.start(signal, [hub.informer, local, namespaces]);
    } finally {
      for (const u of unsubscribe) u();
      for (const l of leases) l.release();
      this.running = undefined;
    }
  }

  /** The kind's resource on both sides, asked again until both serve it; the hub's must be the same resource as ours. */
  private async resolve(signal: AbortSignal): Promise<[ApiResource, ApiResource] | []> {
    const backoff = new Backoff({ initialMs: 1000, maxMs: 60_000 });
    while (!signal.aborted) {
      try {
        const [local, hub] = await Promise.all([this.opts.local.discovery.resourceFor(this.opts.rule.gvk), this.opts.hub.discovery.resourceFor(this.opts.rule.gvk)]);
        if (local.resource !== hub.resource || local.namespaced !== hub.namespaced) throw new Error(`the hub serves ${this.opts.rule.gvk.kind} as ${hub.resource} (namespaced ${String(hub.namespaced)}), this cluster as ${local.resource} (namespaced ${String(local.namespaced)})`);
        return [local, hub];
      } catch (err) {
        this.lastError = `the kind cannot be synced yet: ${err instanceof Error ? err.message : String(err)}`;
        this.log.info({ reason: this.lastError }, 'waiting for the kind to be served on both sides');
        await sleep(backoff.next(), signal).catch(() => undefined);
      }
    }
    return [];
  }

  /** Why the sync cannot run right now (the kind not served, or a cache that cannot load); undefined while it runs. */
  problem(): string | undefined {
    const r = this.running;
    if (!r) return this.lastError || 'starting';
    for (const [what, informer] of [[`the hub's ${this.opts.rule.gvk.kind} objects`, r.hub], [`this cluster's ${this.opts.rule.gvk.kind} objects`, r.local], ["this cluster's namespaces", r.namespaces]] as const) {
      if (informer.lastError) return `reading ${what} fails: ${informer.lastError}`;
      if (!informer.hasSynced()) return `loading ${what}`;
    }
    return undefined;
  }

  counts(): HubSyncCounts {
    const all = [...this.outcomes.values()];
    return { matched: all.length, synced: all.filter((o) => o.ok).length, failed: all.filter((o) => !o.ok).length, lastError: this.lastError, lastSyncTime: this.lastSyncTime };
  }

  private originKeys(o: KubeObject): string[] {
    if (o.metadata.annotations?.[HUB_ANNOTATIONS.rule] !== this.opts.rule.name) return [];
    const origin = parseOrigin(o.metadata.annotations[HUB_ANNOTATIONS.origin]);
    return origin ? [objectKey({ metadata: origin })] : [];
  }

  private async reconcile(hubKey: string, signal: AbortSignal): Promise<{ requeue: boolean } | void> {
    let outcome: Outcome | undefined;
    try {
      outcome = await this.sync(hubKey, signal);
    } catch (err) {
      if (err instanceof Retry || isConflict(err)) return { requeue: true };
      outcome = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    if (outcome === undefined) {
      this.outcomes.delete(hubKey);
      return;
    }
    this.outcomes.set(hubKey, outcome);
    this.opts.onOutcome?.(hubKey, outcome.ok ? undefined : outcome.error);
    if (outcome.ok) return;
    this.lastError = `${hubKey}: ${outcome.error}`;
    this.log.info({ object: hubKey, reason: outcome.error }, 'hub object not synced');
    // With the work queue's backoff: a lasting failure (access revoked, say) is not retried at a fixed pace.
    return { requeue: true };
  }

  /** The object's outcome, or undefined when there is nothing of it to sync (gone, not this spoke's). */
  private async sync(hubKey: string, signal: AbortSignal): Promise<Outcome | undefined> {
    const r = this.running!;
    const rule = this.opts.rule;
    const hubObj = r.hub.store.get(hubKey);
    if (!hubObj || hubObj.metadata.deletionTimestamp) {
      await this.removeMadeFrom(hubKey, signal);
      return undefined;
    }
    const mapped = localPlace(placeOf(hubObj), rule.names);
    if (!mapped) return undefined;
    if ('refused' in mapped) return { ok: false, error: mapped.refused };
    const place = mapped.place;
    const refusal = this.refusal(place);
    if (refusal) return { ok: false, error: refusal };
    const local = r.local.store.getByName(place.namespace, place.name);
    // Gone soon: its deletion brings it back here, and then it is made again.
    if (local?.metadata.deletionTimestamp) return { ok: true };
    if (paused(hubObj) || paused(local)) return { ok: true };
    if (local && local.metadata.annotations?.[HUB_ANNOTATIONS.rule] !== rule.name) return { ok: false, error: `${objectKey({ metadata: place })} exists here and was not made by this rule; it is left alone` };
    if (local && rule.reportStatus) await this.report(hubObj, local, signal);
    const missing = await this.ensureNamespace(place, signal);
    if (missing) return { ok: false, error: missing };
    const desired = desiredLocal(hubObj, local, { rule: rule.name, place, content: rule.content, generationKeys: rule.generationKeys });
    if (!local) {
      await this.opts.local.rest.create(r.localResource, place.namespace, desired, { fieldManager: FIELD_MANAGER, signal });
      this.wrote();
    } else if (localChanged(local, desired)) {
      await this.opts.local.rest.update(r.localResource, place.namespace, desired, { fieldManager: FIELD_MANAGER, signal });
      this.wrote();
    }
    return { ok: true };
  }

  /** Why the hub may not put an object at `place` here (the same floor as the peer sync's, and the protected namespaces). */
  private refusal(place: Place): string | undefined {
    if (place.namespace !== undefined && this.opts.protectedNamespaces?.includes(place.namespace)) return `nothing is synced into namespace ${place.namespace}`;
    const { group, version, kind } = this.opts.rule.gvk;
    const verdict = copyPolicy({ apiVersion: group ? `${group}/${version}` : version, kind, metadata: { name: place.name, ...(place.namespace !== undefined ? { namespace: place.namespace } : {}) } }, { localClusterID: '', clusters: [], reserved: [] });
    return verdict.allowed ? undefined : verdict.reason;
  }

  /** Status and generation echo up, then the listed Secrets; throws (so the spec stays) if any write fails. */
  private async report(hubObj: KubeObject, local: KubeObject, signal: AbortSignal): Promise<void> {
    const r = this.running!;
    const rule = this.opts.rule;
    const hub = this.opts.hub.rest;
    const { namespace, name } = placeOf(hubObj);
    const report = hubReport(hubObj, local, rule.generationKeys, this.opts.localClusterID);
    if (report.refused) throw new Error(report.refused);
    let resourceVersion = hubObj.metadata.resourceVersion;
    if (report.statusPatch) {
      const written = await hubCall('the status', () => hub.patchStatus(r.hubResource, namespace, name, 'merge', { status: report.statusPatch }, { fieldManager: FIELD_MANAGER, signal }));
      resourceVersion = written.metadata.resourceVersion;
    }
    // With the hub's resourceVersion: an echo about a hub object that changed meanwhile is refused (a conflict, retried).
    if (report.annotations) await hubCall('the generation echo', () => hub.patch(r.hubResource, namespace, name, 'merge', { metadata: { resourceVersion, annotations: report.annotations } }, { fieldManager: FIELD_MANAGER, signal }));
    for (const [secretName, informer] of r.secrets) {
      const localSecret = informer.store.getByName(local.metadata.namespace, secretName);
      if (!localSecret) continue;
      const remoteName = `${secretName}${rule.secrets.remoteSuffix}`;
      const remote = await hubCall(`Secret ${remoteName}`, () => hub.getIfExists<Secret>(SECRETS, namespace, remoteName, { signal }));
      const upload = secretUpload(localSecret, { owner: local, hubOwner: hubObj, remote, listed: rule.secrets.names, remoteName });
      if ('skip' in upload) {
        this.log.debug({ secret: secretName, reason: upload.skip }, 'Secret not sent to the hub');
        continue;
      }
      await hubCall(`Secret ${remoteName}`, () => hub.update(SECRETS, namespace, upload.remote, { fieldManager: FIELD_MANAGER, signal }));
    }
  }

  /** Why the object cannot be made yet, when its namespace is missing and may not be created. */
  private async ensureNamespace(place: Place, signal: AbortSignal): Promise<string | undefined> {
    if (place.namespace === undefined) return undefined;
    const existing = this.running!.namespaces.store.getByName(undefined, place.namespace);
    if (existing?.metadata.deletionTimestamp) throw new Retry(`namespace ${place.namespace} is being deleted`);
    if (existing) return undefined;
    if (!this.opts.rule.createNamespaces) return `namespace ${place.namespace} does not exist here (set spec.namespaces.create to have it made)`;
    await this.opts.local.rest.create(NAMESPACES, undefined, namespaceFor(this.opts.rule.name, { ...place, namespace: place.namespace }), { fieldManager: FIELD_MANAGER, signal }).catch((err: unknown) => {
      // Made meanwhile (by us a moment ago, with the cache behind): what matters is that it exists.
      if (!isAlreadyExists(err)) throw err;
    });
    return undefined;
  }

  /**
   * The hub object behind `hubKey` left the hub's cache: what was made from it goes, once the hub
   * itself confirms that very object (by UID) is gone. One still there (no longer selected, or its
   * mapping changed) is left as it is.
   */
  private async removeMadeFrom(hubKey: string, signal: AbortSignal): Promise<void> {
    const r = this.running!;
    const rule = this.opts.rule;
    const made = r.local.store.list().filter((o) => this.originKeys(o)[0] === hubKey && !paused(o) && !o.metadata.deletionTimestamp);
    if (made.length === 0) return;
    const { namespace, name } = splitKey(hubKey);
    const live = await hubCall('the object', () => this.opts.hub.rest.getIfExists(r.hubResource, namespace, name, { signal }));
    for (const local of made) {
      const origin = parseOrigin(local.metadata.annotations?.[HUB_ANNOTATIONS.origin]);
      if (live && live.metadata.uid === origin?.uid && !live.metadata.deletionTimestamp) continue;
      const place = placeOf(local);
      const ns = place.namespace === undefined ? undefined : r.namespaces.store.getByName(undefined, place.namespace);
      const others = r.local.store.list().filter((o) => o.metadata.namespace === place.namespace && o !== local && o.metadata.annotations?.[HUB_ANNOTATIONS.rule] === rule.name).length;
      if (removalOf(rule.name, place, ns, others) === 'namespace') {
        this.log.info({ namespace: place.namespace }, 'the hub object is gone: deleting the namespace made for it');
        await this.opts.local.rest.delete(NAMESPACES, undefined, place.namespace!, { preconditions: { uid: ns?.metadata.uid ?? '' }, signal });
      } else {
        this.log.info({ object: objectKey({ metadata: place }) }, 'the hub object is gone: deleting it here');
        await this.opts.local.rest.delete(r.localResource, place.namespace, place.name, { propagationPolicy: rule.deletePropagation, preconditions: { uid: local.metadata.uid ?? '' }, signal });
      }
      this.wrote();
    }
  }

  private wrote(): void {
    this.lastSyncTime = metaTime(new Date());
  }
}

/**
 * A call to the hub whose failure is told by its status alone: the hub's own error text is input
 * from another cluster (it could quote what was just sent), so it reaches no log, Event or status.
 */
async function hubCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isConflict(err)) throw err;
    if (err instanceof ApiError) throw new Error(`the hub refused ${what}: ${err.code} ${err.reason}`);
    throw err;
  }
}

function placeOf(o: KubeObject): Place {
  return { ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name ?? '' };
}

/** The writes a spoke sends its hub: PATCH of an object of the kind or of its status, PUT of the Secrets named. */
export function hubWrites(resource: ResourceRef, secretNames: readonly string[]): (method: string, path: string) => boolean {
  const base = escape(resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`);
  const kind = new RegExp(`^${base}(/namespaces/[^/]+)?/${escape(resource.resource)}/[^/]+(/status)?$`);
  const secrets = new RegExp(`^/api/v1/namespaces/[^/]+/secrets/(${secretNames.map(escape).join('|')})$`);
  return (method, path) => (method === 'PATCH' && kind.test(path)) || (secretNames.length > 0 && method === 'PUT' && secrets.test(path));
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

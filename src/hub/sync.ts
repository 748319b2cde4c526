// One hub-and-spoke sync: the objects of one kind that a hub declares for this cluster (the
// spoke). Spec, labels and annotations come down; status, the generation echo and listed Secrets
// go up, and only after the status write succeeded does the spec advance (the hub always sees
// where the spoke stands before it is moved on). Level-triggered over two caches, the hub's and
// the spoke's, keyed by the hub object.
//
// Everything the hub sends is input from another cluster: a mapped place that is no valid name, or
// an object the trust boundary refuses (asked with the very object about to be written, before
// every create and update) is refused. What the sync makes here records
// the hub object it was made from, so it never passes for this cluster's own. A spoke object is
// deleted only when the very hub object it was made from (its UID, recorded on it) is confirmed
// gone by the hub itself; an unreachable hub, or a rule that stopped selecting an object, deletes
// nothing. A namespace made for an object goes with it only while it holds nothing else. A hub
// decides how many objects it declares: the rule makes at most `maxObjects` of them here, and says
// so for the others.
//
// Usable as a library: give it the clients and informer factories of both clusters and a checked
// rule (`checkHubRule`), and run `start` next to your own controllers.
import { HUB_ANNOTATIONS } from '../core/api/keys.ts';
import { NAMESPACES, SECRETS, type Secret } from '../core/api/resources.ts';
import { metaTime } from '../core/api/time.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { desiredLocal, hubReport, localChanged, localPlace, namespaceFor, parseOrigin, paused, removalOf, secretUpload, type HubRule, type Place } from '../core/hub/index.ts';
import { mayHold, type TrustFacts } from '../core/trust/index.ts';
import {
  ApiError,
  Backoff,
  Controller,
  isAlreadyExists,
  isConflict,
  namespaceHoldsOnly,
  objectKey,
  silentLogger,
  sleep,
  splitKey,
  type ApiResource,
  type Discovery,
  type EventHandler,
  type Informer,
  type InformerFactory,
  type InformerLease,
  type Logger,
  type ResourceRef,
  type ObjectClient,
} from '../kube/index.ts';

export interface ClusterSide {
  rest: ObjectClient;
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
  /** The controller namespace here, which a hub never fills (besides the system ones). */
  namespace?: string;
  /** Namespaces of ours here nothing is ever delivered into (the hub credentials'). */
  closedNamespaces?: readonly string[];
  /** This cluster's registry, for the trust boundary (credentials a Cluster names are never the hub's to write). */
  clusters?: () => readonly Cluster[];
  logger?: Logger;
  /** Called with an object's failure (or undefined when it synced): where a caller records Events. */
  onOutcome?: (hubKey: string, error: string | undefined) => void;
  /** Called when a namespace made for a hub object outlived it (it held more than that object), with why. */
  onNamespaceKept?: (namespace: string, why: string) => void;
  /** Objects of the kind the rule may make here at most (the namespaces made for them aside); default: no bound. */
  maxObjects?: number;
}

export interface HubSyncCounts {
  matched: number;
  synced: number;
  failed: number;
  lastError: string;
  lastSyncTime: string;
}

const FIELD_MANAGER = 'cluster-registry-hub-sync';

/** An object's outcome: written or checked (synced), or why not (`full`: the rule holds all the objects it may make). */
type Outcome = { ok: true } | { ok: false; error: string; full?: true };

/** How long an object made may take to show in the cache before it no longer counts against the bound. */
const MADE_UNSEEN_MS = 60_000;

/** A reconcile to run again soon without counting as a failure (a write raced another). */
class Retry extends Error {}

export class HubSync {
  private readonly opts: HubSyncOptions;
  private readonly log: Logger;
  private readonly outcomes = new Map<string, Outcome>();
  private lastError = '';
  private lastSyncTime = '';
  /** The objects here this rule made, by key (kept from the local cache's events). */
  private readonly made = new Set<string>();
  /** Objects created and not yet seen in the local cache, by key, with when. */
  private readonly unseen = new Map<string, number>();
  /** Hub objects not made here because the rule holds all it may make. */
  private readonly full = new Set<string>();
  private running: { hub: ReadonlyMap<string, Informer>; local: Informer; namespaces: Informer; secrets: Map<string, Informer>; localResource: ApiResource; hubResource: ApiResource; hubWrites: (method: string, path: string) => boolean } | undefined;

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
      // One watch per hub namespace the rule names (a grant covers those only), or one for all.
      const hubNamespaces = hubResource.namespaced && rule.hubNamespaces.length > 0 ? rule.hubNamespaces : [''];
      const hub = new Map(hubNamespaces.map((namespace) => [namespace, lease(this.opts.hub.factory.acquire({ ...resource(hubResource), ...(namespace ? { namespace } : {}), ...(labelSelector ? { labelSelector } : {}) }))] as const));
      const local = lease(this.opts.local.factory.acquire(resource(localResource)));
      const namespaces = lease(this.opts.local.factory.acquire(NAMESPACES));
      // Listed Secrets are watched by name: the controller needs no right to list every Secret.
      const secrets = new Map(rule.secrets.names.map((n) => [n, lease(this.opts.local.factory.acquire({ ...SECRETS, fieldSelector: `metadata.name=${n}` }))] as const));
      const suffixed = rule.secrets.names.map((n) => `${n}${rule.secrets.remoteSuffix}`);
      this.running = { hub, local, namespaces, secrets, localResource, hubResource, hubWrites: hubWrites(resource(hubResource), suffixed) };
      const controller = new Controller({ name: `hub-sync-${rule.name}`, reconcile: (key, s) => this.reconcile(key, s), logger: this.log, workers: 2 });
      for (const informer of hub.values()) unsubscribe.push(controller.watch(informer, (o) => (localPlace(placeOf(o), rule.names) ? [objectKey(o)] : [])));
      // A spoke object of this rule leads back to the hub object it was made from.
      unsubscribe.push(controller.watch(local, (o) => this.originKeys(o)));
      // Counted afresh: the handler is given every object cached now.
      for (const counted of [this.made, this.unseen, this.full]) counted.clear();
      unsubscribe.push(local.addEventHandler(this.countMade(controller)));
      for (const informer of secrets.values()) {
        unsubscribe.push(
          controller.watch(informer, (s) => {
            const owner = s.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === rule.gvk.kind);
            const obj = owner && local.store.getByName(s.metadata.namespace, owner.name);
            return obj ? this.originKeys(obj) : [];
          }),
        );
      }
      await controller.start(signal, [...hub.values(), local, namespaces]);
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
        if (!hub.namespaced && this.opts.rule.hubNamespaces.length > 0) throw new Error(`${this.opts.rule.gvk.kind} is cluster-scoped: spec.hubNamespaces does not apply`);
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
    const kind = this.opts.rule.gvk.kind;
    const hub = [...r.hub].map(([namespace, informer]) => [`the hub's ${kind} objects${namespace ? ` in namespace ${namespace}` : ''}`, informer] as const);
    for (const [what, informer] of [...hub, [`this cluster's ${kind} objects`, r.local], ["this cluster's namespaces", r.namespaces]] as const) {
      // A grant covers the namespaces it names: reading every namespace with one is forbidden.
      const hint = informer.lastError?.startsWith('403') && r.hubResource.namespaced && informer === r.hub.get('') ? ' (list the hub namespaces the grant covers in spec.hubNamespaces)' : '';
      if (informer.lastError) return `reading ${what} fails: ${informer.lastError}${hint}`;
      if (!informer.hasSynced()) return `loading ${what}`;
    }
    return undefined;
  }

  counts(): HubSyncCounts {
    const all = [...this.outcomes.values()];
    return { matched: all.length, synced: all.filter((o) => o.ok).length, failed: all.filter((o) => !o.ok).length, lastError: this.lastError, lastSyncTime: this.lastSyncTime };
  }

  /** Why some hub objects are not made here (the rule holds all it may make), or undefined. */
  overBudget(): string | undefined {
    if (this.full.size === 0) return undefined;
    return `${this.full.size} hub object(s) not made here: the rule holds its budget of ${this.opts.maxObjects ?? 0} objects`;
  }

  /**
   * Keeps `made` to the objects of the local cache this rule made. One that goes makes room:
   * the hub objects waiting for it are looked at again.
   */
  private countMade(controller: Controller): EventHandler {
    const name = this.opts.rule.name;
    const seen = (o: KubeObject): void => {
      const key = objectKey(o);
      this.unseen.delete(key);
      if (o.metadata.annotations?.[HUB_ANNOTATIONS.rule] === name) this.made.add(key);
      else gone(o);
    };
    const gone = (o: KubeObject): void => {
      if (!this.made.delete(objectKey(o))) return;
      for (const key of this.full) controller.enqueue(key);
    };
    return { onAdd: seen, onUpdate: (_old, o) => seen(o), onDelete: gone };
  }

  /**
   * Takes a place among the objects the rule may make for one about to be created; undefined when
   * there is none. Checked and taken with no await between, so concurrent creates never overshoot.
   */
  private reserve(key: string): { release(): void } | undefined {
    const max = this.opts.maxObjects;
    if (max === undefined) return { release: () => undefined };
    const now = Date.now();
    for (const [k, at] of this.unseen) if (now - at >= MADE_UNSEEN_MS || this.made.has(k)) this.unseen.delete(k);
    if (this.made.size + this.unseen.size >= max) return undefined;
    this.unseen.set(key, now);
    return { release: () => this.unseen.delete(key) };
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
    if (outcome !== undefined && !outcome.ok && outcome.full) this.full.add(hubKey);
    else this.full.delete(hubKey);
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
    const hubNamespace = splitKey(hubKey).namespace ?? '';
    const hubCache = r.hub.get(r.hub.has('') ? '' : hubNamespace);
    // A namespace the rule no longer reads: its objects are not this rule's any more, and stay.
    if (!hubCache) return undefined;
    const hubObj = hubCache.store.get(hubKey);
    if (!hubObj || hubObj.metadata.deletionTimestamp) {
      await this.removeMadeFrom(hubKey, signal);
      return undefined;
    }
    const mapped = localPlace(placeOf(hubObj), rule.names);
    if (!mapped) return undefined;
    if ('refused' in mapped) return { ok: false, error: mapped.refused };
    const place = mapped.place;
    const local = r.local.store.getByName(place.namespace, place.name);
    // Gone soon: its deletion brings it back here, and then it is made again.
    if (local?.metadata.deletionTimestamp) return { ok: true };
    if (paused(hubObj) || paused(local)) return { ok: true };
    if (local && local.metadata.annotations?.[HUB_ANNOTATIONS.rule] !== rule.name) return { ok: false, error: `${objectKey({ metadata: place })} exists here and was not made by this rule; it is left alone` };
    const desired = desiredLocal(hubObj, local, { rule: rule.name, place, content: rule.content, generationKeys: rule.generationKeys });
    // What would be written, as it would be written: nothing of it is reported or made when it may not be held here.
    const refusal = this.refusal(desired);
    if (refusal) return { ok: false, error: refusal };
    if (local && rule.reportStatus) await this.report(hubObj, local, signal);
    // Before its namespace: nothing is made for an object that will not be.
    const reserved = local ? undefined : this.reserve(objectKey({ metadata: place }));
    if (!local && !reserved) return { ok: false, error: `the rule holds its budget of ${this.opts.maxObjects ?? 0} objects here, so no more are made`, full: true };
    try {
      const missing = await this.ensureNamespace(place, signal);
      if (missing) {
        reserved?.release();
        return { ok: false, error: missing };
      }
      if (!local) await this.opts.local.rest.create(r.localResource, place.namespace, desired, { fieldManager: FIELD_MANAGER, signal });
    } catch (err) {
      reserved?.release();
      throw err;
    }
    if (!local) {
      this.wrote();
    } else if (localChanged(local, desired)) {
      await this.opts.local.rest.update(r.localResource, place.namespace, desired, { fieldManager: FIELD_MANAGER, signal });
      this.wrote();
    }
    return { ok: true };
  }

  /**
   * Why the hub may not make this cluster hold `obj`, the very object about to be created or
   * updated: the trust boundary, as for what peers deliver. The one place the hub sync asks it.
   */
  private refusal(obj: KubeObject): string | undefined {
    const facts: TrustFacts = { localClusterID: this.opts.localClusterID ?? '', namespace: this.opts.namespace ?? '', clusters: this.opts.clusters?.() ?? [], reserved: [], closedNamespaces: this.opts.closedNamespaces ?? [], credentialsTarget: () => undefined };
    // A hub delivers no registry entries, so who it is never weighs here.
    const verdict = mayHold(obj, { channel: 'hub', from: '', current: undefined }, facts);
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
    const namespace = namespaceFor(this.opts.rule.name, { ...place, namespace: place.namespace });
    const refusal = this.refusal(namespace);
    if (refusal) return refusal;
    await this.opts.local.rest.create(NAMESPACES, undefined, namespace, { fieldManager: FIELD_MANAGER, signal }).catch((err: unknown) => {
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
      if (ns && removalOf(rule.name, place, ns, others) === 'namespace' && (await this.namespaceGoes(ns, local, signal))) {
        this.log.info({ namespace: place.namespace }, 'the hub object is gone: deleting the namespace made for it, which holds nothing else');
        await this.opts.local.rest.delete(NAMESPACES, undefined, ns.metadata.name ?? '', { preconditions: { uid: ns.metadata.uid ?? '' }, signal });
      } else {
        this.log.info({ object: objectKey({ metadata: place }) }, 'the hub object is gone: deleting it here');
        await this.opts.local.rest.delete(r.localResource, place.namespace, place.name, { propagationPolicy: rule.deletePropagation, preconditions: { uid: local.metadata.uid ?? '' }, signal });
      }
      this.wrote();
    }
  }

  /**
   * Whether the namespace made for `local` may go with it: only when it holds nothing but `local`
   * (and what it owns). Otherwise someone here put something there since: the namespace stays,
   * and loses its mark, so it is never again taken for one this sync made.
   */
  private async namespaceGoes(ns: KubeObject, local: KubeObject, signal: AbortSignal): Promise<boolean> {
    const name = ns.metadata.name ?? '';
    const contents = await namespaceHoldsOnly(this.opts.local.rest, this.opts.local.discovery, name, [local], signal);
    if (contents.only) return true;
    const why = `namespace ${name} was made for ${objectKey(local)}, which is gone from the hub, but ${contents.why}: it is kept, and no longer marked as made by this rule`;
    this.log.info({ namespace: name, reason: contents.why }, 'keeping the namespace made for a hub object: it holds more');
    // With the version read: a namespace changed meanwhile is looked at again.
    await this.opts.local.rest.patch(NAMESPACES, undefined, name, 'merge', { metadata: { resourceVersion: ns.metadata.resourceVersion, annotations: { [HUB_ANNOTATIONS.namespaceOwner]: null } } }, { fieldManager: FIELD_MANAGER, signal });
    this.opts.onNamespaceKept?.(name, why);
    return false;
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

// One hub-and-spoke sync: the objects of one kind that a hub declares for this cluster (the
// spoke). Spec, labels and annotations come down; status, the generation echo and listed Secrets
// go up, and only after the status write succeeded does the spec advance (the hub always sees
// where the spoke stands before it is moved on). Level-triggered over two caches, the hub's and
// the spoke's, keyed by the hub object.
//
// Usable as a library: give it the clients and informer factories of both clusters and a checked
// rule (`checkHubRule`), and run `start` next to your own controllers.
import { HUB_ANNOTATIONS } from '../core/api/keys.ts';
import { NAMESPACES, SECRETS, type Secret } from '../core/api/resources.ts';
import type { KubeObject } from '../core/api/types.ts';
import { desiredLocal, hubPlace, hubReport, localChanged, localPlace, namespaceFor, paused, removalOf, secretUpload, type HubRule, type Place } from '../core/hub/index.ts';
import { Controller, isAlreadyExists, objectKey, silentLogger, type Discovery, type Informer, type InformerFactory, type Logger, type ResourceRef, type RestClient } from '../kube/index.ts';

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
  logger?: Logger;
  /** Called with an object's failure (or undefined when it synced): where a caller records Events. */
  onOutcome?: (hubKey: string, error: string | undefined) => void;
  /** How soon a failed or waiting object is looked at again (default 5 s). */
  retryMs?: number;
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

export class HubSync {
  private readonly opts: HubSyncOptions;
  private readonly log: Logger;
  private readonly hubObjects: Informer;
  private readonly localObjects: Informer;
  private readonly namespaces: Informer;
  private readonly controller: Controller;
  private readonly outcomes = new Map<string, Outcome>();
  private lastError = '';
  private lastSyncTime = '';
  private localResource: ResourceRef | undefined;
  private hubResource: ResourceRef | undefined;
  private hubWrites: ((method: string, path: string) => boolean) | undefined;

  constructor(opts: HubSyncOptions) {
    this.opts = opts;
    const rule = opts.rule;
    this.log = (opts.logger ?? silentLogger).child({ hubSyncRule: rule.name, hub: rule.hub });
    const labelSelector = rule.selector.toString();
    this.hubObjects = opts.hub.factory.forKind({ ...rule.gvk, ...(labelSelector ? { labelSelector } : {}) });
    this.localObjects = opts.local.factory.forKind({ ...rule.gvk });
    this.namespaces = opts.local.factory.forResource(NAMESPACES);
    this.controller = new Controller({ name: `hub-sync-${rule.name}`, reconcile: (key) => this.reconcile(key), logger: this.log });
    this.controller.watch(this.hubObjects, (o) => (this.takes(o) ? [objectKey(o)] : []));
    // A spoke object of this rule leads back to its hub object; any other is none of its business.
    this.controller.watch(this.localObjects, (o) => (o.metadata.annotations?.[HUB_ANNOTATIONS.rule] === rule.name ? this.hubKeyOf(placeOf(o)) : []));
    // A listed Secret that changes goes up with the object controlling it (watched by name: the
    // controller needs no right to list every Secret).
    for (const name of rule.secrets.names) {
      const secrets = opts.local.factory.forResource({ ...SECRETS, fieldSelector: `metadata.name=${name}` });
      this.controller.watch(secrets, (s) => {
        const owner = s.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === rule.gvk.kind);
        return owner ? this.hubKeyOf({ ...(s.metadata.namespace ? { namespace: s.metadata.namespace } : {}), name: owner.name }) : [];
      });
    }
  }

  private hubKeyOf(local: Place): string[] {
    const place = hubPlace(local, this.opts.rule.names);
    return place ? [keyOf(place)] : [];
  }

  /** Runs until the signal aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const [local, hub] = await Promise.all([this.opts.local.discovery.resourceFor(this.opts.rule.gvk), this.opts.hub.discovery.resourceFor(this.opts.rule.gvk)]);
    this.localResource = local;
    this.hubResource = hub;
    this.hubWrites = hubWrites(hub, this.opts.rule.secrets.names.map((n) => `${n}${this.opts.rule.secrets.remoteSuffix}`));
    await this.controller.start(signal, [this.hubObjects, this.localObjects, this.namespaces]);
  }

  /** Whether the hub client may send this write (give it as the client's `allowWrite`): nothing before the sync knows its kind's path. */
  hubWriteAllowed(method: string, path: string): boolean {
    return this.hubWrites?.(method, path) ?? false;
  }

  /** Why the hub's objects cannot be read right now (its cache's last LIST or WATCH failed); undefined while they can. */
  hubProblem(): string | undefined {
    const err = this.hubObjects.lastError;
    return err ? `reading the hub's ${this.opts.rule.gvk.kind} objects fails: ${err}` : undefined;
  }

  counts(): HubSyncCounts {
    const all = [...this.outcomes.values()];
    return { matched: all.length, synced: all.filter((o) => o.ok).length, failed: all.filter((o) => !o.ok).length, lastError: this.lastError, lastSyncTime: this.lastSyncTime };
  }

  /** Whether a hub object is this spoke's: its name (and namespace) carry the rule's suffixes. */
  private takes(o: KubeObject): boolean {
    return localPlace(placeOf(o), this.opts.rule.names) !== undefined;
  }

  private async reconcile(hubKey: string): Promise<{ requeueAfter?: number } | void> {
    const outcome = await this.sync(hubKey).catch((err: unknown): Outcome => ({ ok: false, error: err instanceof Error ? err.message : String(err) }));
    if (outcome === undefined) {
      this.outcomes.delete(hubKey);
      return;
    }
    this.outcomes.set(hubKey, outcome);
    this.opts.onOutcome?.(hubKey, outcome.ok ? undefined : outcome.error);
    if (outcome.ok) return;
    this.lastError = `${hubKey}: ${outcome.error}`;
    this.log.info({ object: hubKey, reason: outcome.error }, 'hub object not synced');
    return { requeueAfter: this.opts.retryMs ?? 5_000 };
  }

  /** The object's outcome, or undefined when there is nothing of it to sync (gone, not ours). */
  private async sync(hubKey: string): Promise<Outcome | undefined> {
    const rule = this.opts.rule;
    const hubObj = this.hubObjects.store.get(hubKey);
    const mapped = localPlace(placeOf(hubObj) ?? parseKey(hubKey), rule.names);
    if (!mapped) return undefined;
    if ('refused' in mapped) return hubObj ? { ok: false, error: mapped.refused } : undefined;
    const place = mapped.place;
    const local = this.localObjects.store.getByName(place.namespace, place.name);
    const ours = local?.metadata.annotations?.[HUB_ANNOTATIONS.rule] === rule.name;
    if (!hubObj) {
      // The hub's cache says it is gone, which only a LIST or a watch of the hub can say: an
      // unreachable hub keeps its last state and deletes nothing here.
      if (local && ours && !paused(local)) await this.remove(place, local);
      return undefined;
    }
    if (paused(hubObj) || paused(local)) return { ok: true };
    if (local && !ours) return { ok: false, error: `${keyOf(place)} exists here and was not made by this rule; it is left alone` };
    if (local && rule.status) await this.report(hubObj, local);
    const missing = await this.ensureNamespace(place);
    if (missing) return { ok: false, error: missing };
    const desired = desiredLocal(hubObj, local, { place, content: rule.content, generationKeys: rule.generationKeys });
    (desired.metadata.annotations ??= {})[HUB_ANNOTATIONS.rule] = rule.name;
    const resource = this.localResource!;
    if (!local) {
      await this.opts.local.rest.create(resource, place.namespace, desired, { fieldManager: FIELD_MANAGER });
      this.wrote();
    } else if (localChanged(local, desired)) {
      await this.opts.local.rest.update(resource, place.namespace, desired, { fieldManager: FIELD_MANAGER });
      this.wrote();
    }
    return { ok: true };
  }

  /** Status and generation echo up, then the listed Secrets; throws (so the spec stays) if any write fails. */
  private async report(hubObj: KubeObject, local: KubeObject): Promise<void> {
    const rule = this.opts.rule;
    const hub = this.opts.hub.rest;
    const resource = this.hubResource!;
    const { namespace, name } = placeOf(hubObj);
    const report = hubReport(hubObj, local, rule.generationKeys);
    if (report.status !== undefined) await hub.patchStatus(resource, namespace, name, 'merge', { status: report.status }, { fieldManager: FIELD_MANAGER });
    // With the hub's resourceVersion: an echo about a hub object that changed meanwhile is refused (a conflict, retried).
    if (report.annotations) await hub.patch(resource, namespace, name, 'merge', { metadata: { resourceVersion: hubObj.metadata.resourceVersion, annotations: report.annotations } }, { fieldManager: FIELD_MANAGER });
    for (const secretName of rule.secrets.names) {
      const localSecret = await this.opts.local.rest.getIfExists<Secret>(SECRETS, local.metadata.namespace, secretName);
      if (!localSecret) continue;
      const remoteName = `${secretName}${rule.secrets.remoteSuffix}`;
      const remote = await hub.getIfExists<Secret>(SECRETS, namespace, remoteName);
      const upload = secretUpload(localSecret, { owner: local, hubOwner: hubObj, remote, listed: rule.secrets.names, remoteName });
      if ('skip' in upload) {
        this.log.debug({ secret: secretName, reason: upload.skip }, 'Secret not sent to the hub');
        continue;
      }
      await hub.update(SECRETS, namespace, upload.remote, { fieldManager: FIELD_MANAGER });
      await this.opts.local.rest.patch(SECRETS, local.metadata.namespace, secretName, 'merge', { metadata: { annotations: { [HUB_ANNOTATIONS.uploadedHash]: upload.hash } } }, { fieldManager: FIELD_MANAGER });
    }
  }

  /** Why the object cannot be made yet, when its namespace is missing and may not be created. */
  private async ensureNamespace(place: Place): Promise<string | undefined> {
    if (place.namespace === undefined || this.namespaces.store.getByName(undefined, place.namespace)) return undefined;
    if (!this.opts.rule.createNamespaces) return `namespace ${place.namespace} does not exist here (set spec.namespaces.create to have it made)`;
    await this.opts.local.rest.create(NAMESPACES, undefined, namespaceFor(this.opts.rule.name, { ...place, namespace: place.namespace }), { fieldManager: FIELD_MANAGER }).catch((err: unknown) => {
      // Made meanwhile (by us a moment ago, with the cache behind): what matters is that it exists.
      if (!isAlreadyExists(err)) throw err;
    });
    return undefined;
  }

  private async remove(place: Place, local: KubeObject): Promise<void> {
    const rule = this.opts.rule;
    const namespace = place.namespace === undefined ? undefined : this.namespaces.store.getByName(undefined, place.namespace);
    const others = this.localObjects.store.list().filter((o) => o.metadata.namespace === place.namespace && o.metadata.name !== place.name && o.metadata.annotations?.[HUB_ANNOTATIONS.rule] === rule.name).length;
    if (removalOf(rule.name, place, namespace, others) === 'namespace') {
      this.log.info({ namespace: place.namespace }, 'the hub object is gone: deleting the namespace made for it');
      await this.opts.local.rest.delete(NAMESPACES, undefined, place.namespace!, { preconditions: { uid: namespace!.metadata.uid ?? '' } });
    } else {
      this.log.info({ object: keyOf(place) }, 'the hub object is gone: deleting it here');
      await this.opts.local.rest.delete(this.localResource!, place.namespace, place.name, { propagationPolicy: rule.deletePropagation, preconditions: { uid: local.metadata.uid ?? '' } });
    }
    this.wrote();
  }

  private wrote(): void {
    this.lastSyncTime = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
}

function placeOf(o: KubeObject): Place;
function placeOf(o: KubeObject | undefined): Place | undefined;
function placeOf(o: KubeObject | undefined): Place | undefined {
  if (!o) return undefined;
  return { ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}), name: o.metadata.name ?? '' };
}

function keyOf(p: Place): string {
  return p.namespace ? `${p.namespace}/${p.name}` : p.name;
}

function parseKey(key: string): Place {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
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

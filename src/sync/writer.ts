// Every write the sync makes to the local cluster. A copy is created with a plain create, which
// fails if anything of that name exists (a local object must never be merged into), and from then
// on changed with server-side apply under our field manager, so what a rule stops writing is
// removed while what others add survives. The create leaves our fields owned by an "Update"
// entry; the first apply moves them into our "Apply" entry (the way kubectl upgrades client-side
// applied objects), otherwise they could never be removed.
import { ANNOTATIONS, COPY_MARKS, hasCopyMarks } from '../core/api/index.ts';
import { DRIFT_MARK_MANAGER, FIELD_MANAGER, applyBody, foldedManagedFields, markAnnotations, ownerOf, specPart, type DriftMark } from '../core/rules/index.ts';
import { ApiError, Lru, isConflict, isInvalid, isNotFound, namespaceHoldsOnly, type ApiResource, type Discovery, type KubeObject, type ObjectClient, type ResourceRef } from '../kube/index.ts';
import { placeKey } from './keys.ts';
import type { CopyEvents } from './routing.ts';

/** Kinds whose copy is deleted and made again when an immutable field changes (upstream's list). */
const RECREATE_ON_IMMUTABLE = new Set(['/Service', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/Deployment']);

function ref(r: ApiResource): ResourceRef {
  return { group: r.group, version: r.version, resource: r.resource };
}

/**
 * (It stays beside the writer, not in the core: it reads the API server's error, which the core
 * never sees.) What the API server said when it refused a copy as invalid: its validation (422), a body it
 * cannot decode (400), or server-side apply unable to type the patch (a 500 naming that). A rule
 * whose mutations make such a copy is bad input to report, not a fault to retry; undefined for
 * any other failure.
 */
export function refusedCopy(err: unknown): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  if (err.code !== 422 && err.code !== 400 && !(err.code === 500 && /failed to create typed patch object/.test(err.message))) return undefined;
  const request = `${err.method} ${err.path}: `;
  return err.message.startsWith(request) ? err.message.slice(request.length) : err.message;
}

/** The copy is no longer the object the decision was made on; the caller looks again. */
export class CopyChangedError extends Error {
  override readonly name = 'CopyChangedError';
  constructor() {
    super('the copy was replaced since it was read');
  }
}

/**
 * An apply that fails with a conflict unless the object is still the version the decision was made
 * on: the ownership decision holds for that object only, not for one put in its place meanwhile.
 */
/**
 * The apply body guarded by the copy the decision saw: its version, and its uid, since the API
 * server takes an apply naming only the version of an object deleted since as a create (the copy
 * would come back); with the uid it answers 409.
 */
function guarded(body: KubeObject, resourceVersion: string | undefined, uid: string | undefined): KubeObject & { metadata: { name: string } } {
  return { ...body, metadata: { ...body.metadata, name: body.metadata.name ?? '', ...(resourceVersion ? { resourceVersion } : {}), ...(uid ? { uid } : {}) } };
}

/** How many of our writes are remembered while their watch events are on the way. */
const MAX_PENDING_ECHOES = 10_000;

/** Our writes to one place that are on the way, and the copy events that came meanwhile. */
interface WriteWindow {
  writes: number;
  versions: Set<string>;
  held: KubeObject[];
}

/** A Namespace copy left in place, no longer a copy, because it holds what would go with it; and why. */
export interface KeptNamespace {
  readonly kept: string;
}

/** What a guarded delete found: the copy deleted, already gone, changed since it was read, or kept. */
export type DeleteOutcome = 'deleted' | 'gone' | 'changed' | KeptNamespace;

export class CopyWriter {
  private readonly rest: ObjectClient;
  /** Gets the events held while our writes were on the way that turned out not to be their echoes. */
  private events: Pick<CopyEvents, 'copyChanged'> = { copyChanged: () => undefined };
  /**
   * The version our last write left each copy at (by uid), until its watch event comes back;
   * echoes that never come (the copy deleted meanwhile) are forgotten oldest first.
   */
  private readonly written = new Lru<string>(MAX_PENDING_ECHOES);
  private readonly windows = new Map<string, WriteWindow>();

  private readonly discovery: Discovery;

  /** `discovery` lets the writer look into a Namespace copy before deleting it (see `delete`). */
  constructor(rest: ObjectClient, discovery: Discovery) {
    this.rest = rest;
    this.discovery = discovery;
  }

  /** Where a copy's event held while a write was on the way goes, when it was not that write's echo (the sync's router). */
  listen(events: Pick<CopyEvents, 'copyChanged'>): void {
    this.events = events;
  }

  /**
   * Whether a watch event on a copy is taken care of by our own writes: the echo of our last
   * write to it (forgotten once seen), or an event that came while a write of ours to that place
   * was on the way (held until it returns, then told as a changed copy unless it was that write's
   * echo). An echo shows the copy exactly as the reconcile that wrote it decided; anything
   * written since by anyone has another version.
   */
  consumeEcho(copy: KubeObject): boolean {
    const window = this.windows.get(placeKey(copy));
    if (window) {
      window.held.push(copy);
      return true;
    }
    const uid = copy.metadata.uid ?? '';
    const version = this.written.get(uid);
    if (version === undefined || version !== copy.metadata.resourceVersion) return false;
    this.written.delete(uid);
    return true;
  }

  /**
   * A reconcile decided on this copy as the cache shows it. If a write of ours to it is still on
   * its way back, that decision was made on an older version, so the write's echo no longer
   * settles anything: it is let through to be decided on again.
   */
  forgetEcho(copy: KubeObject): void {
    this.written.delete(copy.metadata.uid ?? '');
  }

  /** Runs one of our writes to the copy at the place of `desired`, keeping track of its echo. */
  private async tracked(desired: KubeObject, write: () => Promise<KubeObject>): Promise<KubeObject> {
    const place = placeKey(desired);
    let window = this.windows.get(place);
    if (!window) this.windows.set(place, (window = { writes: 0, versions: new Set(), held: [] }));
    window.writes++;
    try {
      const copy = await write();
      const { uid, resourceVersion } = copy.metadata;
      if (uid && resourceVersion) {
        window.versions.add(resourceVersion);
        this.written.set(uid, resourceVersion);
      }
      return copy;
    } finally {
      if (--window.writes === 0) {
        this.windows.delete(place);
        for (const held of window.held) {
          if (!window.versions.has(held.metadata.resourceVersion ?? '')) this.events.copyChanged(held, false);
          else if (this.written.get(held.metadata.uid ?? '') === held.metadata.resourceVersion) this.written.delete(held.metadata.uid ?? '');
        }
      }
    }
  }

  async get(resource: ApiResource, namespace: string | undefined, name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.rest.get(ref(resource), namespace, name, { signal });
  }

  /** Creates the copy; rejects with AlreadyExists when anything of that name is there. */
  async create(resource: ApiResource, desired: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    return this.tracked(desired, () => this.rest.create(ref(resource), desired.metadata.namespace, applyBody(desired, specPart(resource)), { fieldManager: FIELD_MANAGER, signal }));
  }

  /** Applies the desired copy over `current` (which the ownership decision allowed to change). */
  async update(resource: ApiResource, desired: KubeObject, current: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    const r = ref(resource);
    const version = await this.foldCreateFields(r, current, signal);
    try {
      return await this.tracked(desired, () => this.rest.apply(r, desired.metadata.namespace, guarded(applyBody(desired, specPart(resource)), version, current.metadata.uid), { fieldManager: FIELD_MANAGER, force: true, signal }));
    } catch (err) {
      if (!(isInvalid(err) && /immutable/i.test(err instanceof Error ? err.message : '') && RECREATE_ON_IMMUTABLE.has(`${resource.group}/${desired.kind ?? ''}`))) throw err;
      // Only the version the decision saw is replaced; one changed meanwhile is decided on again.
      if ((await this.delete(resource, { ...current, metadata: { ...current.metadata, resourceVersion: version } }, signal, { exactVersion: true })) !== 'deleted') throw new CopyChangedError();
      return this.create(resource, desired, signal);
    }
  }

  /**
   * Writes the drift mark on the copy, or takes it off ('clear'), as the mark's own field manager:
   * whatever was edited stays as it is. Guarded by the version the decision saw.
   */
  async mark(resource: ApiResource, desired: KubeObject, current: KubeObject, mark: Required<DriftMark> | 'clear', signal: AbortSignal): Promise<KubeObject> {
    const r = ref(resource);
    const { namespace, name = '' } = desired.metadata;
    // Whoever owns the mark now (a person who edited its text, say), taking it off removes it.
    if (mark === 'clear') {
      const patch = { metadata: { resourceVersion: current.metadata.resourceVersion, annotations: { [ANNOTATIONS.drifted]: null, [ANNOTATIONS.driftedFields]: null } } };
      return this.tracked(desired, () => this.rest.patch(r, namespace, name, 'merge', patch, { signal }));
    }
    const body: KubeObject = { apiVersion: desired.apiVersion, kind: desired.kind, metadata: { name, namespace, annotations: markAnnotations(mark) } };
    return this.tracked(desired, () => this.rest.apply(r, namespace, guarded(body, current.metadata.resourceVersion, current.metadata.uid), { fieldManager: DRIFT_MARK_MANAGER, force: true, signal }));
  }

  /**
   * Moves the fields our create owns into our apply entry. Whether that is needed shows in our own
   * entries (all the cache keeps); the move itself is computed from the copy read afresh, so every
   * other writer's entries are kept. The copy must still be the version the decision saw, and the
   * move is guarded by it (a failed test op is a 422, a storage precondition a 409). Returns the
   * version the apply must find, so a copy replaced meanwhile is never merged into.
   */
  private async foldCreateFields(r: ResourceRef, cached: KubeObject, signal: AbortSignal): Promise<string | undefined> {
    if (!foldedManagedFields(cached)) return cached.metadata.resourceVersion;
    const obj = await this.rest.get(r, cached.metadata.namespace, cached.metadata.name ?? '', { signal }).catch((err: unknown) => {
      throw isNotFound(err) ? new CopyChangedError() : err;
    });
    // The decision was made on the cached version: a copy changed since is decided on again.
    if (obj.metadata.uid !== cached.metadata.uid || obj.metadata.resourceVersion !== cached.metadata.resourceVersion) throw new CopyChangedError();
    const folded = foldedManagedFields(obj);
    if (!folded) return obj.metadata.resourceVersion;
    try {
      const moved = await this.rest.patch(r, obj.metadata.namespace, obj.metadata.name ?? '', 'json', [
        { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
        { op: 'replace', path: '/metadata/managedFields', value: folded },
      ], { signal });
      return moved.metadata.resourceVersion;
    } catch (err) {
      if (isInvalid(err) || isConflict(err)) throw new CopyChangedError();
      throw err;
    }
  }

  /** Applies the desired status through the status subresource, onto exactly the copy `current` is. */
  async applyStatus(resource: ApiResource, desired: KubeObject, current: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    const body = guarded(applyBody(desired, 'status'), current.metadata.resourceVersion, current.metadata.uid);
    return this.tracked(desired, () => this.rest.apply(ref(resource), desired.metadata.namespace, body, { fieldManager: FIELD_MANAGER, force: true, subresource: 'status', signal }));
  }

  /**
   * Deletes exactly this version of the copy (uid, and resourceVersion when given): a copy that
   * was replaced or changed meanwhile is left for the caller to decide on again (`changed`), once
   * its cache has the newer version.
   */
  async delete(resource: ApiResource, copy: KubeObject, signal: AbortSignal, opts: { exactVersion?: boolean; ownersCopiesGo?: boolean } = {}): Promise<DeleteOutcome> {
    // Deleting a namespace deletes everything in it, whoever put it there: a Namespace copy goes
    // only when it holds nothing but copies of the same owner's that go too (their sources went
    // with the namespace's: `ownersCopiesGo`), nothing else. Otherwise it is handed over to
    // whoever uses it: our marks go, and it stays.
    if (resource.group === '' && resource.resource === 'namespaces') {
      const owner = ownerOf(copy);
      const going = (o: KubeObject): boolean => (opts.ownersCopiesGo ?? false) && hasCopyMarks(o) && ownerOf(o) === owner && o.metadata.annotations?.[ANNOTATIONS.resourceSyncDisabled] === undefined;
      const contents = await namespaceHoldsOnly(this.rest, this.discovery, copy.metadata.name ?? '', [], signal, going);
      if (!contents.only) return this.handOver(resource, copy, contents.why, signal);
    }
    try {
      await this.rest.delete(ref(resource), copy.metadata.namespace, copy.metadata.name ?? '', {
        signal,
        preconditions: { uid: copy.metadata.uid, ...(opts.exactVersion ? { resourceVersion: copy.metadata.resourceVersion } : {}) },
      });
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      if (isConflict(err)) return 'changed';
      throw err;
    }
  }

  /** Takes our marks off exactly this version of the copy, so nothing of ours looks at it again. */
  private async handOver(resource: ApiResource, copy: KubeObject, why: string, signal: AbortSignal): Promise<DeleteOutcome> {
    const unmarked = Object.fromEntries(COPY_MARKS.annotations.map((k) => [k, null]));
    const unlabelled = Object.fromEntries(COPY_MARKS.labels.map((k) => [k, null]));
    try {
      await this.rest.patch(ref(resource), undefined, copy.metadata.name ?? '', 'merge', { metadata: { resourceVersion: copy.metadata.resourceVersion, annotations: unmarked, labels: unlabelled } }, { signal });
      return { kept: why };
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      if (isConflict(err)) return 'changed';
      throw err;
    }
  }
}

// Every write the sync makes to the local cluster. A copy is created with a plain create, which
// fails if anything of that name exists (a local object must never be merged into), and from then
// on changed with server-side apply under our field manager, so what a rule stops writing is
// removed while what others add survives. The create leaves our fields owned by an "Update"
// entry; the first apply moves them into our "Apply" entry (the way kubectl upgrades client-side
// applied objects), otherwise they could never be removed.
import { FIELD_MANAGER, applyBody, foldedManagedFields } from '../core/rules/index.ts';
import { isConflict, isInvalid, isNotFound, type ApiResource, type KubeObject, type ResourceRef, type RestClient } from '../kube/index.ts';

/** Kinds whose copy is deleted and made again when an immutable field changes (upstream's list). */
const RECREATE_ON_IMMUTABLE = new Set(['/Service', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/Deployment']);

function ref(r: ApiResource): ResourceRef {
  return { group: r.group, version: r.version, resource: r.resource };
}

export class CopyWriter {
  private readonly rest: RestClient;

  constructor(rest: RestClient) {
    this.rest = rest;
  }

  async get(resource: ApiResource, namespace: string | undefined, name: string, signal: AbortSignal): Promise<KubeObject> {
    return this.rest.get(ref(resource), namespace, name, { signal });
  }

  /** Creates the copy; rejects with AlreadyExists when anything of that name is there. */
  async create(resource: ApiResource, desired: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    return this.rest.create(ref(resource), desired.metadata.namespace, applyBody(desired, resource.subresources.includes('status') ? 'main' : 'whole'), { fieldManager: FIELD_MANAGER, signal });
  }

  /** Applies the desired copy over `current` (which the ownership decision allowed to change). */
  async update(resource: ApiResource, desired: KubeObject, current: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    const r = ref(resource);
    await this.foldCreateFields(r, current, signal);
    try {
      // Without a status subresource, status is part of the object and goes with it.
      const part = resource.subresources.includes('status') ? 'main' : 'whole';
      return await this.rest.apply(r, desired.metadata.namespace, applyBody(desired, part) as KubeObject & { metadata: { name: string } }, { fieldManager: FIELD_MANAGER, force: true, signal });
    } catch (err) {
      if (!(isInvalid(err) && /immutable/i.test(err instanceof Error ? err.message : '') && RECREATE_ON_IMMUTABLE.has(`${resource.group}/${desired.kind ?? ''}`))) throw err;
      await this.delete(resource, current, signal);
      return this.create(resource, desired, signal);
    }
  }

  /**
   * Moves the fields our create owns into our apply entry. The move is guarded by the
   * resourceVersion it was computed from; a copy changed meanwhile is read again once.
   */
  private async foldCreateFields(r: ResourceRef, current: KubeObject, signal: AbortSignal): Promise<void> {
    const ns = current.metadata.namespace;
    const name = current.metadata.name ?? '';
    for (let attempt = 0, obj = current; ; attempt++) {
      const folded = foldedManagedFields(obj);
      if (!folded) return;
      try {
        await this.rest.patch(r, ns, name, 'json', [
          { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
          { op: 'replace', path: '/metadata/managedFields', value: folded },
        ], { signal });
        return;
      } catch (err) {
        // A failed test op is a 422 (or 409 from the storage precondition).
        if (attempt > 0 || !(isInvalid(err) || isConflict(err))) throw err;
        obj = await this.rest.get(r, ns, name, { signal });
      }
    }
  }

  /** Applies the desired status through the status subresource. */
  async applyStatus(resource: ApiResource, desired: KubeObject, signal: AbortSignal): Promise<KubeObject> {
    const body = applyBody(desired, 'status') as KubeObject & { metadata: { name: string } };
    return this.rest.apply(ref(resource), desired.metadata.namespace, body, { fieldManager: FIELD_MANAGER, force: true, subresource: 'status', signal });
  }

  /**
   * Deletes exactly this version of the copy (uid, and resourceVersion when given): a copy that
   * was replaced or changed meanwhile is left for the next look. False when it was gone or changed.
   */
  async delete(resource: ApiResource, copy: KubeObject, signal: AbortSignal, opts: { exactVersion?: boolean } = {}): Promise<boolean> {
    try {
      await this.rest.delete(ref(resource), copy.metadata.namespace, copy.metadata.name ?? '', {
        signal,
        preconditions: { uid: copy.metadata.uid, ...(opts.exactVersion ? { resourceVersion: copy.metadata.resourceVersion } : {}) },
      });
      return true;
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return false;
      throw err;
    }
  }
}

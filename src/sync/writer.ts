// Every write the sync makes to the local cluster. A copy is created with a plain create, which
// fails if anything of that name exists (a local object must never be merged into), and from then
// on changed with server-side apply under our field manager, so what a rule stops writing is
// removed while what others add survives. The create leaves our fields owned by an "Update"
// entry; the first apply moves them into our "Apply" entry (the way kubectl upgrades client-side
// applied objects), otherwise they could never be removed.
import { FIELD_MANAGER, applyBody } from '../core/rules/index.ts';
import { isConflict, isInvalid, isNotFound, type ApiResource, type KubeObject, type ResourceRef, type RestClient } from '../kube/index.ts';

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: unknown;
  [k: string]: unknown;
}

/** Kinds whose copy is deleted and made again when an immutable field changes (upstream's list). */
const RECREATE_ON_IMMUTABLE = new Set(['/Service', 'apps/StatefulSet', 'apps/DaemonSet', 'apps/Deployment']);

export type WriteOutcome = 'created' | 'updated' | 'recreated' | 'unchanged';

function ref(r: ApiResource): ResourceRef {
  return { group: r.group, version: r.version, resource: r.resource };
}

function mergeFields(a: unknown, b: unknown): unknown {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return b ?? a;
  const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) out[k] = k in out ? mergeFields(out[k], v) : v;
  return out;
}

/**
 * The managedFields with our create-time ("Update") entry folded into our "Apply" entry of the
 * same subresource; undefined when there is nothing to fold.
 */
export function foldedManagedFields(current: KubeObject): ManagedFieldsEntry[] | undefined {
  const entries = (current.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  const ours = (op: string) => entries.findIndex((e) => e.manager === FIELD_MANAGER && e.operation === op && !e.subresource);
  const u = ours('Update');
  if (u < 0) return undefined;
  const a = ours('Apply');
  const update = entries[u]!;
  const folded: ManagedFieldsEntry = a < 0 ? { ...update, operation: 'Apply' } : { ...entries[a]!, fieldsV1: mergeFields(entries[a]!.fieldsV1, update.fieldsV1) };
  return entries.flatMap((e, i) => (i === u ? (a < 0 ? [folded] : []) : i === a ? [folded] : [e]));
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
    return this.rest.create(ref(resource), desired.metadata.namespace, applyBody(desired, 'main'), { fieldManager: FIELD_MANAGER, signal });
  }

  /** Applies the desired copy over `current` (which the ownership decision allowed to change). */
  async update(resource: ApiResource, desired: KubeObject, current: KubeObject, signal: AbortSignal): Promise<{ object: KubeObject; outcome: WriteOutcome }> {
    const r = ref(resource);
    const ns = desired.metadata.namespace;
    const name = desired.metadata.name ?? '';
    await this.foldCreateFields(r, current, signal);
    try {
      const object = await this.rest.apply(r, ns, { ...applyBody(desired, 'main') } as KubeObject & { metadata: { name: string } }, { fieldManager: FIELD_MANAGER, force: true, signal });
      return { object, outcome: 'updated' };
    } catch (err) {
      if (!(isInvalid(err) && /immutable/i.test(err instanceof Error ? err.message : '') && RECREATE_ON_IMMUTABLE.has(`${resource.group}/${desired.kind ?? ''}`))) throw err;
      await this.delete(resource, current, signal);
      const object = await this.create(resource, desired, signal);
      return { object, outcome: 'recreated' };
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

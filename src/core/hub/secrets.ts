// Secrets a spoke sends back to the hub (credentials a spoke's controller made for the hub's
// object, say). Only Secrets the rule lists and the spoke object controls go, only their data,
// only into Secrets the hub already has (the hub decides what may arrive, and its RBAC can stay
// update-only), and only when the hub's data differs from what would be sent.
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { cloneJSON } from '../api/clone.ts';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { Secret } from '../api/resources.ts';
import type { KubeObject } from '../api/types.ts';

/** SHA-256 of a Secret's data, keys in order: what an upload carries. */
export function secretHash(secret: Secret): string {
  const data = secret.data ?? {};
  const canonical = JSON.stringify(Object.keys(data).sort().map((k) => [k, data[k]]));
  return createHash('sha256').update(canonical).digest('hex');
}

export function controlledBy(obj: KubeObject, owner: KubeObject): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === owner.metadata.uid);
}

export type SecretUpload = { skip: string } | { remote: Secret };

/**
 * The hub Secret to write for the local Secret `local`, or why none is: `owner` is the spoke
 * object, `hubOwner` the hub object (made the hub Secret's controller unless it has one), `remote`
 * the hub's Secret named for it. The hub Secret keeps its own metadata: only the data and the
 * hash of it are the spoke's.
 */
export function secretUpload(local: Secret, o: { owner: KubeObject; hubOwner: KubeObject; remote: Secret | undefined; listed: readonly string[]; remoteName: string }): SecretUpload {
  const name = local.metadata.name ?? '';
  if (!o.listed.includes(name)) return { skip: `Secret ${name} is not listed in the rule` };
  if (!controlledBy(local, o.owner)) return { skip: `Secret ${name} is not controlled by ${o.owner.metadata.name ?? ''}` };
  if (!o.remote) return { skip: `the hub has no Secret ${o.remoteName} to receive ${name}` };
  if ((o.remote.type ?? 'Opaque') !== (local.type ?? 'Opaque')) return { skip: `the hub's Secret ${o.remoteName} is of type ${o.remote.type ?? 'Opaque'}, ${name} of ${local.type ?? 'Opaque'}` };
  if (isDeepStrictEqual(o.remote.data ?? {}, local.data ?? {})) return { skip: `the hub's Secret ${o.remoteName} already holds what ${name} does` };
  const remote = cloneJSON(o.remote);
  remote.data = cloneJSON(local.data ?? {});
  remote.metadata.annotations = { ...remote.metadata.annotations, [HUB_ANNOTATIONS.uploadedHash]: secretHash(local) };
  if (!remote.metadata.ownerReferences?.some((r) => r.controller === true)) {
    const h = o.hubOwner;
    remote.metadata.ownerReferences = [...(remote.metadata.ownerReferences ?? []), { apiVersion: h.apiVersion ?? '', kind: h.kind ?? '', name: h.metadata.name ?? '', uid: h.metadata.uid ?? '', controller: true }];
  }
  return { remote };
}

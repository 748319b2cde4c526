// Secrets a spoke sends back to the hub (credentials a spoke's controller made for the hub's
// object, say). Only Secrets the rule lists and the spoke object controls go, only into Secrets
// the hub already has (the hub decides what may arrive, and its RBAC can stay update-only), and
// only when their content changed since the last upload, which the local Secret records.
import { createHash } from 'node:crypto';
import { cloneJSON } from '../api/clone.ts';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { Secret } from '../api/resources.ts';
import type { KubeObject } from '../api/types.ts';

/** JSON with object keys in order, so equal content hashes equal whatever the key order. */
function stableJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJSON).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${stableJSON(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function uploadedAnnotations(secret: Secret): Record<string, string> {
  const { [HUB_ANNOTATIONS.uploadedHash]: _hash, ...rest } = secret.metadata.annotations ?? {};
  return rest;
}

/** SHA-256 of what an upload carries: data, type, labels and annotations (less the hash itself). */
export function secretHash(secret: Secret): string {
  const content = { data: secret.data ?? {}, type: secret.type ?? 'Opaque', labels: secret.metadata.labels ?? {}, annotations: uploadedAnnotations(secret) };
  return createHash('sha256').update(stableJSON(content)).digest('hex');
}

export function controlledBy(obj: KubeObject, owner: KubeObject): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === owner.metadata.uid);
}

export type SecretUpload = { skip: string } | { remote: Secret; hash: string };

/**
 * The hub Secret to write for the local Secret `local`, or why none is: `owner` is the spoke
 * object, `hubOwner` the hub object (made the hub Secret's controller), `remote` the hub's
 * Secret named for it.
 */
export function secretUpload(local: Secret, o: { owner: KubeObject; hubOwner: KubeObject; remote: Secret | undefined; listed: readonly string[]; remoteName: string }): SecretUpload {
  const name = local.metadata.name ?? '';
  if (!o.listed.includes(name)) return { skip: `Secret ${name} is not listed in the rule` };
  if (!controlledBy(local, o.owner)) return { skip: `Secret ${name} is not controlled by ${o.owner.metadata.name ?? ''}` };
  if (!o.remote) return { skip: `the hub has no Secret ${o.remoteName} to receive ${name}` };
  if ((o.remote.type ?? 'Opaque') !== (local.type ?? 'Opaque')) return { skip: `the hub's Secret ${o.remoteName} is of type ${o.remote.type ?? 'Opaque'}, ${name} of ${local.type ?? 'Opaque'}` };
  const hash = secretHash(local);
  if (local.metadata.annotations?.[HUB_ANNOTATIONS.uploadedHash] === hash) return { skip: `Secret ${name} is unchanged since its last upload` };
  const remote = cloneJSON(o.remote);
  remote.data = cloneJSON(local.data ?? {});
  remote.metadata.labels = { ...remote.metadata.labels, ...local.metadata.labels };
  remote.metadata.annotations = { ...remote.metadata.annotations, ...uploadedAnnotations(local) };
  const hubOwner = o.hubOwner;
  const others = (remote.metadata.ownerReferences ?? []).filter((r) => r.controller !== true);
  remote.metadata.ownerReferences = [...others, { apiVersion: hubOwner.apiVersion ?? '', kind: hubOwner.kind ?? '', name: hubOwner.metadata.name ?? '', uid: hubOwner.metadata.uid ?? '', controller: true }];
  return { remote, hash };
}

// What the sync work queue holds: one source object as one rule sees it on one peer. A key says
// what to look at, never what happened; the reconcile reads everything else from the caches.
import { gvkOf } from '../core/api/index.ts';
import { jsonKeyCodec, type KeyCodec, type KubeObject } from '../kube/index.ts';

export type SyncKey = readonly [rule: string, peer: string, namespace: string, name: string];

export const SYNC_KEY_CODEC: KeyCodec<SyncKey> = jsonKeyCodec<SyncKey>();

export function syncKey(rule: string, peer: string, namespace: string | undefined, name: string): SyncKey {
  return [rule, peer, namespace ?? '', name];
}

/** `namespace/name` (or `name`), as people read object keys. */
export function objectName(key: SyncKey): string {
  return key[2] ? `${key[2]}/${key[3]}` : key[3];
}

/**
 * The place of a copy, whatever version of its kind: `group/kind|namespace/name`. Writes of ours
 * to a place, and keys waiting for any change there, are found by it.
 */
export function placeKey(o: KubeObject): string {
  const g = gvkOf(o);
  return `${g.group}/${g.kind}|${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

// What the sync work queue holds: one source object as one rule sees it on one peer. A key says
// what to look at, never what happened; the reconcile reads everything else from the caches.
import { jsonKeyCodec, type KeyCodec } from '../kube/index.ts';

export type SyncKey = readonly [rule: string, peer: string, namespace: string, name: string];

export const SYNC_KEY_CODEC: KeyCodec<SyncKey> = jsonKeyCodec<SyncKey>();

export function syncKey(rule: string, peer: string, namespace: string | undefined, name: string): SyncKey {
  return [rule, peer, namespace ?? '', name];
}

/** `namespace/name` (or `name`), as people read object keys. */
export function objectName(key: SyncKey): string {
  return key[2] ? `${key[2]}/${key[3]}` : key[3];
}

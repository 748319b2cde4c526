// Keys waiting for something to happen before they can make progress (a namespace to appear, a
// cluster to join the group, a peer to reach an owner, a blocking copy to change or its cluster
// to die). Whatever a reconcile waits for must release it again, or the key would be lost; and a
// key that is reconciled again forgets what it waited for, so the index never outgrows the keys
// currently blocked.
import type { KubeObject } from '../core/api/types.ts';
import { placeKey, SYNC_KEY_CODEC, type SyncKey } from './keys.ts';

export class Waiters {
  private readonly byEvent = new Map<string, Set<string>>();
  private readonly byKey = new Map<string, Set<string>>();
  private readonly enqueue: (key: SyncKey) => void;

  constructor(enqueue: (key: SyncKey) => void) {
    this.enqueue = enqueue;
  }

  /** `key` is reconciled again when `event` is released. */
  wait(event: string, key: SyncKey): void {
    const k = SYNC_KEY_CODEC.encode(key);
    this.add(this.byEvent, event, k);
    this.add(this.byKey, k, event);
  }

  /** Enqueues the keys waiting for `event` (at most `limit` of them, oldest first; the others wait on). */
  release(event: string, limit = Infinity): void {
    const keys = this.byEvent.get(event);
    if (!keys) return;
    let released = 0;
    for (const k of keys) {
      if (released++ >= limit) break;
      keys.delete(k);
      this.drop(this.byKey, k, event);
      this.enqueue(SYNC_KEY_CODEC.decode(k));
    }
    if (keys.size === 0) this.byEvent.delete(event);
  }

  /** Whether any key waits for `event`. */
  waiting(event: string): boolean {
    return this.byEvent.has(event);
  }

  /** Whether `key` waits for `event`. */
  waitsFor(key: SyncKey, event: string): boolean {
    return this.byKey.get(SYNC_KEY_CODEC.encode(key))?.has(event) ?? false;
  }

  /** Releases every event `match` selects (e.g. all of one peer's). */
  releaseWhere(match: (event: string) => boolean): void {
    for (const event of [...this.byEvent.keys()]) if (match(event)) this.release(event);
  }

  /** The key is being reconciled: what it waited for no longer matters. */
  forget(key: SyncKey): void {
    const k = SYNC_KEY_CODEC.encode(key);
    const events = this.byKey.get(k);
    if (!events) return;
    this.byKey.delete(k);
    for (const e of events) this.drop(this.byEvent, e, k);
  }

  get size(): number {
    return this.byKey.size;
  }

  private add(map: Map<string, Set<string>>, at: string, value: string): void {
    let set = map.get(at);
    if (!set) map.set(at, (set = new Set()));
    set.add(value);
  }

  private drop(map: Map<string, Set<string>>, at: string, value: string): void {
    const set = map.get(at);
    if (!set) return;
    set.delete(value);
    if (set.size === 0) map.delete(at);
  }
}

/** What keys wait for, as event names. */
export const WAIT = {
  namespace: (name: string) => `namespace|${name}`,
  death: (clusterID: string) => `death|${clusterID}`,
  alive: (clusterID: string) => `alive|${clusterID}`,
  reach: (peer: string, clusterID: string) => `reach|${peer}|${clusterID}`,
  registered: (clusterID: string) => `registered|${clusterID}`,
  /** One of the copies the rule made from the peer went: it may make another within its budget. */
  ruleCopies: (rule: string, peerID: string) => `rule-copies|${rule}|${peerID}`,
  /** One of the copies any rule made from the peer went: all of them together may hold another. */
  peerCopies: (peerID: string) => `peer-copies|${peerID}`,
  /** Any change of the copy at the place of `o` (its kind, in any version, and namespace/name). */
  target: (o: KubeObject) => `target|${placeKey(o)}`,
  /** Any change of the local registry (template data). */
  clusters: 'clusters',
} as const;

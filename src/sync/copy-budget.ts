// What the copies made here from each peer may hold: a rule makes at most so many copies from one
// peer, and all the rules together at most as many objects and bytes from one peer as our caches
// of it may hold (a peer's few sources, copied under other names by many rules, would otherwise
// make us hold them many times over). Copies are counted by uid from their watches (so a copy two
// overlapping watches see counts once), and writes on their way are counted with them: a create
// or a takeover as one more copy, an update by what it adds.

import { sourceIdentityOf } from '../core/api/index.ts';
import { chargedSize, type CacheLimits, type KubeObject } from '../kube/index.ts';

/** A place taken for a write on its way (see `CopyBudget.reserve`). */
export interface CopyReservation {
  /** The server took the write: the place is held until the copy's watch shows that version. */
  made(copy: KubeObject): void;
  /** The write failed: the place is free again. */
  abandon(): void;
}

/** Why no place was taken: which budget is full (the rule's from that peer, or all copies from it), in words for the rule's status. */
export interface NoRoom {
  readonly budget: 'rule' | 'peer';
  readonly full: string;
}

/** How long a write made may take to show in its watch before its place counts no more. */
const MADE_UNSEEN_MS = 60_000;

/** Where a copy's place was freed: its rule and peer now hold less than before. */
export interface Freed {
  readonly rule: string;
  readonly peer: string;
}

interface Held extends Freed {
  readonly key: string;
  readonly bytes: number;
  readonly version: string | undefined;
}

interface Making {
  readonly key: string;
  readonly peer: string;
  /** 1 for a copy that is not yet counted under `key`, 0 for an update of one that is. */
  readonly objects: number;
  readonly bytes: number;
  uid?: string;
  at: number;
}

interface Totals {
  objects: number;
  bytes: number;
}

function budgetKey(rule: string, peerID: string): string {
  return `${rule}|${peerID}`;
}

export class CopyBudget {
  private readonly perPeer: CacheLimits;
  private readonly held = new Map<string, Held>();
  private readonly byKey = new Map<string, number>();
  private readonly byPeer = new Map<string, Totals>();
  private readonly making = new Set<Making>();

  /** `perPeer`: what the copies from one peer may hold together, whatever rules made them. */
  constructor(perPeer: CacheLimits) {
    this.perPeer = perPeer;
  }

  /**
   * A copy as its watch shows it now (`gone`: deleted, or no longer watched); says where this
   * freed room (the copy went, moved to another rule or peer, or shrank).
   */
  observe(copy: KubeObject, gone: boolean): Freed | undefined {
    const uid = copy.metadata.uid;
    if (!uid) return undefined;
    const was = this.drop(uid);
    // Whatever was on its way for this copy shows now (or never will).
    for (const m of this.making) if (m.uid === uid) this.making.delete(m);
    const id = sourceIdentityOf(copy);
    const is = gone || !id?.rule ? undefined : this.hold(uid, { rule: id.rule, peer: id.clusterID, key: budgetKey(id.rule, id.clusterID), bytes: chargedSize(copy), version: copy.metadata.resourceVersion });
    if (!was || (is?.key === was.key && is.bytes >= was.bytes)) return undefined;
    return { rule: was.rule, peer: was.peer };
  }

  /** Room left for the rule `rule` from the peer `peerID`, when it may make `max`. */
  free(rule: string, peerID: string, max: number): number {
    const key = budgetKey(rule, peerID);
    return max - (this.byKey.get(key) ?? 0) - this.makingOf((m) => m.key === key).objects;
  }

  /** Whether the copies from the peer `peerID` leave room for another. */
  roomFrom(peerID: string): boolean {
    const p = this.byPeer.get(peerID) ?? { objects: 0, bytes: 0 };
    const m = this.makingOf((x) => x.peer === peerID);
    return p.objects + m.objects < this.perPeer.maxObjects && p.bytes + m.bytes < this.perPeer.maxBytes;
  }

  /**
   * Takes a place for writing `copy`, which the rule `rule` makes from the peer `peerID` (where
   * `current` is what the copy's place holds now, if anything); or says why there is none: the
   * rule holds `max` copies from that peer, or (when the rule's copies count there, `peerWide`)
   * that peer's copies hold their budget.
   */
  reserve(rule: string, peerID: string, limit: { readonly max: number; readonly peerWide: boolean }, copy: KubeObject, current?: KubeObject): CopyReservation | NoRoom {
    const { max } = limit;
    this.forgetStale();
    const key = budgetKey(rule, peerID);
    const was = current?.metadata.uid ? this.held.get(current.metadata.uid) : undefined;
    const counted = was?.key === key;
    const objects = counted ? 0 : 1;
    const bytes = chargedSize(copy) - (counted ? was.bytes : 0);
    if (objects === 0 && bytes <= 0) return { made: () => undefined, abandon: () => undefined };
    if (objects > 0 && this.free(rule, peerID, max) <= 0) return { budget: 'rule', full: `the rule holds its budget of ${max} copies from this peer` };
    const p = this.byPeer.get(peerID) ?? { objects: 0, bytes: 0 };
    const m = this.makingOf((x) => x.peer === peerID);
    if (limit.peerWide && (p.objects + m.objects + objects > this.perPeer.maxObjects || p.bytes + m.bytes + bytes > this.perPeer.maxBytes)) {
      return { budget: 'peer', full: `the copies from this peer hold their budget of ${this.perPeer.maxObjects} objects and ${(this.perPeer.maxBytes / 2 ** 20).toFixed(1)} MiB` };
    }
    const entry: Making = { key, peer: peerID, objects, bytes, at: Date.now() };
    this.making.add(entry);
    return {
      made: (written) => {
        const uid = written.metadata.uid;
        const seen = uid ? this.held.get(uid) : undefined;
        // Its watch showed this version already: counted there.
        if (!uid || (seen?.key === key && seen.version === written.metadata.resourceVersion)) return void this.making.delete(entry);
        entry.uid = uid;
        entry.at = Date.now();
      },
      abandon: () => void this.making.delete(entry),
    };
  }

  private hold(uid: string, held: Held): Held {
    this.held.set(uid, held);
    this.byKey.set(held.key, (this.byKey.get(held.key) ?? 0) + 1);
    const p = this.byPeer.get(held.peer) ?? { objects: 0, bytes: 0 };
    this.byPeer.set(held.peer, { objects: p.objects + 1, bytes: p.bytes + held.bytes });
    return held;
  }

  private drop(uid: string): Held | undefined {
    const held = this.held.get(uid);
    if (!held) return undefined;
    this.held.delete(uid);
    const n = (this.byKey.get(held.key) ?? 1) - 1;
    if (n === 0) this.byKey.delete(held.key);
    else this.byKey.set(held.key, n);
    const p = this.byPeer.get(held.peer) ?? { objects: 1, bytes: held.bytes };
    if (p.objects === 1) this.byPeer.delete(held.peer);
    else this.byPeer.set(held.peer, { objects: p.objects - 1, bytes: p.bytes - held.bytes });
    return held;
  }

  private makingOf(pick: (m: Making) => boolean): Totals {
    const t = { objects: 0, bytes: 0 };
    for (const m of this.making) {
      if (!pick(m)) continue;
      t.objects += m.objects;
      t.bytes += m.bytes;
    }
    return t;
  }

  /** Writes made too long ago to be still unseen are forgotten (their watch event was missed). */
  private forgetStale(): void {
    const now = Date.now();
    for (const m of this.making) if (m.uid !== undefined && now - m.at > MADE_UNSEEN_MS) this.making.delete(m);
  }
}

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
  /** The server took the write: the place is held until the copy's watch shows it. */
  made(copy: KubeObject): void;
  /** The write failed: the place is free again. */
  abandon(): void;
}

/** Why no place was taken: which budget is full (the rule's from that peer, or all copies from it), in words for the rule's status. */
export interface NoRoom {
  readonly budget: 'rule' | 'peer';
  readonly full: string;
}

/** Hears where room was freed: the rule's copies from the peer, and all copies from it, may hold more than before. */
export type FreedListener = (rule: string, peerID: string) => void;

/** How long a write made may take to show in its watch before its place counts no more. */
const MADE_UNSEEN_MS = 60_000;

const NOTHING_TAKEN: CopyReservation = { made: () => undefined, abandon: () => undefined };

interface Held {
  readonly rule: string;
  readonly peer: string;
  readonly key: string;
  readonly bytes: number;
  readonly version: string | undefined;
}

interface Making {
  readonly rule: string;
  readonly peer: string;
  readonly key: string;
  /** 1 for a copy not yet counted under `key`, 0 for an update of one that is. */
  readonly objects: number;
  /** What it adds to all copies from the peer: a copy not yet counted from it in full, or what an update adds. */
  readonly peerObjects: number;
  readonly peerBytes: number;
  /** The version of the copy an update was made over. */
  readonly from: string | undefined;
  uid?: string;
  timer?: NodeJS.Timeout;
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
  private readonly freed: FreedListener;
  private readonly held = new Map<string, Held>();
  private readonly byKey = new Map<string, number>();
  private readonly byPeer = new Map<string, Totals>();
  private readonly making = new Set<Making>();

  /** `perPeer`: what the copies from one peer may hold together, whatever rules made them; `freed` hears of every place given back. */
  constructor(perPeer: CacheLimits, freed: FreedListener) {
    this.perPeer = perPeer;
    this.freed = freed;
  }

  /**
   * A copy as its watch shows it now (`gone`: deleted, or no longer watched); room it freed (the
   * copy went, moved to another rule or peer, or shrank) is reported.
   */
  observe(copy: KubeObject, gone: boolean): void {
    const uid = copy.metadata.uid;
    if (!uid) return;
    const version = copy.metadata.resourceVersion;
    const was = this.drop(uid);
    // A write on its way for this copy shows now (or never will); the version it was made over does not.
    for (const m of this.making) if (m.uid === uid && (gone || m.from === undefined || m.from !== version)) this.settle(m);
    const id = sourceIdentityOf(copy);
    const is = gone || !id?.rule ? undefined : this.hold(uid, { rule: id.rule, peer: id.clusterID, key: budgetKey(id.rule, id.clusterID), bytes: chargedSize(copy), version });
    if (was && !(is?.key === was.key && is.bytes >= was.bytes)) this.freed(was.rule, was.peer);
  }

  /** Room left for the rule `rule` from the peer `peerID`, when it may make `max`. */
  free(rule: string, peerID: string, max: number): number {
    const key = budgetKey(rule, peerID);
    let making = 0;
    for (const m of this.making) if (m.key === key) making += m.objects;
    return max - (this.byKey.get(key) ?? 0) - making;
  }

  /** Whether the copies from the peer `peerID` leave room for another. */
  roomFrom(peerID: string): boolean {
    const t = this.peerTotals(peerID);
    return t.objects < this.perPeer.maxObjects && t.bytes < this.perPeer.maxBytes;
  }

  /**
   * Takes a place for writing `copy`, which the rule `rule` makes from the peer `peerID` (where
   * `current` is what the copy's place holds now, if anything); or says why there is none: the
   * rule holds `max` copies from that peer, or (when the rule's copies count there, `peerWide`)
   * that peer's copies hold their budget.
   */
  reserve(rule: string, peerID: string, limit: { readonly max: number; readonly peerWide: boolean }, copy: KubeObject, current?: KubeObject): CopyReservation | NoRoom {
    const { max } = limit;
    const key = budgetKey(rule, peerID);
    const was = current?.metadata.uid ? this.held.get(current.metadata.uid) : undefined;
    const objects = was?.key === key ? 0 : 1;
    // A copy another rule made from the same peer is counted there already: only its growth is new.
    const fromPeer = was?.peer === peerID ? was : undefined;
    const peerObjects = fromPeer ? 0 : 1;
    const peerBytes = Math.max(0, chargedSize(copy) - (fromPeer?.bytes ?? 0));
    if (objects === 0 && peerBytes === 0) return NOTHING_TAKEN;
    if (objects > 0 && this.free(rule, peerID, max) <= 0) return { budget: 'rule', full: `the rule holds its budget of ${max} copies from this peer` };
    const t = this.peerTotals(peerID);
    if (limit.peerWide && (t.objects + peerObjects > this.perPeer.maxObjects || t.bytes + peerBytes > this.perPeer.maxBytes)) {
      return { budget: 'peer', full: `the copies from this peer hold their budget of ${this.perPeer.maxObjects} objects and ${(this.perPeer.maxBytes / 2 ** 20).toFixed(1)} MiB` };
    }
    const entry: Making = { rule, peer: peerID, key, objects, peerObjects, peerBytes, from: objects === 0 ? current?.metadata.resourceVersion : undefined };
    this.making.add(entry);
    return {
      made: (written) => {
        const uid = written.metadata.uid;
        const seen = uid ? this.held.get(uid) : undefined;
        // Its watch showed it already (a new copy in any version; an update once past the version it was made over): counted there.
        if (!uid || (seen?.key === key && (objects === 1 || seen.version !== entry.from))) return this.settle(entry);
        entry.uid = uid;
        // Its watch event was missed (the watch restarts with a fresh list, which counts it): the place goes back.
        entry.timer = setTimeout(() => this.giveBack(entry), MADE_UNSEEN_MS).unref();
      },
      abandon: () => this.giveBack(entry),
    };
  }

  /** Gives back the places of writes still on their way: their watches are closing. */
  close(): void {
    for (const m of this.making) this.settle(m);
  }

  private peerTotals(peerID: string): Totals {
    const t = { ...(this.byPeer.get(peerID) ?? { objects: 0, bytes: 0 }) };
    for (const m of this.making) {
      if (m.peer !== peerID) continue;
      t.objects += m.peerObjects;
      t.bytes += m.peerBytes;
    }
    return t;
  }

  /** The write on its way counts no more (it shows in its watch now, or never will). */
  private settle(m: Making): void {
    clearTimeout(m.timer);
    this.making.delete(m);
  }

  private giveBack(m: Making): void {
    if (!this.making.has(m)) return;
    this.settle(m);
    this.freed(m.rule, m.peer);
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
}

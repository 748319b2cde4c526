// A bound on what the caches of one cluster may hold: objects and bytes (as JSON) over all of its
// informers. A peer decides what it serves, so without one a member could make every other
// member hold as much as it likes. An informer whose next object or listing would not fit keeps
// what it holds, fails like a broken watch (its readers then treat that cluster as unreachable:
// nothing is created or deleted on its word) and lists again later; the other clusters' caches
// are untouched.

export interface CacheLimits {
  readonly maxObjects: number;
  readonly maxBytes: number;
}

export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
}

/** The size an object is charged: its length as JSON, which is what a peer sends for it. */
export function chargedSize(obj: unknown): number {
  return JSON.stringify(obj).length;
}

/** A cache charged to a budget: its name says which in a refusal. */
export interface BudgetedCache {
  readonly budgetName: string;
}

export class CacheBudget {
  readonly limits: CacheLimits;
  private heldObjects = 0;
  private heldBytes = 0;
  /** Why each cache had its last growth refused, until it fits again (or stops asking). */
  private readonly refused = new Map<BudgetedCache, string>();
  private readonly onChange: (exceeded: string | undefined) => void;
  /** A budget this one draws on too (all peers' caches together); its refusals are reported here. */
  private readonly parent: CacheBudget | undefined;
  /** Whose caches it bounds, as its refusals say it ("it": the peer's). */
  private readonly of: string;

  constructor(o: { limits: CacheLimits; of?: string; onChange?: (exceeded: string | undefined) => void; parent?: CacheBudget }) {
    this.limits = o.limits;
    this.of = o.of ?? 'it';
    this.onChange = o.onChange ?? (() => undefined);
    this.parent = o.parent;
  }

  get objects(): number {
    return this.heldObjects;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  /** Why the budget is exceeded now, or undefined. */
  get exceeded(): string | undefined {
    return this.refused.values().next().value;
  }

  /**
   * Takes a change of `objects` and `bytes` for `cache` (negative to give back); throws
   * BudgetExceededError and takes nothing when a growth would not fit.
   */
  charge(objects: number, bytes: number, cache: BudgetedCache): void {
    this.check(objects, bytes, cache);
    this.take(objects, bytes);
  }

  /** Throws BudgetExceededError when a growth by `objects` and `bytes` would not fit; takes nothing. */
  check(objects: number, bytes: number, cache: BudgetedCache): void {
    const grows = objects > 0 || bytes > 0;
    if (grows && !this.holds(objects, bytes)) {
      this.refuse(cache, `its ${cache.budgetName} would take our caches of ${this.of} past their budget of ${this.limits.maxObjects} objects and ${mib(this.limits.maxBytes)} (held: ${this.heldObjects} objects, ${mib(this.heldBytes)})`);
    }
    if (!grows || !this.parent) return;
    try {
      this.parent.check(objects, bytes, cache);
    } catch (err) {
      if (err instanceof BudgetExceededError) this.refuse(cache, err.message);
      throw err;
    }
  }

  /** Whether so much more would fit here and in every budget above, refusing nothing if not (see check). */
  fits(objects: number, bytes: number): boolean {
    return this.holds(objects, bytes) && (this.parent?.fits(objects, bytes) ?? true);
  }

  /** Whether this budget alone would hold so much more than it does. */
  private holds(objects: number, bytes: number): boolean {
    return this.heldObjects + objects <= this.limits.maxObjects && this.heldBytes + bytes <= this.limits.maxBytes;
  }

  /** `cache` holds all it was sent again (a listing taken whole), stopped asking for more, or went. */
  fitted(cache: BudgetedCache): void {
    this.mark(cache, undefined);
    this.parent?.fitted(cache);
  }

  private take(objects: number, bytes: number): void {
    this.heldObjects += objects;
    this.heldBytes += bytes;
    this.parent?.take(objects, bytes);
  }

  private refuse(cache: BudgetedCache, why: string): never {
    this.mark(cache, why);
    throw new BudgetExceededError(why);
  }

  private mark(cache: BudgetedCache, why: string | undefined): void {
    const before = this.exceeded;
    if (why === undefined) this.refused.delete(cache);
    else if (!this.refused.has(cache)) this.refused.set(cache, why);
    if (this.exceeded !== before) this.onChange(this.exceeded);
  }
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

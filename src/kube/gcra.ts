// Per-key rate limiting with the generic cell rate algorithm (throttled v2's GCRARateLimiter, as
// upstream uses per sync controller): a key may be processed `ratePerSecond` times a second with
// bursts of `burst` + 1, and a limited key learns exactly when it may come back. State for at
// most `maxKeys` keys is kept, least recently used first out, so memory stays bounded whatever
// the number of objects (a forgotten key simply starts with a full burst again).

export interface GcraOptions {
  /** Sustained rate per key (upstream default 5). */
  readonly ratePerSecond: number;
  /** Extra requests allowed at once (upstream default 10, i.e. 11 immediate). */
  readonly burst: number;
  /** Keys remembered (upstream default 1024). */
  readonly maxKeys: number;
  readonly now?: () => number;
}

export class GcraRateLimiter {
  private readonly emissionMs: number;
  private readonly toleranceMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;
  // Theoretical arrival time per key; a Map iterates in insertion order, which serves as the LRU.
  private readonly tat = new Map<string, number>();

  constructor(opts: GcraOptions) {
    if (!(opts.ratePerSecond > 0)) throw new Error('rate must be positive');
    if (!(opts.burst >= 0) || !(opts.maxKeys >= 1)) throw new Error('burst must be >= 0 and maxKeys >= 1');
    this.emissionMs = 1000 / opts.ratePerSecond;
    this.toleranceMs = this.emissionMs * (opts.burst + 1);
    this.maxKeys = opts.maxKeys;
    this.now = opts.now ?? (() => performance.now());
  }

  /** Takes one slot for `key`: 0 when allowed now, else the milliseconds until it would be. */
  take(key: string): number {
    const now = this.now();
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const next = tat + this.emissionMs;
    const allowAt = next - this.toleranceMs;
    if (now < allowAt) return allowAt - now;
    this.tat.delete(key);
    this.tat.set(key, next);
    if (this.tat.size > this.maxKeys) this.tat.delete(this.tat.keys().next().value as string);
    return 0;
  }

  get size(): number {
    return this.tat.size;
  }
}

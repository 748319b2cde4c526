// A work queue with client-go semantics: a key waiting in the queue is held once however often it
// is added (dirty set); a key being processed is never handed to a second worker (processing set),
// and if it is added meanwhile it is queued again when `done` is called. Rate-limited requeues
// take the larger of a per-key exponential backoff and an overall token bucket, like client-go's
// DefaultControllerRateLimiter.
import { counter, exponentialBuckets, gauge, histogram } from './metrics.ts';

export interface RateLimiter<K> {
  /** Delay in ms before the item may be retried; counts a failure. */
  when(item: K): number;
  forget(item: K): void;
  numRequeues(item: K): number;
}

/** base * 2^failures, capped (client-go: 5 ms to 1000 s). */
export class ItemExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  private readonly failures = new Map<K, number>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(baseMs = 5, maxMs = 1_000_000) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }

  when(item: K): number {
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** n);
  }

  forget(item: K): void {
    this.failures.delete(item);
  }

  numRequeues(item: K): number {
    return this.failures.get(item) ?? 0;
  }
}

/** An overall token bucket (golang.org/x/time/rate reservations): qps refill, burst capacity. */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  private readonly qps: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private last: number;

  constructor(qps = 10, burst = 100, now: () => number = () => performance.now()) {
    this.qps = qps;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.last = now();
  }

  when(_item: K): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: K): void {}

  numRequeues(_item: K): number {
    return 0;
  }
}

export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  private readonly limiters: RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  when(item: K): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(item)));
  }

  forget(item: K): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: K): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(item)));
  }
}

export function defaultControllerRateLimiter<K>(): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ItemExponentialFailureRateLimiter<K>(5, 1_000_000), new BucketRateLimiter<K>(10, 100));
}

const labels = ['name'] as const;
const depth = gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: labels });
const adds = counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: labels });
const retries = counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: labels });
const buckets = exponentialBuckets(10e-9, 10, 12);
const queueDuration = histogram({
  name: 'workqueue_queue_duration_seconds',
  help: 'How long in seconds an item stays in workqueue before being requested',
  labelNames: labels,
  buckets,
});
const workDuration = histogram({
  name: 'workqueue_work_duration_seconds',
  help: 'How long in seconds processing an item from workqueue takes.',
  labelNames: labels,
  buckets,
});

// Gauges derived from in-flight work are computed at scrape time over the live named queues.
const liveQueues = new Set<WorkQueue<unknown>>();
gauge({
  name: 'workqueue_unfinished_work_seconds',
  help: 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration.',
  labelNames: labels,
  collect() {
    this.reset();
    for (const q of liveQueues) this.set({ name: q.name }, q.inFlightSeconds().total);
  },
});
gauge({
  name: 'workqueue_longest_running_processor_seconds',
  help: 'How many seconds has the longest running processor for workqueue been running.',
  labelNames: labels,
  collect() {
    this.reset();
    for (const q of liveQueues) this.set({ name: q.name }, q.inFlightSeconds().longest);
  },
});

export interface WorkQueueOptions<K> {
  /** Metrics label; an unnamed queue records no metrics. */
  name?: string;
  rateLimiter?: RateLimiter<K>;
  now?: () => number;
}

export class WorkQueue<K = string> {
  readonly name: string;
  private readonly queue: K[] = [];
  private readonly dirty = new Set<K>();
  private readonly processing = new Map<K, number>();
  private readonly addedAt = new Map<K, number>();
  private readonly waiting = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  private readonly getters: ((item: K | undefined) => void)[] = [];
  private readonly drainers: (() => void)[] = [];
  private readonly rateLimiter: RateLimiter<K>;
  private readonly now: () => number;
  private shutting = false;

  constructor(opts: WorkQueueOptions<K> = {}) {
    this.name = opts.name ?? '';
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter<K>();
    this.now = opts.now ?? (() => performance.now());
    if (this.name) liveQueues.add(this as WorkQueue<unknown>);
  }

  add(item: K): void {
    if (this.shutting || this.dirty.has(item)) return;
    if (this.name) adds.inc({ name: this.name });
    this.dirty.add(item);
    if (!this.addedAt.has(item)) this.addedAt.set(item, this.now());
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.handOut();
  }

  /** Adds after `delayMs`; an item already waiting keeps the earlier of the two times. */
  addAfter(item: K, delayMs: number): void {
    if (this.shutting) return;
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    const at = this.now() + delayMs;
    const existing = this.waiting.get(item);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.waiting.delete(item);
      this.add(item);
    }, delayMs);
    this.waiting.set(item, { at, timer });
  }

  /** Adds after the rate limiter's delay for this item (a failed attempt). */
  addRateLimited(item: K): void {
    if (this.name) retries.inc({ name: this.name });
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Clears the item's failure history (after a success). */
  forget(item: K): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: K): number {
    return this.rateLimiter.numRequeues(item);
  }

  get length(): number {
    return this.queue.length;
  }

  get shuttingDown(): boolean {
    return this.shutting;
  }

  /**
   * The next item, marked as processing until `done`. Waits while the queue is empty; resolves
   * `undefined` once the queue is shut down and empty.
   */
  get(): Promise<K | undefined> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.shutting) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of the item; if it was added meanwhile, it is queued again. */
  done(item: K): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.processing.delete(item);
    if (this.name) workDuration.observe({ name: this.name }, (this.now() - started) / 1000);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.handOut();
    } else if (this.processing.size === 0) {
      for (const d of this.drainers.splice(0)) d();
    }
  }

  /** Stops accepting items; queued items are still handed out, then `get` resolves undefined. */
  shutDown(): void {
    if (this.shutting) return;
    this.shutting = true;
    for (const { timer } of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    if (this.queue.length === 0) for (const g of this.getters.splice(0)) g(undefined);
    if (this.name) {
      liveQueues.delete(this as WorkQueue<unknown>);
      depth.set({ name: this.name }, 0);
    }
  }

  /** Shuts down and resolves once no item is being processed. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainers.push(resolve));
  }

  /** Sum and maximum of how long the items in flight have been processed, in seconds. */
  inFlightSeconds(): { total: number; longest: number } {
    const t = this.now();
    let total = 0;
    let longest = 0;
    for (const started of this.processing.values()) {
      const s = (t - started) / 1000;
      total += s;
      longest = Math.max(longest, s);
    }
    return { total, longest };
  }

  private handOut(): void {
    while (this.queue.length > 0 && this.getters.length > 0) this.getters.shift()!(this.take());
    if (this.name) depth.set({ name: this.name }, this.queue.length);
  }

  private take(): K {
    const item = this.queue.shift()!;
    const t = this.now();
    this.processing.set(item, t);
    this.dirty.delete(item);
    const added = this.addedAt.get(item);
    this.addedAt.delete(item);
    if (this.name) {
      if (added !== undefined) queueDuration.observe({ name: this.name }, (t - added) / 1000);
      depth.set({ name: this.name }, this.queue.length);
    }
    if (this.shutting && this.queue.length === 0) for (const g of this.getters.splice(0)) g(undefined);
    return item;
  }
}

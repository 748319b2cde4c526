// The controller loop (controller-runtime's Controller): N workers take keys from a rate-limited
// work queue and reconcile them. A reconcile that throws is retried with backoff; one that asks
// for `requeueAfter` comes back after that delay; anything it throws is caught, so the loop never
// dies of a bad reconcile. Keys are typed (a codec turns them into the queue's strings), and
// `watch` maps cache events to keys through predicates, so each controller keeps its own event
// mapping beside it.
import type { EventHandler, Informer } from './informer.ts';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
import { nextTurn } from './time-slice.ts';
import { counter, exponentialBuckets, gauge, histogram } from './metrics.ts';
import type { KubeObject } from './types.ts';
import { objectKey } from './types.ts';
import { WorkQueue } from './workqueue.ts';
import type { RateLimiter } from './workqueue.ts';

export interface ReconcileResult {
  /** Reconcile again after this many ms (and forget the failure history). */
  requeueAfter?: number;
  /** Reconcile again with rate-limited backoff. */
  requeue?: boolean;
}

export type Reconciler<K = string> = (key: K, signal: AbortSignal) => Promise<ReconcileResult | void>;

/** How a typed key travels through the queue: equal keys must encode to equal strings. */
export interface KeyCodec<K> {
  encode(key: K): string;
  decode(text: string): K;
}

const STRING_KEYS: KeyCodec<string> = { encode: (k) => k, decode: (s) => s };

/** A codec for keys that are plain JSON values with a fixed field order (e.g. tuples). */
export function jsonKeyCodec<K>(): KeyCodec<K> {
  return { encode: (k) => JSON.stringify(k), decode: (s) => JSON.parse(s) as K };
}

/** Which cache events reach the queue; absent means all of that kind. */
export interface Predicates<T> {
  add?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T): boolean;
}

export interface ControllerOptions<K = string> {
  /** Metrics label `controller` and the work queue's name. */
  name: string;
  reconcile: Reconciler<K>;
  /** Needed unless keys are strings. */
  codec?: KeyCodec<K>;
  /** Concurrent reconciles; a key is never reconciled by two workers at once. Default 1. */
  workers?: number;
  rateLimiter?: RateLimiter<string>;
  logger?: Logger;
}

const reconcileTotal = counter({
  name: 'controller_runtime_reconcile_total',
  help: 'Total number of reconciliations per controller',
  labelNames: ['controller', 'result'],
});
const reconcileErrors = counter({
  name: 'controller_runtime_reconcile_errors_total',
  help: 'Total number of reconciliation errors per controller',
  labelNames: ['controller'],
});
const reconcileTime = histogram({
  name: 'controller_runtime_reconcile_time_seconds',
  help: 'Length of time per reconciliation per controller',
  labelNames: ['controller'],
  buckets: [...exponentialBuckets(0.005, 2, 12), 30, 60],
});
const activeWorkers = gauge({
  name: 'controller_runtime_active_workers',
  help: 'Number of currently used workers per controller',
  labelNames: ['controller'],
});
const maxConcurrent = gauge({
  name: 'controller_runtime_max_concurrent_reconciles',
  help: 'Maximum number of concurrent reconciles per controller',
  labelNames: ['controller'],
});

export class Controller<K = string> {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly reconcile: Reconciler<K>;
  private readonly codec: KeyCodec<K>;
  private readonly workers: number;
  private readonly log: Logger;

  constructor(opts: ControllerOptions<K>) {
    this.name = opts.name;
    this.reconcile = opts.reconcile;
    this.codec = opts.codec ?? (STRING_KEYS as unknown as KeyCodec<K>);
    this.workers = opts.workers ?? 1;
    this.log = (opts.logger ?? silentLogger).child({ controller: opts.name });
    this.queue = new WorkQueue<string>({ name: opts.name, rateLimiter: opts.rateLimiter });
  }

  enqueue(key: K): void {
    this.queue.add(this.codec.encode(key));
  }

  /**
   * Enqueues the keys `map` gives for an informer's events that pass `predicates` (default: the
   * object's own key, every event). An update maps both versions, so a key the object left is
   * looked at too. Returns the unsubscribe.
   */
  watch<T extends KubeObject>(informer: Informer<T>, map: (obj: T) => readonly K[] = (o) => [objectKey(o) as K], predicates: Predicates<T> = {}): () => void {
    const enqueue = (obj: T): void => {
      for (const k of map(obj)) this.enqueue(k);
    };
    const handler: EventHandler<T> = {
      onAdd: (obj) => {
        if (predicates.add?.(obj) ?? true) enqueue(obj);
      },
      onUpdate: (oldObj, newObj) => {
        if (!(predicates.update?.(oldObj, newObj) ?? true)) return;
        enqueue(oldObj);
        if (newObj !== oldObj) enqueue(newObj);
      },
      onDelete: (obj) => {
        if (predicates.delete?.(obj) ?? true) enqueue(obj);
      },
    };
    return informer.addEventHandler(handler);
  }

  /**
   * Runs the workers until the signal aborts, then stops taking new keys and waits for the
   * reconciles in flight (they see the aborted signal). `waitFor` caches are synced first.
   */
  async start(signal: AbortSignal, waitFor: readonly { waitForSync(signal?: AbortSignal): Promise<boolean> }[] = []): Promise<void> {
    const synced = await Promise.all(waitFor.map((i) => i.waitForSync(signal)));
    if (signal.aborted || !synced.every(Boolean)) {
      this.queue.shutDown();
      return;
    }
    maxConcurrent.set({ controller: this.name }, this.workers);
    activeWorkers.set({ controller: this.name }, 0);
    const onAbort = (): void => this.queue.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    this.log.info({ workers: this.workers }, 'starting workers');
    try {
      await Promise.all(Array.from({ length: this.workers }, () => this.worker(signal)));
      await this.queue.shutDownWithDrain();
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.log.info('workers stopped');
    }
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      // Keys left in the queue at shutdown are dropped: reconcile is level-based and the next
      // process starts from a full list.
      if (signal.aborted) {
        this.queue.done(key);
        continue;
      }
      await this.process(key, signal);
      // A reconcile that does no I/O (a key refused, waiting, or failing in its templates)
      // resolves at once: without a turn of the loop between keys, a backlog of them would hold
      // every timer and socket of the process (lease renewals, probes, the webhook).
      await nextTurn();
    }
  }

  private async process(key: string, signal: AbortSignal): Promise<void> {
    const labels = { controller: this.name };
    activeWorkers.inc(labels);
    const started = performance.now();
    try {
      const result = (await this.reconcile(this.codec.decode(key), signal)) ?? {};
      if (result.requeueAfter !== undefined && result.requeueAfter > 0) {
        this.queue.forget(key);
        this.queue.addAfter(key, result.requeueAfter);
        reconcileTotal.inc({ ...labels, result: 'requeue_after' });
      } else if (result.requeue) {
        this.queue.addRateLimited(key);
        reconcileTotal.inc({ ...labels, result: 'requeue' });
      } else {
        this.queue.forget(key);
        reconcileTotal.inc({ ...labels, result: 'success' });
      }
    } catch (err) {
      reconcileErrors.inc(labels);
      reconcileTotal.inc({ ...labels, result: 'error' });
      if (!signal.aborted) {
        this.queue.addRateLimited(key);
        this.log.error({ err, key, retries: this.queue.numRequeues(key) }, 'reconcile failed');
      }
    } finally {
      reconcileTime.observe(labels, (performance.now() - started) / 1000);
      activeWorkers.dec(labels);
      this.queue.done(key);
    }
  }
}

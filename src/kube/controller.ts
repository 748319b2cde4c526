// The controller loop (controller-runtime's Controller): N workers take keys from a rate-limited
// work queue and reconcile them. A reconcile that throws is retried with backoff; one that asks
// for `requeueAfter` comes back after that delay; anything it throws is caught, so the loop never
// dies of a bad reconcile.
import type { EventHandler, Informer } from './informer.ts';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
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

export type Reconciler = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

export interface ControllerOptions {
  /** Metrics label `controller` and the work queue's name. */
  name: string;
  reconcile: Reconciler;
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

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  private readonly reconcile: Reconciler;
  private readonly workers: number;
  private readonly log: Logger;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconcile = opts.reconcile;
    this.workers = opts.workers ?? 1;
    this.log = (opts.logger ?? silentLogger).child({ controller: opts.name });
    this.queue = new WorkQueue<string>({ name: opts.name, rateLimiter: opts.rateLimiter });
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  /**
   * Enqueues on every add, update and delete of the informer, by the object's own key or by the
   * keys `map` returns (e.g. the owner's). Returns the unsubscribe.
   */
  watch<T extends KubeObject>(informer: Informer<T>, map: (obj: T) => readonly string[] = (o) => [objectKey(o)]): () => void {
    const enqueue = (obj: T): void => {
      for (const k of map(obj)) this.queue.add(k);
    };
    const handler: EventHandler<T> = {
      onAdd: enqueue,
      onUpdate: (oldObj, newObj) => {
        enqueue(oldObj);
        if (newObj !== oldObj) enqueue(newObj);
      },
      onDelete: enqueue,
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
    }
  }

  private async process(key: string, signal: AbortSignal): Promise<void> {
    const labels = { controller: this.name };
    activeWorkers.inc(labels);
    const started = performance.now();
    try {
      const result = (await this.reconcile(key, signal)) ?? {};
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

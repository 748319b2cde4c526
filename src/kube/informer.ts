// A client-go style Reflector + shared informer for one scope (resource, namespace, selectors).
// LIST in pages, then WATCH from the list's resourceVersion with bookmarks, keep the RV of every
// event, re-watch from it when a watch ends, relist only when the server says the RV is gone
// (410), and back off on anything else. It never gives up: the loop only ends when its signal
// aborts. The first LIST may be stood in for by a wider cache of the same resource (seedFrom).
import { without } from '../core/api/clone.ts';
import { parseSelector } from '../go/labels/index.ts';
import { Backoff, sleep } from './backoff.ts';
import { BudgetExceededError, chargedSize, type CacheBudget } from './cache-budget.ts';
import { ApiError, isGone, isNotFound } from './errors.ts';
import type { Status } from './errors.ts';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
import { counter, gauge } from './metrics.ts';
import type { ObjectReader } from './rest.ts';
import { deepFreeze, Store } from './store.ts';
import type { IndexFunc } from './store.ts';
import type { KubeObject, ResourceRef, WatchEvent } from './types.ts';
import { objectKey } from './types.ts';

/**
 * Whether a watch that ended was healthy: it had events, or it lasted over a second. Such an end is
 * ordinary (a timeout, a move to another connection) and the watch is opened again at once; one
 * that ended at once with nothing in it is opened again after a backoff, not in a spin.
 */
export function watchWasHealthy(events: number, lastedMs: number): boolean {
  return events > 0 || lastedMs > 1000;
}

export interface EventHandler<T extends KubeObject = KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /**
   * `finalStateUnknown` is client-go's DeletedFinalStateUnknown: the object vanished while no
   * watch was looking (found by a relist), and `obj` is the last state this cache saw.
   */
  onDelete?(obj: T, finalStateUnknown: boolean): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  rest: ObjectReader;
  /** The resource, or a resolver (discovery) retried until it succeeds, e.g. for a CRD not installed yet. */
  resource: ResourceRef | (() => Promise<ResourceRef>);
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Record<string, IndexFunc<T>>;
  /** Re-deliver every cached object as an update this often (not a relist). 0 or absent = never. */
  resyncPeriodMs?: number;
  /** A watch silent this long is treated as dead (bookmarks arrive about every minute). Default 150 s. */
  inactivityTimeoutMs?: number;
  pageSize?: number;
  /** Watches last a random 1-2 times this (client-go: 5 min). */
  minWatchTimeoutSeconds?: number;
  backoff?: { initialMs: number; maxMs: number };
  /**
   * Deep-freeze cached objects (default true), so a handler that changes one fails loudly instead
   * of corrupting the cache. Costs about a fifth of watch throughput; turn it off only where every
   * reader is known to copy before writing.
   */
  freeze?: boolean;
  /**
   * Applied to every object before it is cached (client-go's SetTransform), e.g. to drop fields
   * no reader needs: a cache holds each object for as long as it exists.
   */
  transform?: (obj: T) => T;
  /** What the cache may hold, shared with the other informers of its cluster (a peer's). */
  budget?: CacheBudget;
  /**
   * Another informer of the same resource, namespace and field selector, whose label selector
   * admits every object this one's does: what its cache holds that this one's selector admits is
   * taken, at its version, as the first listing, when this one starts. Client-go always lists; a
   * narrower selector here costs the server no listing and is synced as soon as it starts. Taken
   * only from a cache that is running, complete and not failing, and that the budget can hold
   * beside; otherwise the informer lists.
   */
  seedFrom?: Informer<T>;
  /** Cluster name for logs and metrics. */
  cluster?: string;
  /** Metrics/log label when `resource` is a resolver. */
  name?: string;
  logger?: Logger;
}

/** A transform for caches whose readers never look at field ownership (it is most of a small object). */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) obj.metadata = without(obj.metadata, ['managedFields']);
  return obj;
}

const watchRestarts = counter({
  name: 'informer_watch_restarts_total',
  help: 'Watches re-opened by informers, after a clean end or an error.',
  labelNames: ['cluster', 'resource', 'namespace'],
});
const relists = counter({
  name: 'informer_relists_total',
  help: 'Full LISTs after the first one, caused by an expired resourceVersion (410).',
  labelNames: ['cluster', 'resource', 'namespace'],
});
const errorsTotal = counter({
  name: 'informer_errors_total',
  help: 'Failed LIST or WATCH attempts of informers (each followed by a backoff).',
  labelNames: ['cluster', 'resource', 'namespace'],
});

const live = new Set<Informer<KubeObject>>();
/** A second 410 within this long of the last one backs off before relisting. */
const GONE_AGAIN_MS = 10_000;
gauge({
  name: 'informer_last_event_age_seconds',
  help: 'Seconds since an informer last heard from the apiserver (any watch event, bookmarks included, or a LIST).',
  labelNames: ['cluster', 'resource', 'namespace'],
  collect() {
    this.reset();
    for (const inf of live) if (inf.lastEventAt) this.set(inf.metricLabels(), (Date.now() - inf.lastEventAt) / 1000);
  },
});
gauge({
  name: 'informer_objects',
  help: 'Objects in an informer cache.',
  labelNames: ['cluster', 'resource', 'namespace'],
  collect() {
    this.reset();
    for (const inf of live) this.set(inf.metricLabels(), inf.store.size);
  },
});

export class Informer<T extends KubeObject = KubeObject> {
  readonly store: Store<T>;
  /** Wall-clock ms of the last sign of life from the server. */
  lastEventAt = 0;
  /** The resourceVersion the next watch starts from. */
  lastResourceVersion = '';
  /** Why the last LIST or WATCH failed (e.g. 403 Forbidden); cleared by the next success. */
  lastError: string | undefined;
  private readonly opts: InformerOptions<T>;
  private readonly handlers = new Set<EventHandler<T>>();
  private readonly log: Logger;
  private synced = false;
  private readonly syncWaiters = new Set<(ok: boolean) => void>();
  private stopped = false;
  private resourceLabel: string;
  private running: Promise<void> | undefined;
  /** The size each cached object was charged to the budget, when there is one. */
  private readonly sizes = new Map<string, number>();
  private heldBytes = 0;
  /** A watched object did not fit the budget: the cache may lack it (its deletion was applied, its return was not). */
  private partial = false;
  /** Until it starts: then let go, so that the other cache is not held for this one's life. */
  private seedFrom: Informer<T> | undefined;

  constructor({ seedFrom, ...opts }: InformerOptions<T>) {
    this.opts = opts;
    this.seedFrom = seedFrom;
    this.store = new Store<T>({ indexers: opts.indexers, freeze: opts.freeze });
    this.resourceLabel = typeof opts.resource === 'function' ? (opts.name ?? 'unresolved') : resourceName(opts.resource);
    this.log = (opts.logger ?? silentLogger).child({ informer: this.resourceLabel, namespace: opts.namespace });
  }

  /**
   * Registers handlers; objects already cached are delivered to them as adds, unless `replay` is
   * false (a caller told of them already, by the cache this one was seeded from). Returns an
   * unsubscribe.
   */
  addEventHandler(handler: EventHandler<T>, { replay = true }: { replay?: boolean } = {}): () => void {
    this.handlers.add(handler);
    if (replay && handler.onAdd) for (const obj of this.store.list()) this.call(() => handler.onAdd?.(obj));
    return () => {
      this.handlers.delete(handler);
    };
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * What the object cached under `key` was charged to the budget (its size as JSON); undefined
   * without a budget, or for a key not cached.
   */
  chargedFor(key: string): number | undefined {
    return this.sizes.get(key);
  }

  /**
   * Listed, and holding everything it was sent since: false while its budget refused an object
   * seen in a watch, so the absence of an object from the cache is not the server's word, until
   * a listing fits again.
   */
  get complete(): boolean {
    return this.synced && !this.partial;
  }

  /**
   * Resolves true once the first LIST is in the cache; false if the signal aborts first or the
   * informer stops without having synced (a caller must never take an empty cache for the truth).
   */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted || this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        this.syncWaiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const onAbort = (): void => done(false);
      this.syncWaiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Runs until the signal aborts; calling it again while running returns the same promise. A seed
   * is taken here, before anything is awaited: the cache is synced when this returns.
   */
  start(signal: AbortSignal): Promise<void> {
    if (!this.running) {
      const from = this.seedFrom;
      this.seedFrom = undefined;
      if (from && !signal.aborted) this.seed(from);
      this.running = this.run(signal);
    }
    return this.running;
  }

  metricLabels(): { cluster: string; resource: string; namespace: string } {
    return { cluster: this.opts.cluster ?? '', resource: this.resourceLabel, namespace: this.opts.namespace ?? '' };
  }

  private async run(signal: AbortSignal): Promise<void> {
    live.add(this as unknown as Informer<KubeObject>);
    const backoff = new Backoff({ initialMs: 800, maxMs: 30_000, ...this.opts.backoff });
    // A listing that did not fit costs the whole budget's bytes each time: tried again ever more seldom.
    const overBudget = new Backoff({ initialMs: 5_000, maxMs: 300_000, ...this.opts.backoff });
    const resync = this.opts.resyncPeriodMs ? setInterval(() => this.resync(), this.opts.resyncPeriodMs) : undefined;
    let ref = typeof this.opts.resource === 'function' ? undefined : this.opts.resource;
    let needList = !this.synced;
    let lastGoneAt = -Infinity;
    try {
      while (!signal.aborted) {
        try {
          if (!ref) {
            ref = await (this.opts.resource as () => Promise<ResourceRef>)();
            this.resourceLabel = resourceName(ref);
          }
          if (needList) {
            await this.listAndReplace(ref, signal);
            needList = false;
            this.lastError = undefined;
            backoff.reset();
            overBudget.reset();
          }
          const healthy = await this.watch(ref, signal, backoff);
          watchRestarts.inc(this.metricLabels());
          // A watch that ends at once without a single event would otherwise spin.
          if (!healthy) await sleep(backoff.next(), signal);
        } catch (err) {
          if (signal.aborted) break;
          if (err instanceof BudgetExceededError) {
            // What it holds stays; a listing later shows whether the cluster fits again.
            if (!needList) this.partial = true;
            errorsTotal.inc(this.metricLabels());
            this.lastError = err.message;
            needList = true;
            const delay = overBudget.next();
            this.log.warn({ error: err.message, retryInMs: Math.round(delay) }, 'cache budget exceeded');
            await sleep(delay, signal);
            continue;
          }
          if (isGone(err)) {
            this.log.info({ rv: this.lastResourceVersion }, 'resourceVersion expired, relisting');
            relists.inc(this.metricLabels());
            // A relist is immediate, unless resourceVersions keep expiring (a misbehaving server or
            // proxy): then it backs off like any failure instead of relisting in a tight loop.
            const now = performance.now();
            if (now - lastGoneAt < GONE_AGAIN_MS) await sleep(backoff.next(), signal);
            lastGoneAt = now;
            needList = true;
            continue;
          }
          // The resource may have been removed and re-created under another version; resolve again.
          if (isNotFound(err) && typeof this.opts.resource === 'function') ref = undefined;
          // Failing for another reason, it asks the budget for nothing more meanwhile.
          this.opts.budget?.fitted(this);
          errorsTotal.inc(this.metricLabels());
          this.lastError = err instanceof ApiError ? `${err.code} ${err.reason ?? ''}`.trim() : err instanceof Error ? err.message : String(err);
          const delay = backoff.next();
          this.log.warn({ err, retryInMs: Math.round(delay), list: needList }, 'list/watch failed');
          await sleep(delay, signal);
        }
      }
    } finally {
      clearInterval(resync);
      this.opts.budget?.charge(-this.sizes.size, -this.heldBytes, this);
      this.opts.budget?.fitted(this);
      this.sizes.clear();
      this.heldBytes = 0;
      live.delete(this as unknown as Informer<KubeObject>);
      this.stopped = true;
      for (const w of [...this.syncWaiters]) w(false);
      this.syncWaiters.clear();
    }
  }

  private async listAndReplace(ref: ResourceRef, signal: AbortSignal): Promise<void> {
    const { rest, namespace, labelSelector, fieldSelector, pageSize = 500, budget } = this.opts;
    const items: T[] = [];
    /** Each item's size, when there is a budget to charge. */
    const sizes = new Map<string, number>();
    let listedBytes = 0;
    let cont: string | undefined;
    let rv = '';
    do {
      let page;
      try {
        page = await rest.list<T>(ref, { namespace, labelSelector, fieldSelector, limit: pageSize, continue: cont, signal });
      } catch (err) {
        // The continue token outlived etcd's compaction: start the list over.
        if (cont && isGone(err)) {
          cont = undefined;
          items.length = 0;
          sizes.clear();
          listedBytes = 0;
          continue;
        }
        throw err;
      }
      const transform = this.opts.transform;
      for (const item of page.items) {
        const kept = transform ? transform(item) : item;
        items.push(kept);
        if (!budget) continue;
        const size = chargedSize(kept);
        listedBytes += size - (sizes.get(objectKey(kept)) ?? 0);
        sizes.set(objectKey(kept), size);
      }
      // A listing that cannot fit is given up as soon as that is known, before it is all read.
      budget?.check(sizes.size - this.sizes.size, listedBytes - this.heldBytes, this);
      rv = page.metadata.resourceVersion ?? '';
      cont = page.metadata.continue || undefined;
    } while (cont);
    this.take(items, sizes, listedBytes, rv);
  }

  /** Takes what `from` holds that this one's label selector admits as its listing, at `from`'s version, if it may (see seedFrom). */
  private seed(from: Informer<T>): void {
    const o = this.opts;
    const [a, b] = [from.opts.resource, o.resource];
    const sameResource = typeof a !== 'function' && typeof b !== 'function' && a.group === b.group && a.version === b.version && a.resource === b.resource;
    if (from.opts.rest !== o.rest || !sameResource || from.opts.namespace !== o.namespace || from.opts.fieldSelector !== o.fieldSelector) return;
    if (from.stopped || !from.complete || from.lastError !== undefined || !from.lastResourceVersion) return;
    let selector;
    try {
      selector = parseSelector(o.labelSelector ?? '');
    } catch {
      return;
    }
    const items = from.store.list().filter((obj) => selector.matches(obj.metadata.labels ?? {}));
    const sizes = new Map<string, number>();
    let bytes = 0;
    if (o.budget) {
      for (const obj of items) {
        const key = objectKey(obj);
        const size = from.chargedFor(key) ?? chargedSize(obj);
        sizes.set(key, size);
        bytes += size;
      }
      // Listed instead, which says why if it does not fit either: nothing is refused before the
      // server was asked.
      if (!o.budget.fits(sizes.size, bytes)) return;
    }
    this.take(items, sizes, bytes, from.lastResourceVersion);
    // The server said nothing: the last word from it is the other cache's.
    this.lastEventAt = from.lastEventAt;
    this.log.debug({ objects: items.length, rv: from.lastResourceVersion }, 'seeded from another cache');
  }

  /** Takes a listing (checked against the budget already) as the cache. */
  private take(items: T[], sizes: Map<string, number>, bytes: number, rv: string): void {
    const budget = this.opts.budget;
    if (budget) {
      // Synchronous from here to the cache's replacement: what was checked is what is taken.
      budget.charge(sizes.size - this.sizes.size, bytes - this.heldBytes, this);
      this.sizes.clear();
      for (const [key, size] of sizes) this.sizes.set(key, size);
      this.heldBytes = bytes;
    }
    this.replace(items, rv);
    this.partial = false;
    budget?.fitted(this);
  }

  /** The cache as its budget's messages name it. */
  get budgetName(): string {
    return `${this.resourceLabel}${this.opts.namespace ? ` in namespace ${this.opts.namespace}` : ''}`;
  }

  /** Charges the budget for `obj` (its new state) taking the place of what was cached under its key. */
  private chargeFor(obj: T): void {
    const budget = this.opts.budget;
    if (!budget) return;
    const key = objectKey(obj);
    const size = chargedSize(obj);
    const old = this.sizes.get(key);
    budget.charge(old === undefined ? 1 : 0, size - (old ?? 0), this);
    this.sizes.set(key, size);
    this.heldBytes += size - (old ?? 0);
  }

  /** Gives back what `key` was charged. */
  private release(key: string): void {
    const old = this.sizes.get(key);
    if (old === undefined) return;
    this.opts.budget?.charge(-1, -old, this);
    this.sizes.delete(key);
    this.heldBytes -= old;
  }

  // Like DeltaFIFO.Replace: adds for new keys, updates for changed ones, and tombstone deletes for
  // keys the list no longer has.
  private replace(items: T[], rv: string): void {
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(objectKey(obj));
      const old = this.store.upsert(obj);
      if (!old) this.emit((h) => h.onAdd?.(obj));
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit((h) => h.onUpdate?.(old, obj));
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const old = this.store.remove(key)!;
      this.emit((h) => h.onDelete?.(old, true));
    }
    this.lastResourceVersion = rv;
    this.lastEventAt = Date.now();
    if (!this.synced) {
      this.synced = true;
      this.log.debug({ objects: this.store.size, rv }, 'synced');
      for (const w of [...this.syncWaiters]) w(true);
    }
  }

  /** One watch until it ends. Returns whether it was healthy (saw events or lasted a while). */
  private async watch(ref: ResourceRef, signal: AbortSignal, backoff: Backoff): Promise<boolean> {
    const { rest, namespace, labelSelector, fieldSelector, minWatchTimeoutSeconds = 300, inactivityTimeoutMs = 150_000 } = this.opts;
    const started = Date.now();
    const stream = await rest.watch<T>(ref, {
      namespace,
      labelSelector,
      fieldSelector,
      resourceVersion: this.lastResourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(minWatchTimeoutSeconds * (1 + Math.random())),
      inactivityTimeoutMs,
      signal,
    });
    let events = 0;
    for await (const batch of stream.batches()) {
      if (events === 0) {
        backoff.reset();
        this.lastError = undefined;
      }
      events += batch.length;
      this.lastEventAt = Date.now();
      for (const ev of batch) this.apply(ref, ev);
    }
    return watchWasHealthy(events, Date.now() - started);
  }

  private apply(ref: ResourceRef, ev: WatchEvent<T>): void {
    const obj = ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED' ? (this.opts.transform?.(ev.object) ?? ev.object) : ev.object;
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        this.chargeFor(obj);
        const old = this.store.upsert(obj);
        if (old) this.emit((h) => h.onUpdate?.(old, obj));
        else this.emit((h) => h.onAdd?.(obj));
        break;
      }
      case 'DELETED': {
        // Handlers get the object's final state from the event, as client-go delivers it; only a
        // relist tombstone carries the last cached state.
        this.release(objectKey(obj));
        this.store.remove(objectKey(obj));
        if (this.store.freeze) deepFreeze(obj);
        this.emit((h) => h.onDelete?.(obj, false));
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR':
        throw ApiError.fromStatus(obj as unknown as Status, 500, 'WATCH', ref.resource);
    }
    if (obj.metadata?.resourceVersion) this.lastResourceVersion = obj.metadata.resourceVersion;
  }

  private resync(): void {
    if (!this.synced) return;
    for (const obj of this.store.list()) this.emit((h) => h.onUpdate?.(obj, obj));
  }

  private emit(fn: (h: EventHandler<T>) => void): void {
    for (const h of this.handlers) this.call(() => fn(h));
  }

  // A failing handler must not break the cache or the other handlers.
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, 'event handler threw');
    }
  }
}

/** `configmaps` for the core group, `deployments.apps` otherwise (kubectl's resource.group). */
export function resourceName(ref: ResourceRef): string {
  return ref.group ? `${ref.resource}.${ref.group}` : ref.resource;
}

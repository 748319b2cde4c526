// One shared informer per scope per cluster, however many controllers ask for it (client-go's
// SharedInformerFactory). Informers start when first requested once the factory runs, and all
// stop when the factory's signal aborts. An informer asked for with `acquire` is counted: when
// its last user releases it (a rule deleted, a kind changed) its watch stops and its cache goes.
import type { CacheBudget } from './cache-budget.ts';
import type { Discovery } from './discovery.ts';
import { Informer } from './informer.ts';
import type { Logger } from './log.ts';
import type { ObjectReader } from './rest.ts';
import type { GroupVersionKind, KubeObject, ResourceRef } from './types.ts';

export interface Selectors {
  /** Absent or empty = all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export type ResourceScope = ResourceRef & Selectors;
export type KindScope = GroupVersionKind & Selectors;

export interface InformerFactoryOptions {
  cluster: string;
  rest: ObjectReader;
  /** Needed for `forKind`. */
  discovery?: Discovery;
  resyncPeriodMs?: number;
  inactivityTimeoutMs?: number;
  /** Applied to every object of every informer of the factory before it is cached. */
  transform?: (obj: KubeObject) => KubeObject;
  /** The budget a scope's cache is charged to, if any (a peer's caches share a few). */
  budgetFor?: (scope: ResourceRef & Selectors) => CacheBudget | undefined;
  logger?: Logger;
}

/** A counted use of a shared informer; `release` exactly once when done with it. */
export interface InformerLease<T extends KubeObject = KubeObject> {
  readonly informer: Informer<T>;
  release(): void;
}

interface Entry {
  readonly informer: Informer<KubeObject>;
  readonly stop: AbortController;
  /** Users holding a lease; a pinned informer (forResource/forKind) is never stopped early. */
  refs: number;
  pinned: boolean;
}

export class InformerFactory {
  readonly cluster: string;
  private readonly opts: InformerFactoryOptions;
  private readonly informers = new Map<string, Entry>();
  private signal: AbortSignal | undefined;

  constructor(opts: InformerFactoryOptions) {
    this.cluster = opts.cluster;
    this.opts = opts;
  }

  /** Starts every informer requested so far and, from now on, each one when it is requested. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const e of this.informers.values()) this.run(e);
  }

  /** The shared informer of a resource scope, for the factory's lifetime. Cache objects are frozen: `deepCopy` before changing one. */
  forResource<T extends KubeObject = KubeObject>(scope: ResourceScope): Informer<T> {
    const e = this.resourceEntry(scope);
    e.pinned = true;
    return e.informer as unknown as Informer<T>;
  }

  /**
   * A counted use of the shared informer of a resource scope. If this call makes the informer, it
   * starts from `seedFrom`, an informer of this factory whose scope holds this one's (see
   * InformerOptions.seedFrom); one that exists already ignores it.
   */
  acquire<T extends KubeObject = KubeObject>(scope: ResourceScope, seedFrom?: Informer<T>): InformerLease<T> {
    return this.lease(this.resourceEntry(scope, seedFrom as Informer<KubeObject> | undefined));
  }

  /**
   * The shared informer of a kind, mapped to its resource through discovery. If the kind is not
   * served yet (a CRD installed later), the informer keeps retrying until it is.
   */
  forKind<T extends KubeObject = KubeObject>(scope: KindScope): Informer<T> {
    const e = this.kindEntry(scope);
    e.pinned = true;
    return e.informer as unknown as Informer<T>;
  }

  private resourceEntry(scope: ResourceScope, seedFrom?: Informer<KubeObject>): Entry {
    return this.shared(`r|${scope.group}|${scope.version}|${scope.resource}`, scope, scope, undefined, seedFrom);
  }

  private kindEntry(scope: KindScope): Entry {
    const discovery = this.opts.discovery;
    if (!discovery) throw new Error('InformerFactory.forKind needs a Discovery');
    const gvk: GroupVersionKind = { group: scope.group, version: scope.version, kind: scope.kind };
    const resolve = async (): Promise<ResourceRef> => {
      const r = await discovery.resourceFor(gvk);
      return { group: r.group, version: r.version, resource: r.resource };
    };
    return this.shared(`k|${scope.group}|${scope.version}|${scope.kind}`, scope, resolve, scope.kind);
  }

  private lease<T extends KubeObject>(e: Entry): InformerLease<T> {
    e.refs++;
    let released = false;
    return {
      informer: e.informer as unknown as Informer<T>,
      release: () => {
        if (released) return;
        released = true;
        e.refs--;
        if (e.refs > 0 || e.pinned) return;
        e.stop.abort();
        for (const [key, other] of this.informers) if (other === e) this.informers.delete(key);
      },
    };
  }

  private run(e: Entry): void {
    if (this.signal) void e.informer.start(AbortSignal.any([this.signal, e.stop.signal]));
  }

  /** True once every informer requested so far has synced; false if the signal aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all(this.all().map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  all(): Informer<KubeObject>[] {
    return [...this.informers.values()].map((e) => e.informer);
  }

  /** The budget of a resource scope's cache; a kind's resolved later is charged to none. */
  private budgetOf(resource: ResourceRef | (() => Promise<ResourceRef>), sel: Selectors): { budget?: CacheBudget } {
    const budget = typeof resource === 'function' ? undefined : this.opts.budgetFor?.({ ...resource, ...sel });
    return budget ? { budget } : {};
  }

  private shared(what: string, sel: Selectors, resource: ResourceRef | (() => Promise<ResourceRef>), name?: string, seedFrom?: Informer<KubeObject>): Entry {
    const key = `${what}|${sel.namespace ?? ''}|${sel.labelSelector ?? ''}|${sel.fieldSelector ?? ''}`;
    let entry = this.informers.get(key);
    if (!entry) {
      const informer = new Informer<KubeObject>({
        rest: this.opts.rest,
        resource: typeof resource === 'function' ? resource : { group: resource.group, version: resource.version, resource: resource.resource },
        namespace: sel.namespace || undefined,
        labelSelector: sel.labelSelector || undefined,
        fieldSelector: sel.fieldSelector || undefined,
        resyncPeriodMs: this.opts.resyncPeriodMs,
        inactivityTimeoutMs: this.opts.inactivityTimeoutMs,
        transform: this.opts.transform,
        ...this.budgetOf(resource, sel),
        ...(seedFrom ? { seedFrom } : {}),
        cluster: this.cluster,
        name,
        logger: this.opts.logger?.child({ cluster: this.cluster }),
      });
      entry = { informer, stop: new AbortController(), refs: 0, pinned: false };
      this.informers.set(key, entry);
      this.run(entry);
    }
    return entry;
  }
}

// One shared informer per scope per cluster, however many controllers ask for it (client-go's
// SharedInformerFactory). Informers start when first requested once the factory runs, and all
// stop when the factory's signal aborts.
import type { Discovery } from './discovery.ts';
import { Informer } from './informer.ts';
import type { Logger } from './log.ts';
import type { RestClient } from './rest.ts';
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
  rest: RestClient;
  /** Needed for `forKind`. */
  discovery?: Discovery;
  resyncPeriodMs?: number;
  inactivityTimeoutMs?: number;
  logger?: Logger;
}

export class InformerFactory {
  readonly cluster: string;
  private readonly opts: InformerFactoryOptions;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private signal: AbortSignal | undefined;

  constructor(opts: InformerFactoryOptions) {
    this.cluster = opts.cluster;
    this.opts = opts;
  }

  /** Starts every informer requested so far and, from now on, each one when it is requested. */
  start(signal: AbortSignal): void {
    this.signal = signal;
    for (const inf of this.informers.values()) void inf.start(signal);
  }

  /** The shared informer of a resource scope. Cache objects are frozen: `deepCopy` before changing one. */
  forResource<T extends KubeObject = KubeObject>(scope: ResourceScope): Informer<T> {
    return this.shared(`r|${scope.group}|${scope.version}|${scope.resource}`, scope, scope);
  }

  /**
   * The shared informer of a kind, mapped to its resource through discovery. If the kind is not
   * served yet (a CRD installed later), the informer keeps retrying until it is.
   */
  forKind<T extends KubeObject = KubeObject>(scope: KindScope): Informer<T> {
    const discovery = this.opts.discovery;
    if (!discovery) throw new Error('InformerFactory.forKind needs a Discovery');
    const gvk: GroupVersionKind = { group: scope.group, version: scope.version, kind: scope.kind };
    const resolve = async (): Promise<ResourceRef> => {
      const r = await discovery.resourceFor(gvk);
      return { group: r.group, version: r.version, resource: r.resource };
    };
    return this.shared(`k|${scope.group}|${scope.version}|${scope.kind}`, scope, resolve, scope.kind);
  }

  /** True once every informer requested so far has synced; false if the signal aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  private shared<T extends KubeObject>(what: string, sel: Selectors, resource: ResourceRef | (() => Promise<ResourceRef>), name?: string): Informer<T> {
    const key = `${what}|${sel.namespace ?? ''}|${sel.labelSelector ?? ''}|${sel.fieldSelector ?? ''}`;
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new Informer<KubeObject>({
        rest: this.opts.rest,
        resource: typeof resource === 'function' ? resource : { group: resource.group, version: resource.version, resource: resource.resource },
        namespace: sel.namespace || undefined,
        labelSelector: sel.labelSelector || undefined,
        fieldSelector: sel.fieldSelector || undefined,
        resyncPeriodMs: this.opts.resyncPeriodMs,
        inactivityTimeoutMs: this.opts.inactivityTimeoutMs,
        cluster: this.cluster,
        name,
        logger: this.opts.logger?.child({ cluster: this.cluster }),
      });
      this.informers.set(key, inf);
      if (this.signal) void inf.start(this.signal);
    }
    return inf as unknown as Informer<T>;
  }
}

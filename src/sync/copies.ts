// The local copies, watched per kind (and per namespace where every rule writing that kind stays
// in known namespaces, so a controller allowed Secrets in one namespace only can run the rules
// that stay there): only objects carrying the ownership label (every copy does), so local
// objects of the same kind are never cached. Copies are indexed by the source object they
// record, which is how a deleted source finds its copy however the rule renamed it, and how an
// event on a copy reaches the one source that owns it.
import { gvkKey, LABELS, sourceIdentityOf, sourceObjectKey, type FullGVK } from '../core/api/index.ts';
import { FIELD_MANAGER, copyRelevantChange } from '../core/rules/index.ts';
import { Backoff, objectKey, type CacheLimits, type Discovery, type Informer, type InformerFactory, type InformerLease, type KubeObject, type Logger } from '../kube/index.ts';
import { CopyBudget } from './copy-budget.ts';
import type { CopyEvents } from './routing.ts';
import { Wakeup } from './wakeup.ts';

/**
 * Copies are read for what our field manager owns, and for who else changed what the sync writes
 * (drift, the scale subresource's writers included): their cache keeps our entries and every
 * other writer's but their status entries (the bulk of a busy kind's, written by its controllers).
 */
export function trimCopyManagedFields(obj: KubeObject): KubeObject {
  const entries = obj.metadata?.managedFields as { manager?: string; subresource?: string }[] | undefined;
  if (entries) obj.metadata.managedFields = entries.filter((e) => e.manager === FIELD_MANAGER || e.subresource !== 'status');
  return obj;
}

const SOURCE_INDEX = 'source';
/** Copies without our source record, by the source namespace/name upstream's labels (or their own names) give. */
const LEGACY_INDEX = 'legacy';

function legacyKey(o: KubeObject): string {
  return `${o.metadata.labels?.[LABELS.originalNamespace] ?? o.metadata.namespace ?? ''}/${o.metadata.labels?.[LABELS.originalName] ?? o.metadata.name ?? ''}`;
}

interface Watch {
  readonly gvk: FullGVK;
  /** gvkKey of `gvk`: every lookup of a copy picks its watches by it. */
  readonly kindKey: string;
  /** '' for all namespaces. */
  readonly namespace: string;
  lease: InformerLease | undefined;
  unsubscribe: (() => void) | undefined;
  /** Set when the kind turned out to be cluster-scoped: the watch of all namespaces serves it. */
  clusterScoped: boolean;
  readonly stop: AbortController;
  /** Cuts its wait for the kind short; a kick while it is resolving is kept for its next wait. */
  readonly wake: Wakeup;
  users: number;
}

export class LocalCopies {
  private readonly factory: InformerFactory;
  private readonly discovery: Pick<Discovery, 'resourceFor'>;
  /** Told of every added, changed (beyond bookkeeping) and deleted copy, and of room a rule's copies from a peer left. */
  private events: CopyEvents = { copyChanged: () => undefined, budgetFreed: () => undefined };
  private readonly log: Logger;
  private readonly watches = new Map<string, Watch>();
  /** What the copies made from each peer hold, against their budgets. */
  readonly budget: CopyBudget;

  constructor(opts: { factory: InformerFactory; discovery: Pick<Discovery, 'resourceFor'>; perPeer: CacheLimits; log: Logger }) {
    // Room a rule's copies from a peer left: one deleted, taken over by another rule or peer, or shrunk.
    this.budget = new CopyBudget(opts.perPeer, (rule, peerID) => this.events.budgetFreed(rule, peerID));
    this.factory = opts.factory;
    this.discovery = opts.discovery;
    this.log = opts.log;
  }

  /** Where the copies' events go from now on (the sync's router). */
  listen(events: CopyEvents): void {
    this.events = events;
  }

  /** Starts (or shares) the watches of a kind in those namespaces (undefined: all); pair with `release`. */
  acquire(gvk: FullGVK, namespaces: readonly string[] | undefined): void {
    const kindKey = gvkKey(gvk);
    for (const ns of namespaces ?? ['']) {
      const key = `${kindKey}|${ns}`;
      const existing = this.watches.get(key);
      if (existing) {
        existing.users++;
        continue;
      }
      const w: Watch = { gvk, kindKey, namespace: ns, lease: undefined, unsubscribe: undefined, clusterScoped: false, stop: new AbortController(), wake: new Wakeup(), users: 1 };
      this.watches.set(key, w);
      void this.open(w);
    }
  }

  release(gvk: FullGVK, namespaces: readonly string[] | undefined): void {
    for (const ns of namespaces ?? ['']) {
      const key = `${gvkKey(gvk)}|${ns}`;
      const w = this.watches.get(key);
      if (!w || --w.users > 0) continue;
      this.watches.delete(key);
      this.closeWatch(w);
    }
  }

  /** Retry now the watches of kinds not served yet (a CRD was just established). */
  retry(): void {
    for (const w of this.watches.values()) w.wake.kick();
  }

  close(): void {
    for (const w of this.watches.values()) stopWatch(w);
    this.watches.clear();
    this.budget.close();
  }

  /** Every kind watched. */
  kinds(): FullGVK[] {
    const seen = new Map<string, FullGVK>();
    for (const w of this.watches.values()) seen.set(w.kindKey, w.gvk);
    return [...seen.values()];
  }

  /** Whether the copies of that kind have been listed everywhere they are watched. */
  synced(gvk: FullGVK): boolean {
    const ws = this.of(gvk);
    return ws.length > 0 && ws.every((w) => w.lease?.informer.hasSynced() ?? false);
  }

  /** Whether some watch of that kind is still listing: served, and neither listed nor refused; copies there may yet show. */
  listing(gvk: FullGVK): boolean {
    return this.of(gvk).some((w) => w.lease !== undefined && !w.lease.informer.hasSynced() && w.lease.informer.lastError === undefined);
  }

  get(gvk: FullGVK, namespace: string | undefined, name: string): KubeObject | undefined {
    for (const inf of this.informers(gvk, namespace ?? '')) {
      const o = inf.store.getByName(namespace || undefined, name);
      if (o) return o;
    }
    return undefined;
  }

  all(gvk: FullGVK): KubeObject[] {
    return this.dedupe(this.informers(gvk).flatMap((inf) => inf.store.list()));
  }

  /** Copies of that kind without our source record that upstream's labels tie to that source. */
  legacy(gvk: FullGVK, namespace: string, name: string): KubeObject[] {
    return this.dedupe(this.informers(gvk).flatMap((inf) => inf.store.byIndex(LEGACY_INDEX, `${namespace}/${name}`)));
  }

  /** Copies of that kind recording the given source object (any rule). */
  bySource(gvk: FullGVK, sourceKey: string): KubeObject[] {
    return this.dedupe(this.informers(gvk).flatMap((inf) => inf.store.byIndex(SOURCE_INDEX, sourceKey)));
  }

  private of(gvk: FullGVK): Watch[] {
    const kindKey = gvkKey(gvk);
    const found: Watch[] = [];
    for (const w of this.watches.values()) if (w.kindKey === kindKey) found.push(w);
    return found;
  }

  /** The informers that can hold copies of that kind (in that namespace, when given). */
  private informers(gvk: FullGVK, namespace?: string): Informer[] {
    return this.of(gvk)
      .filter((w) => namespace === undefined || w.namespace === '' || w.namespace === namespace || w.clusterScoped)
      .flatMap((w) => (w.lease ? [w.lease.informer] : []));
  }

  private dedupe(objects: KubeObject[]): KubeObject[] {
    const byKey = new Map<string, KubeObject>();
    for (const o of objects) byKey.set(`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`, o);
    return [...byKey.values()];
  }

  /** Resolves the kind (retrying while it is not served) and starts its watch. */
  private async open(w: Watch): Promise<void> {
    const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000 });
    let resource;
    for (;;) {
      if (w.stop.signal.aborted) return;
      try {
        resource = await this.discovery.resourceFor(w.gvk);
        break;
      } catch (err) {
        this.log.debug({ kind: w.gvk.kind, err }, 'copies of a kind not served here yet; retrying');
        await w.wake.wait(backoff.next(), w.stop.signal);
      }
    }
    if (w.stop.signal.aborted) return;
    w.clusterScoped = !resource.namespaced;
    const lease = this.factory.acquire({
      group: resource.group,
      version: resource.version,
      resource: resource.resource,
      namespace: resource.namespaced && w.namespace ? w.namespace : undefined,
      labelSelector: LABELS.ownership,
    });
    const store = lease.informer.store;
    if (!store.hasIndexer(SOURCE_INDEX)) {
      store.addIndexer(SOURCE_INDEX, (o) => {
        const id = sourceIdentityOf(o);
        return id ? [sourceObjectKey(id)] : [];
      });
      store.addIndexer(LEGACY_INDEX, (o) => (sourceIdentityOf(o) ? [] : [legacyKey(o)]));
    }
    w.lease = lease;
    w.unsubscribe = lease.informer.addEventHandler({
      onAdd: (o) => {
        this.budget.observe(o, false);
        this.events.copyChanged(o, false);
      },
      onUpdate: (a, b) => {
        // A relist may find another object at the name: the one it replaced is gone.
        if (a.metadata.uid !== b.metadata.uid) this.budget.observe(a, true);
        this.budget.observe(b, false);
        if (copyRelevantChange(a, b, true)) this.events.copyChanged(b, false);
      },
      onDelete: (o) => {
        this.budget.observe(o, true);
        this.events.copyChanged(o, true);
      },
    });
  }

  /** Stops a watch no longer in `watches`: what no open watch sees any more counts no more. */
  private closeWatch(w: Watch): void {
    // Watches of a cluster-scoped kind share one informer: another may still hold what this one did.
    const others = this.informers(w.gvk);
    const seen = w.lease?.informer.store.list() ?? [];
    stopWatch(w);
    for (const o of seen) if (!others.some((inf) => inf.store.has(objectKey(o)))) this.budget.observe(o, true);
  }
}

function stopWatch(w: Watch): void {
  w.stop.abort();
  w.unsubscribe?.();
  w.lease?.release();
}

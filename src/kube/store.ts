// The informer's cache: objects by `namespace/name`, plus optional secondary indexes (for
// example by owner or by label value). Objects in it are deep-frozen: callers read them as they
// are, and `deepCopy` them before changing anything.
import type { KubeObject } from './types.ts';
import { objectKey } from './types.ts';

/** Index values of an object, e.g. `[obj.metadata.namespace]`. */
export type IndexFunc<T extends KubeObject> = (obj: T) => readonly string[];

export const NAMESPACE_INDEX = 'namespace';

export function namespaceIndex(obj: KubeObject): string[] {
  return [obj.metadata?.namespace ?? ''];
}

export class Store<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  // index name -> index value -> keys
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  readonly freeze: boolean;

  constructor(opts: { indexers?: Record<string, IndexFunc<T>>; freeze?: boolean } = {}) {
    this.freeze = opts.freeze ?? true;
    for (const [name, fn] of Object.entries(opts.indexers ?? {})) this.addIndexer(name, fn);
  }

  /** Adds an index; existing objects are indexed at once. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`indexer ${name} already exists`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) addToIndex(index, fn(obj), key);
  }

  hasIndexer(name: string): boolean {
    return this.indexers.has(name);
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** Objects whose index `indexName` yields `value`. */
  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no indexer ${indexName}`);
    return [...(index.get(value) ?? [])].map((k) => this.items.get(k)!);
  }

  /** How many objects index `indexName` yields `value` for. */
  countByIndex(indexName: string, value: string): number {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no indexer ${indexName}`);
    return index.get(value)?.size ?? 0;
  }

  /** Index values currently present, e.g. every namespace that has an object. */
  indexValues(indexName: string): string[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`no indexer ${indexName}`);
    return [...index.keys()];
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    if (this.freeze) deepFreeze(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) addToIndex(this.indices.get(name)!, fn(obj), key);
    return old;
  }

  /** Removes by key; returns the removed object. */
  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const v of fn(obj)) {
        const keys = index.get(v);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(v);
      }
    }
  }
}

function addToIndex(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (const v of values) {
    let keys = index.get(v);
    if (!keys) index.set(v, (keys = new Set()));
    keys.add(key);
  }
}

// Objects come from JSON.parse: plain objects and arrays only, no prototypes or getters to mind.
export function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) deepFreeze(v);
  }
}

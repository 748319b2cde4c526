// What part of a peer's objects a rule can ever match, so its informers list and watch only that:
// the namespaces every match entry is restricted to and, where every entry names the same object
// or (for Secrets) the same type, a field selector. Narrow watches matter twice: a peer's reader
// may read Secrets only in some namespaces (a cluster-wide watch would be forbidden), and caching
// every object of a kind on every peer is what made upstream's memory grow with the cluster.

import { parsePointer, type Token } from '../../go/gopatch/index.ts';
import { sameGVK, type FullGVK } from '../api/gvk.ts';
import type { ResourceSyncRuleSpec, SyncRuleMatch } from '../api/types.ts';

export interface SourceScope {
  /** Namespaces to watch, one informer each; undefined = all namespaces (one cluster-wide informer). */
  readonly namespaces: readonly string[] | undefined;
  /** A field selector every matching object satisfies. */
  readonly fieldSelector: string | undefined;
  /** The one name every entry asks for, when they agree (part of fieldSelector). */
  readonly name?: string;
}

/** Past this many namespaces one cluster-wide watch is cheaper than a watch per namespace. */
export const MAX_SCOPED_NAMESPACES = 8;

const SECRET = { group: '', version: 'v1', kind: 'Secret' };

function entryNamespaces(m: SyncRuleMatch): Set<string> | undefined {
  const ns = m.objectKey?.namespace;
  if (ns) return new Set([ns]);
  return m.namespaces?.length ? new Set(m.namespaces) : undefined;
}

/** The value every entry pins a field to, or undefined when some entry does not. */
function commonValue(entries: readonly SyncRuleMatch[], value: (m: SyncRuleMatch) => string | undefined): string | undefined {
  const values = new Set(entries.map(value));
  const [only] = values;
  return values.size === 1 && only ? only : undefined;
}

/** Field selector values escape the characters the grammar uses (apimachinery's EscapeValue). */
function escapeFieldValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');
}

function secretType(m: SyncRuleMatch): string | undefined {
  const c = (m.content ?? []).find((x) => x.key === 'type' && typeof x.value === 'string');
  return c?.value as string | undefined;
}

/**
 * The scope of a rule's source objects on a peer. `namespaced` says whether the kind is
 * namespaced there (a namespace list does not restrict cluster-scoped objects). A rule with an
 * empty rule list matches nothing: its scope is no namespace at all.
 */
export function sourceScope(spec: ResourceSyncRuleSpec, namespaced: boolean): SourceScope {
  const rules = spec.rules ?? [];
  if (rules.length === 0) return { namespaces: [], fieldSelector: undefined };
  // A rule without match entries matches every object.
  if (rules.some((r) => !r.match?.length)) return { namespaces: undefined, fieldSelector: undefined };
  const entries = rules.flatMap((r) => r.match ?? []);
  let namespaces: string[] | undefined;
  if (namespaced) {
    const sets = entries.map(entryNamespaces);
    if (sets.every((s) => s !== undefined)) {
      const all = new Set(sets.flatMap((s) => [...(s ?? [])]));
      if (all.size <= MAX_SCOPED_NAMESPACES) namespaces = [...all].sort();
    }
  }
  const selectors: string[] = [];
  const name = commonValue(entries, (m) => m.objectKey?.name || undefined);
  if (name) selectors.push(`metadata.name=${escapeFieldValue(name)}`);
  if (sameGVK(spec.groupVersionKind, SECRET)) {
    const type = commonValue(entries, secretType);
    if (type) selectors.push(`type=${escapeFieldValue(type)}`);
  }
  return { namespaces, fieldSelector: selectors.length ? selectors.join(',') : undefined, ...(name ? { name } : {}) };
}

/** Whether an object of that namespace and name can be in the scope's watches at all. */
export function inScope(scope: SourceScope, namespace: string, name: string): boolean {
  return (scope.namespaces === undefined || scope.namespaces.includes(namespace)) && (scope.name === undefined || scope.name === name);
}

/** Whether some override may move a copy to another namespace. */
function movesNamespace(spec: ResourceSyncRuleSpec): boolean {
  return (spec.rules ?? []).some((r) =>
    (r.mutations?.overrides ?? []).some((o) => {
      let tokens: readonly Token[];
      try {
        tokens = parsePointer(o.path ?? '').tokens.slice(1);
      } catch {
        return true;
      }
      // The whole object, all of its metadata, or the namespace itself ('?' may mark any of them).
      const [first, second] = tokens;
      if (!first) return true;
      if (first.kind !== 'key' || first.key !== 'metadata') return false;
      return !second || (second.kind === 'key' && second.key === 'namespace');
    }),
  );
}

/**
 * The namespaces a rule's copies can land in here: those of its sources, unless an override may
 * move them (then any namespace). Watching and checking only these lets a controller whose
 * rights stop at some namespaces run the rules that stay inside them.
 */
export function targetNamespaces(spec: ResourceSyncRuleSpec, source: SourceScope): readonly string[] | undefined {
  return movesNamespace(spec) ? undefined : source.namespaces;
}

/** The local copies a rule's writes are watched as: its target kinds, in its target namespaces (undefined: all). */
export interface CopyWatch {
  readonly gvks: readonly FullGVK[];
  readonly namespaces: readonly string[] | undefined;
}

/** Where a copy lies: its kind, and its namespace ('' when cluster-scoped). */
export interface CopySpot {
  readonly gvk: FullGVK;
  readonly namespace: string;
}

/** Whether the watch sees copies at that spot (a cluster-scoped copy, whatever its namespaces). */
export function watchCovers(w: CopyWatch, spot: CopySpot): boolean {
  return w.gvks.some((g) => sameGVK(g, spot.gvk)) && (spot.namespace === '' || w.namespaces === undefined || w.namespaces.includes(spot.namespace));
}

/**
 * Whether a watch a rule no longer has (the rule went, or changed scope) must stay: through the
 * grace period after the change, and then for as long as a copy recording a rule (`recorded`:
 * where such copies lie) lies where it sees and no current watch does, or copies of a kind it
 * covers are not all known yet. Without it the collector could not see those copies, and they
 * would never be collected.
 */
export function drainedWatchNeeded(
  drained: { readonly watch: CopyWatch; readonly sinceMs: number },
  facts: { readonly nowMs: number; readonly graceMs: number; readonly current: readonly CopyWatch[]; readonly recorded: readonly CopySpot[]; readonly unknownKinds: readonly FullGVK[] },
): boolean {
  if (facts.nowMs - drained.sinceMs < facts.graceMs) return true;
  if (facts.unknownKinds.some((g) => drained.watch.gvks.some((d) => sameGVK(d, g)))) return true;
  return facts.recorded.some((spot) => watchCovers(drained.watch, spot) && !facts.current.some((w) => watchCovers(w, spot)));
}

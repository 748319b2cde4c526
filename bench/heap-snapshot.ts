// What a V8 heap snapshot holds, by constructor and by what retains it: the benchmark that adds
// peers one at a time compares two snapshots of the same controller to say what each peer costs.
import { readFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Bytes and count of one kind of heap object. */
export interface Held {
  bytes: number;
  count: number;
}

export interface HeapSummary {
  totalBytes: number;
  /** By constructor (objects, closures, native objects) or `(type)` for the rest: strings, arrays, code... */
  byKind: Map<string, Held>;
  /** By kind and what first retains it: `<kind> <- <retainer kind>.<edge>`. */
  byRetainer: Map<string, Held>;
}

const KEYED_BY_NAME = new Set(['object', 'closure', 'native', 'regexp']);
/** Edges that do not keep their target alive, or are V8's shortcuts beside a real path. */
const NOT_RETAINING = new Set(['weak', 'shortcut']);

function kindOf(type: string, name: string): string {
  return KEYED_BY_NAME.has(type) ? name || `(anonymous ${type})` : `(${type})`;
}

/** Sums a `.heapsnapshot` file (as `--heapsnapshot-signal` writes it) by kind and first retainer. */
export function summariseHeapSnapshot(path: string): HeapSummary {
  return summarise(JSON.parse(readFileSync(path, 'utf8')) as RawSnapshot);
}

function summarise(raw: RawSnapshot): HeapSummary {
  const { meta } = raw.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [nType, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f)) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f)) as [number, number, number];
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = raw;
  const count = nodes.length / nf;
  const kinds: string[] = new Array<string>(count);
  for (let i = 0; i < count; i++) kinds[i] = kindOf(nodeTypes[nodes[i * nf + nType]!] ?? '?', strings[nodes[i * nf + nName]!] ?? '');
  // The first retaining edge of each node, in snapshot order (from the roots outwards).
  const retainerOf = new Int32Array(count).fill(-1);
  const edgeNameOf: string[] = new Array<string>(count);
  let edge = 0;
  for (let i = 0; i < count; i++) {
    const n = nodes[i * nf + nEdges]!;
    for (let k = 0; k < n; k++, edge += ef) {
      const type = edgeTypes[edges[edge + eType]!] ?? '?';
      if (NOT_RETAINING.has(type)) continue;
      const to = edges[edge + eTo]! / nf;
      if (retainerOf[to] !== -1 || to === i) continue;
      retainerOf[to] = i;
      const name = type === 'element' || type === 'hidden' ? '[]' : (strings[edges[edge + eName]!] ?? '?');
      edgeNameOf[to] = /^\d+$/.test(name) ? '[]' : name;
    }
  }
  // Arrays and V8's internal objects say little: a retainer is named by the first object above them.
  const retainer = (i: number): string => {
    let node = i;
    for (let hops = 0; hops < 8; hops++) {
      const up = retainerOf[node]!;
      if (up === -1) return '(root)';
      if (!kinds[up]!.startsWith('(')) return `${kinds[up]}.${edgeNameOf[node]}`;
      node = up;
    }
    return `${kinds[node]}`;
  };
  const byKind = new Map<string, Held>();
  const byRetainer = new Map<string, Held>();
  const add = (m: Map<string, Held>, key: string, bytes: number): void => {
    const h = m.get(key) ?? { bytes: 0, count: 0 };
    h.bytes += bytes;
    h.count++;
    m.set(key, h);
  };
  let totalBytes = 0;
  for (let i = 0; i < count; i++) {
    const bytes = nodes[i * nf + nSize]!;
    totalBytes += bytes;
    add(byKind, kinds[i]!, bytes);
    add(byRetainer, `${kinds[i]} <- ${retainer(i)}`, bytes);
  }
  return { totalBytes, byKind, byRetainer };
}

/** What grew from `before` to `after`, per unit (each of `units` added peers), largest first. */
export function growth(before: Map<string, Held>, after: Map<string, Held>, units: number, top: number): { key: string; bytes: number; count: number }[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys]
    .map((key) => ({ key, bytes: ((after.get(key)?.bytes ?? 0) - (before.get(key)?.bytes ?? 0)) / units, count: ((after.get(key)?.count ?? 0) - (before.get(key)?.count ?? 0)) / units }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
}

// json.Marshal of an unstructured object: what upstream hands to gjson. It differs from
// JSON.stringify in what matters to gjson paths: map keys sorted (wildcards and @reverse see
// them in that order) and <, >, &, U+2028, U+2029 escaped.
import { compareGo, fromJSON, goJSONString } from '../strings.ts';

/** Go's json.Marshal of a JSON-shaped value (maps with sorted keys, HTML-safe strings). */
export function jsonMarshalForMatch(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goJSONString(fromJSON(value));
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(jsonMarshalForMatch).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
    // Keys as Go's decoder makes them (two may become one: the later wins, as in Go's map).
    const entries = keys.every((k) => k.isWellFormed()) ? keys.map((k): [string, unknown] => [k, obj[k]]) : [...new Map(keys.map((k) => [fromJSON(k), obj[k]]))];
    return `{${entries.sort(([a], [b]) => compareGo(a, b)).map(([k, v]) => `${goJSONString(k)}:${jsonMarshalForMatch(v)}`).join(',')}}`;
  }
  return 'null';
}

// encoding/json's Marshal/MarshalIndent over our Go values (sorted map keys, HTML-safe string
// escaping, Go's float spelling, struct json tags with omitempty and inlined embeds).
import { formatFloat } from './gofmt.ts';
import { asBig, asList, asMap, asNum, asStr, asStruct, isFloatKind, isIntKind, isUintKind, sortedKeys, zeroOf, type Value } from './values.ts';

export class JSONError extends Error {}

function quoteJSON(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) {
      out += '\\u' + c.toString(16).padStart(4, '0');
    } else if (c >= 0xd800 && c < 0xe000) out += '\\ufffd';
    else out += ch;
  }
  return out + '"';
}

function floatJSON(f: number): string {
  if (!Number.isFinite(f)) throw new JSONError(`json: unsupported value: ${formatFloat(f, 'g', -1)}`);
  const abs = Math.abs(f);
  let fmt = 'f';
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) fmt = 'e';
  let s = formatFloat(f, fmt, -1);
  if (fmt === 'e') s = s.replace(/e([+-])0(\d)$/, 'e$1$2');
  return s;
}

interface JSONField {
  key: string;
  omitempty: boolean;
  value: Value;
}

function isEmptyValue(v: Value): boolean {
  const k = v.t.kind;
  if (k === 'slice' || k === 'map' || k === 'string') return k === 'string' ? asStr(v) === '' : v.v === null || (k === 'slice' ? asList(v).length === 0 : asMap(v).size === 0);
  if (k === 'bool') return v.v === false;
  if (isIntKind(k) || isUintKind(k)) return asBig(v) === 0n;
  if (isFloatKind(k)) return asNum(v) === 0;
  if (k === 'ptr' || k === 'interface') return v.v === null;
  return false;
}

function structFields(v: Value): JSONField[] {
  const out: JSONField[] = [];
  const rec = asStruct(v);
  for (const f of v.t.fields ?? []) {
    const tag = f.json ?? '';
    if (tag === '-') continue;
    const [name = '', ...opts] = tag.split(',');
    const fv = rec[f.name] ?? zeroOf(f.type);
    if (f.embedded && name === '' && f.type.kind === 'struct') {
      out.push(...structFields(fv));
      continue;
    }
    out.push({ key: name || f.name, omitempty: opts.includes('omitempty'), value: fv });
  }
  return out;
}

function marshal(v: Value, indent: string, depth: number): string {
  const nl = indent ? '\n' + indent.repeat(depth + 1) : '';
  const close = indent ? '\n' + indent.repeat(depth) : '';
  const colon = indent ? ': ' : ':';
  const k = v.t.kind;
  if (v.t.marshalJSON) return v.t.marshalJSON(v);
  if (k === 'invalid' || ((k === 'ptr' || k === 'interface' || k === 'map') && v.v === null)) return 'null';
  if (k === 'bool') return v.v ? 'true' : 'false';
  if (isIntKind(k) || isUintKind(k)) return asBig(v).toString();
  if (isFloatKind(k)) return floatJSON(asNum(v));
  switch (k) {
    case 'string':
      return quoteJSON(asStr(v));
    case 'ptr':
      return marshal(v.v as Value, indent, depth);
    case 'slice': {
      if (v.v === null) return 'null';
      if (v.t.elem?.kind === 'uint8') {
        return quoteJSON(Buffer.from(asList(v).map((b) => Number(asBig(b)))).toString('base64'));
      }
      const items = asList(v);
      if (items.length === 0) return '[]';
      return '[' + items.map((e) => nl + marshal(e, indent, depth + 1)).join(',') + close + ']';
    }
    case 'map': {
      const m = asMap(v);
      const keys = sortedKeys(m);
      if (keys.length === 0) return '{}';
      return '{' + keys.map((key) => nl + quoteJSON(key) + colon + marshal(m.get(key)!, indent, depth + 1)).join(',') + close + '}';
    }
    case 'struct': {
      const fields = structFields(v).filter((f) => !(f.omitempty && isEmptyValue(f.value)));
      if (fields.length === 0) return '{}';
      return '{' + fields.map((f) => nl + quoteJSON(f.key) + colon + marshal(f.value, indent, depth + 1)).join(',') + close + '}';
    }
    default:
      throw new JSONError(`json: unsupported type: ${v.t.name}`);
  }
}

/** json.Marshal; throws JSONError where Go returns an error. */
export function marshalJSON(v: Value): string {
  return marshal(v, '', 0);
}

/** json.MarshalIndent(v, "", "  "). */
export function marshalIndentJSON(v: Value): string {
  return marshal(v, '  ', 0);
}

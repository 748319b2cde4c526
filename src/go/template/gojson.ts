// encoding/json's Marshal/MarshalIndent over our Go values (sorted map keys, HTML-safe string
// escaping, Go's float spelling, struct json tags with omitempty and inlined embeds, unexported
// fields skipped), bounded in size like every string a template builds.
import { JSON_PLAIN, goJSONString } from '../strings.ts';
import { formatFloat } from './gofmt.ts';
import { Builder, UNITS_PER_STEP, spend } from './limits.ts';
import { asBig, asList, asMap, asNum, asStr, asStruct, bytesOf, isExported, isFloatKind, isIntKind, isUintKind, sortedEntries, zeroOf, type Value } from './values.ts';

export class JSONError extends Error {}

/** encoding/json's string form (HTML-safe escaping), charged when it looks at each rune. */
export function quoteJSON(s: string): string {
  // most strings (base64 data among them) need no escaping at all
  if (!JSON_PLAIN.test(s)) spend(s.length / UNITS_PER_STEP.looped);
  return goJSONString(s);
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
    if (!isExported(f.name)) continue;
    out.push({ key: name || f.name, omitempty: opts.includes('omitempty'), value: fv });
  }
  return out;
}

interface Sink {
  add(s: string): void;
}

function marshal(v: Value, out: Sink): void {
  // a step per value: shared lists and maps are written each time they are reached
  spend(1);
  const k = v.t.kind;
  if (v.t.marshalJSON) return out.add(v.t.marshalJSON(v));
  if (k === 'invalid' || ((k === 'ptr' || k === 'interface' || k === 'map') && v.v === null)) return out.add('null');
  if (k === 'bool') return out.add(v.v ? 'true' : 'false');
  if (isIntKind(k) || isUintKind(k)) return out.add(asBig(v).toString());
  if (isFloatKind(k)) return out.add(floatJSON(asNum(v)));
  switch (k) {
    case 'string':
      return out.add(quoteJSON(asStr(v)));
    case 'ptr':
      return marshal(v.v as Value, out);
    case 'slice': {
      if (v.v === null) return out.add('null');
      if (v.t.elem?.kind === 'uint8') return out.add(quoteJSON(Buffer.from(bytesOf(v)).toString('base64')));
      out.add('[');
      asList(v).forEach((e, i) => {
        if (i > 0) out.add(',');
        marshal(e, out);
      });
      return out.add(']');
    }
    case 'map': {
      out.add('{');
      sortedEntries(asMap(v)).forEach(([key, e], i) => {
        out.add((i > 0 ? ',' : '') + quoteJSON(key) + ':');
        marshal(e, out);
      });
      return out.add('}');
    }
    case 'struct': {
      out.add('{');
      structFields(v)
        .filter((f) => !(f.omitempty && isEmptyValue(f.value)))
        .forEach((f, i) => {
          out.add((i > 0 ? ',' : '') + quoteJSON(f.key) + ':');
          marshal(f.value, out);
        });
      return out.add('}');
    }
    default:
      throw new JSONError(`json: unsupported type: ${v.t.name}`);
  }
}

/**
 * json.Marshal; throws JSONError where Go returns an error. `bounded` (for templates) fails with
 * LimitError past the size a template may build.
 */
export function marshalJSON(v: Value, bounded = true): string {
  if (bounded) {
    const out = new Builder();
    marshal(v, out);
    return out.toString();
  }
  const parts: string[] = [];
  marshal(v, { add: (s) => parts.push(s) });
  return parts.join('');
}

/** json.Indent of compact JSON text (what MarshalIndent does to Marshal's output). */
function indentJSON(src: string, indent: string): string {
  const out = new Builder();
  let depth = 0;
  let needIndent = false;
  const newline = (): void => out.add('\n' + indent.repeat(depth));
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"') {
      // copy the whole string literal
      let j = i + 1;
      while (j < src.length && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      if (needIndent) {
        needIndent = false;
        depth++;
        newline();
      }
      out.add(src.slice(i, j + 1));
      i = j;
      continue;
    }
    if (needIndent && c !== ']' && c !== '}') {
      needIndent = false;
      depth++;
      newline();
    }
    switch (c) {
      case '{':
      case '[':
        needIndent = true;
        out.add(c);
        break;
      case ',':
        out.add(c);
        newline();
        break;
      case ':':
        out.add(': ');
        break;
      case '}':
      case ']':
        if (needIndent) needIndent = false;
        else {
          depth--;
          newline();
        }
        out.add(c);
        break;
      default:
        out.add(c);
    }
  }
  return out.toString();
}

/** json.MarshalIndent(v, "", "  "). */
export function marshalIndentJSON(v: Value): string {
  return indentJSON(marshalJSON(v), '  ');
}

/**
 * What encoding/json makes of a Marshaler's output: compacted (the input here is already
 * compact) with <, >, &, U+2028 and U+2029 escaped.
 */
export function compactMarshalerOutput(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

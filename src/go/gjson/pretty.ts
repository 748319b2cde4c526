// tidwall/pretty v1.2.0's Pretty and Ugly, for gjson's @pretty and @ugly modifiers. Pretty
// measures line widths in bytes, so it works on UTF-8 bytes like the Go code.
import { spend } from './built.ts';
import { compareGo } from '../strings.ts';
import { parseGoFloat } from './numbers.ts';

export interface PrettyOptions {
  width: number;
  prefix: string;
  indent: string;
  sortKeys: boolean;
}

export const defaultPrettyOptions: PrettyOptions = { width: 80, prefix: '', indent: '  ', sortKeys: false };

const enc = new TextEncoder();
const dec = new TextDecoder();
const ch = (s: string): number => s.charCodeAt(0);
const SPACE = 0x20;

/** pretty.Ugly: drops the bytes <= ' ' outside strings. */
export function ugly(json: string): string {
  let out = '';
  for (let i = 0; i < json.length; i++) {
    if (json.charCodeAt(i) <= SPACE) continue;
    out += json[i];
    if (json[i] !== '"') continue;
    for (i++; i < json.length; i++) {
      out += json[i];
      if (json[i] === '"') {
        let j = i - 1;
        while (json[j] === '\\') j--;
        if ((i - j) % 2 !== 0) break; // an even run of backslashes before the quote
      }
    }
  }
  return out;
}

interface Pair {
  kstart: number;
  kend: number;
  vstart: number;
  vend: number;
}

type State = [buf: number[], i: number, nl: number, ok: boolean];

/** What one byte of the output costs while it is built: an element of a number array. */
const BUF_UNITS = 8;

/** Appends `src` one item at a time: spread as arguments, a long string's bytes overflow the stack. */
function append(buf: number[], src: ArrayLike<number>): void {
  for (let k = 0; k < src.length; k++) buf.push(src[k] ?? 0);
}

class Prettifier {
  readonly json: Uint8Array;
  readonly prefix: number[];
  readonly indent: number[];
  readonly width: number;

  constructor(json: Uint8Array, opts: PrettyOptions) {
    this.json = json;
    this.prefix = [...enc.encode(opts.prefix)];
    this.indent = [...enc.encode(opts.indent)];
    this.width = opts.width;
  }

  isNaNOrInf(i: number): boolean {
    const c = this.json[i];
    return c === ch('i') || c === ch('I') || c === ch('+') || c === ch('N') ||
      (c === ch('n') && i + 1 < this.json.length && this.json[i + 1] !== ch('u'));
  }

  any(buf: number[], i: number, pretty: boolean, indent: number[], sortkeys: boolean, tabs: number, nl: number, max: number): State {
    const json = this.json;
    for (; i < json.length; i++) {
      const c = json[i] ?? 0;
      if (c <= SPACE) continue;
      if (c === ch('"')) return this.string(buf, i, nl);
      if ((c >= ch('0') && c <= ch('9')) || c === ch('-') || this.isNaNOrInf(i)) return this.number(buf, i, nl);
      if (c === ch('{') || c === ch('[')) return this.object(buf, i, c, c + 2, pretty, indent, sortkeys, tabs, nl, max);
      if (c === ch('t')) return [pushStr(buf, 'true'), i + 4, nl, true];
      if (c === ch('f')) return [pushStr(buf, 'false'), i + 5, nl, true];
      if (c === ch('n')) return [pushStr(buf, 'null'), i + 4, nl, true];
    }
    return [buf, i, nl, true];
  }

  object(buf: number[], i: number, open: number, close: number, pretty: boolean, indent: number[], sortkeys: boolean, tabs: number, nl: number, max: number): State {
    const json = this.json;
    let ok: boolean;
    if (this.width > 0) {
      if (pretty && open === ch('[') && max === -1) {
        // First try the whole array on one line.
        const room = this.width - (buf.length - nl);
        if (room > 3) {
          const s1 = buf.length;
          const s2 = i;
          let single: number[];
          [single, i, , ok] = this.object(buf, i, ch('['), ch(']'), false, [], sortkeys, 0, 0, room);
          if (ok && single.length - s1 <= room) return [single, i, nl, true];
          buf.length = s1;
          i = s2;
        }
      } else if (max !== -1 && open === ch('{')) {
        return [buf, i, nl, false];
      }
    }
    buf.push(open);
    i++;
    const pairs: Pair[] = [];
    let n = 0;
    for (; i < json.length; i++) {
      const c = json[i] ?? 0;
      if (c <= SPACE) continue;
      if (c === close) {
        if (pretty) {
          if (open === ch('{') && sortkeys) buf = this.sortPairs(buf, pairs);
          if (n > 0) {
            nl = buf.length;
            if (buf[nl - 1] === SPACE) buf[nl - 1] = ch('\n');
            else buf.push(ch('\n'));
          }
          if (buf[buf.length - 1] !== open) this.tabs(buf, indent, tabs);
        }
        buf.push(close);
        return [buf, i + 1, nl, open !== ch('{')];
      }
      if (open === ch('[') || c === ch('"')) {
        if (n > 0) {
          buf.push(ch(','));
          if (this.width !== -1 && open === ch('[')) buf.push(SPACE);
        }
        const p: Pair = { kstart: 0, kend: 0, vstart: 0, vend: 0 };
        if (pretty) {
          nl = buf.length;
          if (buf[nl - 1] === SPACE) buf[nl - 1] = ch('\n');
          else buf.push(ch('\n'));
          if (open === ch('{') && sortkeys) {
            p.kstart = i;
            p.vstart = buf.length;
          }
          this.tabs(buf, indent, tabs + 1);
        }
        if (open === ch('{')) {
          [buf, i, nl] = this.string(buf, i, nl);
          if (sortkeys) p.kend = i;
          buf.push(ch(':'));
          if (pretty) buf.push(SPACE);
        }
        [buf, i, nl, ok] = this.any(buf, i, pretty, indent, sortkeys, tabs + 1, nl, max);
        if (max !== -1 && !ok) return [buf, i, nl, false];
        if (pretty && open === ch('{') && sortkeys) {
          p.vend = buf.length;
          if (p.kstart > p.kend || p.vstart > p.vend) sortkeys = false; // bad data: stop sorting
          else pairs.push(p);
        }
        i--;
        n++;
      }
    }
    return [buf, i, nl, open !== ch('{')];
  }

  // Stable sort of an object's members by key, then value; members are rebuilt from buf.
  sortPairs(buf: number[], pairs: Pair[]): number[] {
    if (pairs.length === 0) return buf;
    const vstart = pairs[0]?.vstart ?? 0;
    const less = (a: Pair, b: Pair, byKey: boolean): boolean => this.isLess(buf, a, b, byKey);
    const sorted = [...pairs].sort((a, b) => {
      if (less(a, b, true)) return -1;
      if (less(b, a, true)) return 1;
      return less(a, b, false) ? -1 : less(b, a, false) ? 1 : 0;
    });
    const out = buf.slice(0, vstart);
    sorted.forEach((p, idx) => {
      append(out, buf.slice(p.vstart, p.vend));
      if (idx < sorted.length - 1) out.push(ch(','), ch('\n'));
    });
    return out;
  }

  isLess(buf: number[], a: Pair, b: Pair, byKey: boolean): boolean {
    const k1 = this.json.subarray(a.kstart, a.kend);
    const k2 = this.json.subarray(b.kstart, b.kend);
    let v1: Uint8Array = k1;
    let v2: Uint8Array = k2;
    if (!byKey) {
      v1 = trimSpace(Uint8Array.from(buf.slice(a.vstart, a.vend)));
      v2 = trimSpace(Uint8Array.from(buf.slice(b.vstart, b.vend)));
      if (v1.length >= k1.length + 1) v1 = trimSpace(v1.subarray(k1.length + 1));
      if (v2.length >= k2.length + 1) v2 = trimSpace(v2.subarray(k2.length + 1));
    }
    const t1 = jtype(v1);
    const t2 = jtype(v2);
    if (t1 !== t2) return t1 < t2;
    if (t1 === 3) return compareGo(parsestr(v1), parsestr(v2)) < 0;
    if (t1 === 2) return parseGoFloat(dec.decode(v1)) < parseGoFloat(dec.decode(v2));
    return compareGo(dec.decode(v1), dec.decode(v2)) < 0;
  }

  string(buf: number[], i: number, nl: number): State {
    const json = this.json;
    const s = i;
    for (i++; i < json.length; i++) {
      if (json[i] === ch('"')) {
        let sc = 0;
        for (let j = i - 1; j > s && json[j] === ch('\\'); j--) sc++;
        if (sc % 2 === 1) continue;
        i++;
        break;
      }
    }
    append(buf, json.subarray(s, i));
    return [buf, i, nl, true];
  }

  number(buf: number[], i: number, nl: number): State {
    const json = this.json;
    const s = i;
    for (i++; i < json.length; i++) {
      const c = json[i] ?? 0;
      if (c <= SPACE || c === ch(',') || c === ch(':') || c === ch(']') || c === ch('}')) break;
    }
    append(buf, json.subarray(s, i));
    return [buf, i, nl, true];
  }

  tabs(buf: number[], indent: number[], tabs: number): void {
    // Indentation is where the output outgrows the input: charged as it is written.
    spend(BUF_UNITS * (this.prefix.length + tabs * indent.length));
    append(buf, this.prefix);
    for (let t = 0; t < tabs; t++) append(buf, indent);
  }
}

function pushStr(buf: number[], s: string): number[] {
  append(buf, enc.encode(s));
  return buf;
}

// getjtype: null < false < number < string < true < json, by the first byte.
function jtype(v: Uint8Array): number {
  if (v.length === 0) return 0;
  switch (v[0]) {
    case ch('"'): return 3;
    case ch('f'): return 1;
    case ch('t'): return 4;
    case ch('n'): return 0;
    case ch('['): case ch('{'): return 5;
    default: return 2;
  }
}

// pretty's parsestr: the string's contents, decoded with encoding/json when it has escapes.
function parsestr(v: Uint8Array): string {
  for (let i = 1; i < v.length; i++) {
    if (v[i] === ch('\\')) {
      try {
        const s: unknown = JSON.parse(dec.decode(v));
        return typeof s === 'string' ? s : '';
      } catch {
        return '';
      }
    }
    if (v[i] === ch('"')) return dec.decode(v.subarray(1, i));
  }
  return '';
}

// bytes.TrimSpace for the ASCII whitespace pretty can produce here.
function trimSpace(v: Uint8Array): Uint8Array {
  const isSpace = (c: number | undefined): boolean => c === 0x20 || (c !== undefined && c >= 0x09 && c <= 0x0d);
  let a = 0;
  let b = v.length;
  while (a < b && isSpace(v[a])) a++;
  while (b > a && isSpace(v[b - 1])) b--;
  return v.subarray(a, b);
}

/** pretty.PrettyOptions. */
export function pretty(json: string, opts: PrettyOptions = defaultPrettyOptions): string {
  spend(BUF_UNITS * json.length);
  const p = new Prettifier(enc.encode(json), opts);
  const buf = [...p.prefix];
  const [out] = p.any(buf, 0, true, p.indent, opts.sortKeys, 0, 0, -1);
  if (out.length > 0) out.push(ch('\n'));
  return dec.decode(Uint8Array.from(out));
}

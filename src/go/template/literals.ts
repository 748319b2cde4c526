// Go literal syntax: strconv.Unquote/UnquoteChar for string and rune constants, and
// strconv.ParseInt/ParseUint (base 0) and ParseFloat for numbers, underscores included.
import { fromGoBytes } from './bytes.ts';

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  '\\': 92,
};

/**
 * Decodes one (possibly escaped) character of a quoted literal at s[i]. Returns the rune and
 * the index after it, or null on a syntax error. \x and octal escapes are bytes (`byte`).
 */
function decodeChar(s: string, i: number, quote: string): { rune: number; next: number; byte?: boolean } | null {
  const c = s.codePointAt(i);
  if (c === undefined) return null;
  if (c !== 0x5c) {
    if (String.fromCodePoint(c) === quote && (quote === "'" || quote === '"')) return null;
    return { rune: c, next: i + (c > 0xffff ? 2 : 1) };
  }
  const e = s[i + 1];
  if (e === undefined) return null;
  const simple = SIMPLE_ESCAPES[e];
  if (simple !== undefined) return { rune: simple, next: i + 2 };
  if (e === quote && (quote === "'" || quote === '"')) return { rune: e.charCodeAt(0), next: i + 2 };
  const hexLen = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
  if (hexLen > 0) {
    const hex = s.slice(i + 2, i + 2 + hexLen);
    if (hex.length !== hexLen || !/^[0-9a-fA-F]+$/.test(hex)) return null;
    const v = parseInt(hex, 16);
    if (e !== 'x' && (v > 0x10ffff || (v >= 0xd800 && v < 0xe000))) return null;
    return { rune: v, next: i + 2 + hexLen, byte: e === 'x' };
  }
  if (e >= '0' && e <= '7') {
    const oct = s.slice(i + 1, i + 4);
    if (!/^[0-7]{3}$/.test(oct)) return null;
    const v = parseInt(oct, 8);
    if (v > 255) return null;
    return { rune: v, next: i + 4, byte: true };
  }
  return null;
}

/** strconv.Unquote for "..." and `...` literals; null means Go's "invalid syntax". */
export function unquoteGoString(s: string): string | null {
  if (s.length < 2) return null;
  const q = s[0];
  if (q !== s[s.length - 1]) return null;
  const body = s.slice(1, -1);
  if (q === '`') return body.includes('`') ? null : body.replaceAll('\r', '');
  if (q !== '"') return null;
  if (body.includes('\n')) return null;
  const bytes: number[] = [];
  for (let i = 0; i < body.length; ) {
    const d = decodeChar(body, i, '"');
    if (!d) return null;
    if (d.byte) bytes.push(d.rune);
    else bytes.push(...Buffer.from(String.fromCodePoint(d.rune), 'utf8'));
    i = d.next;
  }
  return fromGoBytes(Uint8Array.from(bytes));
}

/** strconv.UnquoteChar on a 'x' constant (text includes the quotes); tail is what follows. */
export function unquoteChar(text: string): { rune: number; tail: string } | null {
  if (text[1] === "'") return null;
  const d = decodeChar(text, 1, "'");
  if (!d) return null;
  return { rune: d.rune, tail: text.slice(d.next) };
}

/** Go's underscoreOK: underscores only between digits or after a base prefix. */
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && /[bBoOxX]/.test(s[1]!)) {
    i = 2;
    saw = '0';
    hex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/**
 * strconv.ParseInt(s, 0, 64) (signed) or ParseUint(s, 0, 64): the value, 'syntax' or 'range'.
 */
export function parseGoInt(s: string, signed: boolean): bigint | 'syntax' | 'range' {
  let neg = false;
  let body = s;
  if (signed && (body[0] === '+' || body[0] === '-')) {
    neg = body[0] === '-';
    body = body.slice(1);
  }
  let base = 10;
  let digits = body;
  if (body.length >= 2 && body[0] === '0') {
    const p = body[1]!.toLowerCase();
    if (p === 'x') base = 16;
    else if (p === 'o') base = 8;
    else if (p === 'b') base = 2;
    if (base !== 10) digits = body.slice(2);
    else {
      base = 8;
      digits = body.slice(1);
    }
  }
  if (digits.includes('_')) {
    if (!underscoreOK(body)) return 'syntax';
    digits = digits.replaceAll('_', '');
  }
  if (digits === '' && !(base === 8 && body.length >= 1 && !/^0[oO]/.test(body))) return 'syntax';
  const valid = { 2: /^[01]*$/, 8: /^[0-7]*$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base];
  if (!valid?.test(digits)) return 'syntax';
  const prefix = base === 16 ? '0x' : base === 8 ? '0o' : base === 2 ? '0b' : '';
  let v = digits === '' ? 0n : BigInt(prefix + digits);
  if (neg) v = -v;
  if (signed ? v < INT64_MIN || v > INT64_MAX : v > UINT64_MAX) return 'range';
  return v;
}

/** strconv.ParseFloat(s, 64) for Go float literals (decimal and hex); null on syntax error. */
export function parseGoFloat(s: string): number | null {
  let body = s;
  if (body.includes('_')) {
    if (!underscoreOK(body)) return null;
    body = body.replaceAll('_', '');
  }
  const lower = body.toLowerCase();
  const sign = lower[0] === '-' ? -1 : 1;
  const unsigned = lower[0] === '-' || lower[0] === '+' ? lower.slice(1) : lower;
  if (unsigned === 'inf' || unsigned === 'infinity') return sign * Infinity;
  if (unsigned === 'nan') return NaN;
  if (unsigned.startsWith('0x')) {
    const m = /^0x([0-9a-f]*)(?:\.([0-9a-f]*))?p([+-]?\d+)$/.exec(unsigned);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) return null;
    const mant = m[1]! + (m[2] ?? '');
    const v = Number(BigInt('0x' + (mant === '' ? '0' : mant)));
    return sign * v * 2 ** (Number(m[3]) - 4 * (m[2] ?? '').length);
  }
  if (!/^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(unsigned)) return null;
  return sign * Number(unsigned);
}

// Go strings in JavaScript ones, one model for every port: Go 1.26's, the Go the reference
// programs of tools/oracle are built with.
//
// A Go string is bytes, usually UTF-8; a JavaScript string is UTF-16. Here well-formed UTF-16
// stands for its UTF-8 encoding; a lone surrogate U+DC80..U+DCFF stands for one byte that is not
// valid UTF-8 (as Python's "surrogateescape": slicing bytes or decoding base64 makes them inside
// a template); any other lone surrogate stands for U+FFFD. What arrives from JSON (every object,
// rule and template we read) has no escapes: Go's decoder makes U+FFFD of any lone surrogate,
// and `fromJSON` does the same.

// Go keeps a leading U+FEFF; TextDecoder drops it unless told not to.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

const isEscape = (c: number): boolean => c >= 0xdc80 && c <= 0xdcff;
const isSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdfff;
const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
const ESCAPES = /[\udc80-\udcff]/;
const SURROGATES = /[\ud800-\udfff]/;

/** A string decoded from JSON, as Go's decoder gives it: lone surrogates become U+FFFD. */
export function fromJSON(s: string): string {
  return s.isWellFormed() ? s : s.toWellFormed();
}

/**
 * The length of the valid UTF-8 sequence at b[i], 0 if there is none. Go's rules: no overlong
 * forms, surrogates or runes past U+10FFFF, which narrow the second byte after E0, ED, F0 and F4.
 */
function validSeqLen(b: Uint8Array, i: number): number {
  const lead = b[i]!;
  if (lead < 0x80) return 1;
  const n = lead < 0xc2 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf5 ? 4 : 0;
  if (n === 0 || i + n > b.length) return 0;
  const lo = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
  const hi = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
  if (b[i + 1]! < lo || b[i + 1]! > hi) return 0;
  for (let j = 2; j < n; j++) if ((b[i + j]! & 0xc0) !== 0x80) return 0;
  return n;
}

/** The string of Go bytes; each byte of an invalid or truncated sequence becomes an escape. */
export function fromGoBytes(b: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(b);
  } catch {
    // by hand, into UTF-16LE (never more units than bytes)
    const out = Buffer.alloc(2 * b.length);
    let n = 0;
    const unit = (c: number): void => {
      out[n++] = c & 0xff;
      out[n++] = c >> 8;
    };
    for (let i = 0; i < b.length; ) {
      const len = validSeqLen(b, i);
      if (len <= 1) {
        unit(len === 1 ? b[i]! : 0xdc00 + b[i]!);
        i++;
        continue;
      }
      let c = b[i]! & (0x7f >> len);
      for (let j = 1; j < len; j++) c = (c << 6) | (b[i + j]! & 0x3f);
      i += len;
      if (c < 0x10000) unit(c);
      else {
        unit(0xd800 + ((c - 0x10000) >> 10));
        unit(0xdc00 + ((c - 0x10000) & 0x3ff));
      }
    }
    // lone surrogates, the escapes among them, come through as they are
    return out.toString('utf16le', 0, n);
  }
}

/** Whether `goBytes(s)` takes the slow way (the string holds escapes). */
export function hasEscapes(s: string): boolean {
  return ESCAPES.test(s);
}

/** Whether the character is an escape (a byte that is not valid UTF-8). */
export function isEscapeChar(ch: string): boolean {
  return ch.length === 1 && isEscape(ch.charCodeAt(0));
}

/** The string as ranging over its runes and writing each back makes it: every invalid byte becomes U+FFFD. */
export function runesRewritten(s: string): string {
  return hasEscapes(s) ? s.replace(/(?<![\ud800-\udbff])[\udc80-\udcff]/g, '\uFFFD') : s;
}

/** The Go bytes of a string: an escape is its byte, any other lone surrogate U+FFFD. */
export function goBytes(s: string): Uint8Array {
  if (!hasEscapes(s)) return Buffer.from(s, 'utf8');
  const out = new Uint8Array(s.length * 3);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (isHighSurrogate(c) && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
      out[n++] = 0xf0 | (c >> 18);
      out[n++] = 0x80 | ((c >> 12) & 0x3f);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (isEscape(c)) {
      out[n++] = c - 0xdc00;
      continue;
    }
    if (isSurrogate(c)) c = 0xfffd;
    if (c < 0x80) out[n++] = c;
    else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    }
  }
  return out.subarray(0, n);
}

/** len(s). */
export function goByteLength(s: string): number {
  return hasEscapes(s) ? goBytes(s).length : Buffer.byteLength(s, 'utf8');
}

/** Go's `a < b` on strings (byte order) as a comparator. */
export function compareGo(a: string, b: string): number {
  if (a === b) return 0;
  // Only the units up to where the strings first differ, and a pair or escapes after, decide:
  // what lies past them is never read, so comparing a long string with a short one costs the short one.
  const n = Math.min(a.length, b.length);
  const pa = a.length > n + 2 ? a.slice(0, n + 2) : a;
  const pb = b.length > n + 2 ? b.slice(0, n + 2) : b;
  // Without surrogates, UTF-16 order is code point order, which is UTF-8's byte order.
  if (!SURROGATES.test(pa) && !SURROGATES.test(pb)) return a < b ? -1 : 1;
  const x = Buffer.from(pa.slice(0, n + 1), 'utf16le');
  const y = Buffer.from(pb.slice(0, n + 1), 'utf16le');
  let j = 0;
  while (j < x.length && j < y.length && x[j] === y[j]) j++;
  let i = j >> 1;
  if (i > 0 && isHighSurrogate(a.charCodeAt(i - 1))) i--;
  // Equal units are equal bytes: the rest is encoded a window at a time, the window doubling
  // while both agree (an escape may spell the bytes of another character).
  for (let w = 8; ; w *= 2) {
    const ea = pairEnd(a, i + w);
    const eb = pairEnd(b, i + w);
    const u = goBytes(a.slice(i, ea));
    const v = goBytes(b.slice(i, eb));
    const m = Math.min(u.length, v.length);
    const c = Buffer.compare(u.subarray(0, m), v.subarray(0, m));
    if (c !== 0) return c;
    const aDone = ea === a.length && u.length === m;
    const bDone = eb === b.length && v.length === m;
    if (aDone || bDone) return aDone === bDone ? 0 : aDone ? -1 : 1;
  }
}

/** `end`, or past the low surrogate of a pair it would cut. */
function pairEnd(s: string, end: number): number {
  if (end >= s.length) return s.length;
  return isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end)) ? end + 1 : end;
}

/** The runes of a string, as Go's range over it gives them: an escape is its byte, as -1 - byte (RuneError, width 1). */
export function* goRunes(s: string): Generator<number> {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (isEscape(c)) yield -1 - (c - 0xdc00);
    else yield isSurrogate(c) ? 0xfffd : c;
  }
}

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;

/** unicode.IsPrint / strconv.IsPrint. */
export function isPrint(r: number): boolean {
  if (r < 0x80) return r >= 0x20 && r < 0x7f;
  if (isSurrogate(r)) return false;
  return PRINTABLE.test(String.fromCodePoint(r));
}

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

const SHORT_ESCAPES: Readonly<Record<number, string>> = { 7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v' };

/** strconv's appendEscapedRune for a rune of goRunes (an invalid byte as \xNN). */
export function escapeRune(r: number, quote: number, asciiOnly: boolean): string {
  if (r < 0) return '\\x' + hex(-1 - r, 2);
  if (r === quote || r === 0x5c) return '\\' + String.fromCodePoint(r);
  if (asciiOnly ? r < 0x80 && isPrint(r) : isPrint(r)) return String.fromCodePoint(r);
  const short = SHORT_ESCAPES[r];
  if (short !== undefined) return short;
  if (r < 0x20 || r === 0x7f) return '\\x' + hex(r, 2);
  if (r < 0x10000) return '\\u' + hex(r, 4);
  return '\\U' + hex(r, 8);
}

/** Whether strconv.Quote returns the string as it is, quoted: printable ASCII but for quotes and backslashes. */
export const PLAIN_QUOTED = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** strconv.Quote (asciiOnly: QuoteToASCII). */
export function goQuote(s: string, asciiOnly = false): string {
  if (PLAIN_QUOTED.test(s)) return `"${s}"`;
  let out = '"';
  for (const r of goRunes(s)) out += escapeRune(r, 0x22, asciiOnly);
  return out + '"';
}

/** What encoding/json escapes; anything else is written as it is. */
// eslint-disable-next-line no-control-regex
export const JSON_PLAIN = /^[^"\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]*$/;

/**
 * encoding/json's string encoding: Go 1.22 and later write \b and \f short; escapeHTML (as
 * json.Marshal does) writes <, > and & as \u escapes; an invalid byte becomes \ufffd.
 */
export function goJSONString(s: string, escapeHTML = true): string {
  if (JSON_PLAIN.test(s)) return `"${s}"`;
  let out = '"';
  for (const r of goRunes(s)) {
    switch (r) {
      case 0x22:
        out += '\\"';
        break;
      case 0x5c:
        out += '\\\\';
        break;
      case 0x08:
        out += '\\b';
        break;
      case 0x0c:
        out += '\\f';
        break;
      case 0x0a:
        out += '\\n';
        break;
      case 0x0d:
        out += '\\r';
        break;
      case 0x09:
        out += '\\t';
        break;
      case 0x2028:
      case 0x2029:
        out += '\\u' + hex(r, 4);
        break;
      default:
        if (r < 0) out += '\\ufffd';
        else if (r < 0x20 || (escapeHTML && (r === 0x3c || r === 0x3e || r === 0x26))) out += '\\u00' + hex(r, 2);
        else out += String.fromCodePoint(r);
    }
  }
  return out + '"';
}

/** The string as it should be shown: escaped bytes become U+FFFD. */
export const displayString = runesRewritten;

// Go string semantics that JavaScript strings do not share: Go strings are UTF-8 bytes, so
// lengths count bytes, ordering is byte order, and quoting follows strconv and encoding/json.

/** len(s) in Go: the UTF-8 byte length. */
export function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

// UTF-16 code units ordered like the UTF-8 bytes they encode: surrogates (astral code points)
// sort above U+E000..U+FFFF in UTF-8 but below them in UTF-16.
function utf8Rank(c: number): number {
  if (c >= 0xd800 && c <= 0xdfff) return c + 0x2000;
  if (c >= 0xe000) return c - 0x800;
  return c;
}

/** Go's `a < b` on strings (byte order) as a comparator. */
export function compareGo(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const shortEscapes: Record<string, string> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v',
};

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

/** strconv.Quote (also what fmt's %q and %#v print for a string). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd'; // a lone surrogate reaches Go as U+FFFD
    else if (printable.test(ch)) out += ch;
    else if (shortEscapes[ch] !== undefined) out += shortEscapes[ch];
    else if (c < 0x20 || c === 0x7f) out += '\\x' + hex(c, 2);
    else if (c < 0x10000) out += '\\u' + hex(c, 4);
    else out += '\\U' + hex(c, 8);
  }
  return out + '"';
}

/** encoding/json's string encoding, with HTML escaping as json.Marshal does. */
export function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"': out += '\\"'; break;
      case '\\': out += '\\\\'; break;
      case '\b': out += '\\b'; break;
      case '\f': out += '\\f'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\t': out += '\\t'; break;
      case '<': case '>': case '&': case '\u2028': case '\u2029':
        out += '\\u' + hex(c, 4);
        break;
      default:
        if (c < 0x20) out += '\\u' + hex(c, 4);
        else if (c >= 0xd800 && c <= 0xdfff) out += '\\ufffd';
        else out += ch;
    }
  }
  return out + '"';
}

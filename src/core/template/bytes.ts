// Go strings are byte strings; JS strings are UTF-16. Bytes that are not valid UTF-8 (from
// byte-wise slicing such as trunc/substr, or b64dec) are carried in JS strings as lone low
// surrogates U+DC80..U+DCFF ("surrogateescape"), so that later byte-level functions (len,
// hashes, b64enc, %x) see the same bytes Go does. Rendered output shows each as U+FFFD, the way
// encoding/json writes such bytes.

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

function utf8SeqLen(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead < 0xe0) return 2;
  if (lead >= 0xe0 && lead < 0xf0) return 3;
  if (lead >= 0xf0 && lead < 0xf5) return 4;
  return 0;
}

/** Decodes bytes; each byte of an invalid or truncated sequence becomes an escape. */
export function fromGoBytes(b: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < b.length) {
    const lead = b[i]!;
    const n = utf8SeqLen(lead);
    if (n === 1) {
      out += String.fromCharCode(lead);
      i++;
      continue;
    }
    let ch: string | null = null;
    if (n > 0 && i + n <= b.length) {
      try {
        ch = STRICT_UTF8.decode(b.subarray(i, i + n));
      } catch {
        ch = null;
      }
    }
    if (ch === null) {
      out += String.fromCharCode(0xdc00 + lead);
      i++;
    } else {
      out += ch;
      i += n;
    }
  }
  return out;
}

const isEscape = (c: number): boolean => c >= 0xdc80 && c <= 0xdcff;

/** The Go bytes of a string (escapes become their raw byte). */
export function goBytes(s: string): Uint8Array {
  if (!/[\udc80-\udcff]/.test(s)) return Buffer.from(s, 'utf8');
  const parts: Uint8Array[] = [];
  let run = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const prev = i > 0 ? s.charCodeAt(i - 1) : 0;
    if (isEscape(c) && !(prev >= 0xd800 && prev < 0xdc00)) {
      parts.push(Buffer.from(run, 'utf8'), Uint8Array.of(c - 0xdc00));
      run = '';
    } else run += s[i];
  }
  parts.push(Buffer.from(run, 'utf8'));
  return Buffer.concat(parts);
}

export function goByteLen(s: string): number {
  return goBytes(s).length;
}

/** The string as it should be shown: escaped bytes become U+FFFD. */
export function displayString(s: string): string {
  return s.replace(/(?<![\ud800-\udbff])[\udc80-\udcff]/g, '\uFFFD');
}

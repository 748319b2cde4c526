// Go strings are byte strings; JS strings are UTF-16. Bytes that are not valid UTF-8 (from
// byte-wise slicing such as trunc/substr, or b64dec) are carried in JS strings as lone low
// surrogates U+DC80..U+DCFF ("surrogateescape"), so that later byte-level functions (len,
// hashes, b64enc, %x) see the same bytes Go does. Rendered output shows each as U+FFFD, the way
// encoding/json writes such bytes.

import { UNITS_PER_STEP, spend } from './limits.ts';

// Go keeps a leading U+FEFF; TextDecoder drops it unless told not to.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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

/** Decodes bytes; each byte of an invalid or truncated sequence becomes an escape. */
export function fromGoBytes(b: Uint8Array): string {
  try {
    return STRICT_UTF8.decode(b);
  } catch {
    // by hand, into UTF-16LE (never more units than bytes)
    spend(b.length / UNITS_PER_STEP.looped);
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

const isEscape = (c: number): boolean => c >= 0xdc80 && c <= 0xdcff;

/** The Go bytes of a string (escapes become their raw byte). */
export function goBytes(s: string): Uint8Array {
  if (!/[\udc80-\udcff]/.test(s)) return Buffer.from(s, 'utf8');
  // UTF-8 by hand: an escape is one byte, any other lone surrogate U+FFFD as Buffer writes it
  spend(s.length / UNITS_PER_STEP.looped);
  const out = new Uint8Array(s.length * 3);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) < 0xe000) {
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
    if (c >= 0xd800 && c < 0xe000) c = 0xfffd;
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

export function goByteLen(s: string): number {
  return /[\udc80-\udcff]/.test(s) ? goBytes(s).length : Buffer.byteLength(s, 'utf8');
}

/** The string as it should be shown: escaped bytes become U+FFFD. */
export function displayString(s: string): string {
  return s.replace(/(?<![\ud800-\udbff])[\udc80-\udcff]/g, '\uFFFD');
}

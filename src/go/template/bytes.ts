// The template engine's Go bytes: the conversions of go/strings.ts (whose model of a Go string
// every port shares), charged to the step budget where they take time in proportion to the
// string (invalid UTF-8 among the bytes, escapes in the string).
import { fromGoBytes as decode, goBytes as encode, hasEscapes } from '../strings.ts';
import { UNITS_PER_STEP, spend } from './limits.ts';

export { displayString } from '../strings.ts';

/** The string of Go bytes; each byte of an invalid or truncated sequence becomes an escape. */
export function fromGoBytes(b: Uint8Array): string {
  const s = decode(b);
  if (hasEscapes(s)) spend(b.length / UNITS_PER_STEP.looped);
  return s;
}

/** The Go bytes of a string (escapes become their raw byte). */
export function goBytes(s: string): Uint8Array {
  if (!hasEscapes(s)) return Buffer.from(s, 'utf8');
  spend(s.length / UNITS_PER_STEP.looped);
  return encode(s);
}

/** len(s). */
export function goByteLen(s: string): number {
  return hasEscapes(s) ? goBytes(s).length : Buffer.byteLength(s, 'utf8');
}

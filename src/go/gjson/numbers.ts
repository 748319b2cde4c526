// Go's number parsing and formatting as gjson v1.9.3 uses it: strconv.ParseFloat,
// strconv.FormatFloat(f, 'f', -1, 64), gjson's own wrapping parseInt, and float64 -> int64.

const specialRe = /^([+-]?)(infinity|inf)$/i;

// Underscores must sit between digits (or after a base prefix), as strconv's underscoreOK says.
function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.startsWith('-') || s.startsWith('+')) s = s.slice(1);
  let hexDigits = false;
  if (s.length >= 2 && s[0] === '0' && /[box]/i.test(s[1] ?? '')) {
    i = 2;
    saw = '0';
    hexDigits = (s[1] ?? '').toLowerCase() === 'x';
  }
  for (; i < s.length; i++) {
    const c = s[i] ?? '';
    if ((c >= '0' && c <= '9') || (hexDigits && /[a-f]/i.test(c))) {
      saw = '0';
    } else if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
    } else {
      if (saw === '_') return false;
      saw = '!';
    }
  }
  return saw !== '_';
}

/**
 * A decimal float: sign, digits and underscores with at most one point and at least one digit,
 * then an optional exponent. Scanned, since a regex for it backtracks quadratically on a long
 * run of digits that ends badly.
 */
function isDecimal(s: string): boolean {
  let i = s[0] === '+' || s[0] === '-' ? 1 : 0;
  let digits = false;
  let point = false;
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') digits = true;
    else if (c === '.' && !point) point = true;
    else if (c !== '_') break;
  }
  if (!digits) return false;
  if (i === s.length) return true;
  if (s[i] !== 'e' && s[i] !== 'E') return false;
  i++;
  if (s[i] === '+' || s[i] === '-') i++;
  if (i === s.length) return false;
  for (; i < s.length; i++) if (!(s[i]! >= '0' && s[i]! <= '9') && s[i] !== '_') return false;
  return true;
}
const hexRe = /^([+-]?)0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9_]+)$/;

/** strconv.ParseFloat(s, 64)'s value: syntax errors give 0, out of range gives ±Inf. */
export function parseGoFloat(s: string): number {
  const special = specialRe.exec(s);
  if (special) return special[1] === '-' ? -Infinity : Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (s.includes('_') && !underscoreOK(s)) return 0;
  const clean = s.replaceAll('_', '');
  if (isDecimal(s)) return Number(clean);
  const hex = hexRe.exec(clean);
  if (!hex) return 0;
  const [, sign = '', int = '', frac = '', exp = '0'] = hex;
  if (int.length + frac.length === 0) return 0;
  const mantissa = BigInt('0x' + (int + frac || '0'));
  const value = Number(mantissa) * 2 ** (Number(exp) - 4 * frac.length);
  return sign === '-' ? -value : value;
}

/** strconv.FormatFloat(f, 'f', -1, 64): the shortest digits that round-trip, never an exponent. */
export function formatGoFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mant = '', expStr = '0'] = Math.abs(f).toExponential().split('e');
  const digits = mant.replace('.', '');
  const point = Number(expStr) + 1; // digits before the decimal point
  let out: string;
  if (point <= 0) out = '0.' + '0'.repeat(-point) + digits;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = digits.slice(0, point) + '.' + digits.slice(point);
  return (f < 0 ? '-' : '') + out;
}

/** gjson's parseInt: optional '-', digits only, int64 overflow wraps. */
export function parseGjsonInt(s: string): bigint | undefined {
  if (!/^-?[0-9]+$/.test(s)) return undefined;
  let n = 0n;
  for (let i = s[0] === '-' ? 1 : 0; i < s.length; i++) n = BigInt.asIntN(64, n * 10n + BigInt(s.charCodeAt(i) - 48));
  return s[0] === '-' ? BigInt.asIntN(64, -n) : n;
}

/** gjson's parseUint: digits only, uint64 overflow wraps. */
export function parseGjsonUint(s: string): bigint | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined;
  let n = 0n;
  for (let i = 0; i < s.length; i++) n = BigInt.asUintN(64, n * 10n + BigInt(s.charCodeAt(i) - 48));
  return n;
}

const int64Min = -(2n ** 63n);

/** Go's int64(f) on amd64: truncation, and the "integer indefinite" MinInt64 when out of range. */
export function float64ToInt64(f: number): bigint {
  if (!Number.isFinite(f) || f >= 2 ** 63 || f < -(2 ** 63)) return int64Min;
  return BigInt(Math.trunc(f));
}

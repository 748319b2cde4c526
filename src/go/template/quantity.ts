// resource.Quantity of k8s.io/apimachinery v0.21.3: parsing (with its int64 fast path and the
// inf.Dec fallback) and the canonical form String() and MarshalJSON print. Templates can print
// a Quantity's internals ({{i} {d} s Format}), so the representation is Go's, not just the value.

export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** inf.Dec: unscaled × 10^-scale. */
export interface Dec {
  unscaled: bigint;
  scale: number;
}

export interface Quantity {
  /** int64Amount: value × 10^scale, used while d is null. */
  i: { value: bigint; scale: number };
  d: Dec | null;
  /** The cached canonical string ("" when not yet computed). */
  s: string;
  format: QuantityFormat | '';
}

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
const inInt64 = (n: bigint): boolean => n >= MIN_INT64 && n <= MAX_INT64;
const pow10 = (n: number): bigint => 10n ** BigInt(n);

const ZERO_QUANTITY: Quantity = { i: { value: 0n, scale: 0 }, d: null, s: '', format: '' };

const DEC_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BIN_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);

function interpretSuffix(suffix: string): { base: number; exponent: number; format: QuantityFormat } | null {
  const dec = DEC_SUFFIXES.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BIN_SUFFIXES.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'E' || suffix[0] === 'e')) {
    const n = parseInt64(suffix.slice(1));
    // Go converts the parsed int64 to int32.
    return n === null ? null : { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' };
  }
  return null;
}

/** strconv.ParseInt(s, 10, 64). */
function parseInt64(s: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  const n = BigInt(s);
  return inInt64(n) ? n : null;
}

interface Parts {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

function parseQuantityString(str: string): Parts | null {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  if (i >= end) return { positive, value: str, num: str.slice(pos), denom: '', suffix: '' };
  const num = str.slice(pos, i) || '0';
  pos = i;
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    let j = pos;
    while (j < end && isDigit(str[j])) j++;
    if (j >= end) return { positive, value: str, num, denom: str.slice(pos), suffix: '' };
    denom = str.slice(pos, j);
    pos = j;
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  let k = pos;
  while (k < end && 'eEinumkKMGTP'.includes(str[k]!)) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  if (str[k] === '-' || str[k] === '+') k++;
  while (k < end && isDigit(str[k])) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  return null;
}

/** inf.Dec's SetString: an optional sign, digits with at most one '.'. */
function decFromString(s: string): Dec | null {
  const m = /^([+-]?)([0-9]*)(?:\.([0-9]*))?$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const digits = m[2]! + (m[3] ?? '');
  const unscaled = BigInt(digits);
  return { unscaled: m[1] === '-' ? -unscaled : unscaled, scale: (m[3] ?? '').length };
}

/** inf.Dec Round(x, s, RoundUp): rescale to s, rounding away from zero. */
function roundUp(d: Dec, scale: number): Dec {
  if (scale >= d.scale) return { unscaled: d.unscaled * pow10(scale - d.scale), scale };
  const div = pow10(d.scale - scale);
  const q = d.unscaled / div;
  const r = d.unscaled % div;
  return { unscaled: r === 0n ? q : q + (d.unscaled < 0n ? -1n : 1n), scale };
}

/** Sign of a - b for a = x.unscaled × 10^-x.scale and the same for y. */
function cmpDec(x: Dec, y: Dec): number {
  const s = Math.max(x.scale, y.scale);
  const a = x.unscaled * pow10(s - x.scale);
  const b = y.unscaled * pow10(s - y.scale);
  return a < b ? -1 : a > b ? 1 : 0;
}

const MAX_ALLOWED: Dec = { unscaled: MAX_INT64, scale: 0 };

/** resource.ParseQuantity; null where Go returns an error. */
export function parseQuantity(str: string): Quantity | null {
  if (str.length === 0) return null;
  if (str === '0') return { ...ZERO_QUANTITY, format: 'DecimalSI', s: str };
  const p = parseQuantityString(str);
  if (!p) return null;
  const suf = interpretSuffix(p.suffix);
  if (!suf) return null;
  const { base, exponent } = suf;
  let format = suf.format;
  let precision = 0;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && p.denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - p.num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else precision = -1;
  } else {
    scale = exponent;
    precision = 18 - (p.num.length + p.denom.length);
  }
  if (precision >= 0) {
    scale -= p.denom.length;
    if (scale >= -9) {
      const shifted = p.num + p.denom;
      const value = parseInt64(shifted);
      if (value === null) return null;
      const product = value * mantissa;
      if (inInt64(product)) {
        const result = p.positive ? product : -product;
        const canonical =
          format === 'BinarySI'
            ? exponent % 10 === 0 && (value & 7n) !== 0n
            : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return { i: { value: result, scale }, d: null, s: canonical ? str : '', format };
      }
    }
  }
  let amount = decFromString(p.value);
  if (!amount) return null;
  if (base === 10) amount = { unscaled: amount.unscaled, scale: amount.scale - exponent };
  else amount = { unscaled: amount.unscaled << BigInt(exponent), scale: amount.scale };
  const negative = amount.unscaled < 0n;
  if (negative) amount = { ...amount, unscaled: -amount.unscaled };
  if (amount.unscaled !== 0n) amount = roundUp(amount, 9);
  if (format === 'BinarySI' && cmpDec(amount, MAX_ALLOWED) > 0) amount = MAX_ALLOWED;
  if (format === 'BinarySI' && cmpDec(amount, { unscaled: 1n, scale: 0 }) < 0 && amount.unscaled > 0n) format = 'DecimalSI';
  if (negative) amount = { ...amount, unscaled: -amount.unscaled };
  return { i: { value: 0n, scale: 0 }, d: amount, s: '', format };
}

// ---------------------------------------------------------------- canonical form

function removeFactors(value: bigint, base: bigint): { result: bigint; times: number } {
  let result = value < 0n ? -value : value;
  let times = 0;
  while (result !== 0n && result % base === 0n) {
    result /= base;
    times++;
  }
  return { result: value < 0n ? -result : result, times };
}

/** int64 removeInt64Factors: only strips while the value is at least `base`. */
function removeInt64Factors(value: bigint, base: bigint): { result: bigint; times: number } {
  if (value === MIN_INT64) return { result: value, times: 0 };
  let result = value < 0n ? -value : value;
  let times = 0;
  while (result >= base && result % base === 0n) {
    result /= base;
    times++;
  }
  return { result: value < 0n ? -result : result, times };
}

function decCanonical(d: Dec): { number: string; exponent: number } {
  const removed = removeFactors(d.unscaled, 10n);
  let amount = removed.result;
  let exponent = -d.scale + removed.times;
  while (exponent % 3 !== 0) {
    amount *= 10n;
    exponent--;
  }
  return { number: amount.toString(), exponent };
}

function int64Canonical(value: bigint, scale: number): { number: string; exponent: number } {
  const removed = removeInt64Factors(value, 10n);
  let amount = removed.result;
  let exponent = scale + removed.times;
  const rem = exponent % 3;
  const factor = rem === 1 || rem === -2 ? 10n : rem === 2 || rem === -1 ? 100n : 1n;
  if (factor !== 1n) {
    if (amount === MIN_INT64 || !inInt64(amount * factor)) return decCanonical(asDec(value, scale));
    amount *= factor;
    exponent -= factor === 10n ? 1 : 2;
  }
  return { number: amount.toString(), exponent };
}

const asDec = (value: bigint, scale: number): Dec => ({ unscaled: value, scale: -scale });

/** negativeScaleInt64: value / 10^scale, rounded away from zero; exact tells no rounding. */
function negativeScaleInt64(base: bigint, scale: number): { result: bigint; exact: boolean } {
  if (scale === 0) return { result: base, exact: true };
  let value = base;
  let fraction = false;
  for (let i = 0; i < scale; i++) {
    if (!fraction && value % 10n !== 0n) fraction = true;
    value /= 10n;
    if (value === 0n) {
      if (fraction) return { result: base > 0n ? 1n : -1n, exact: false };
      return { result: 0n, exact: true };
    }
  }
  if (fraction) value += base > 0n ? 1n : -1n;
  return { result: value, exact: !fraction };
}

/** The quantity as an exact decimal. */
function exactDec(q: Quantity): Dec {
  return q.d ?? asDec(q.i.value, q.i.scale);
}

/** Base-1024 canonical digits of the quantity rounded (away from zero) to an integer. */
function base1024Canonical(q: Quantity): { number: string; exponent: number } {
  if (!q.d) {
    let value: bigint | null;
    if (q.i.scale < 0) value = negativeScaleInt64(q.i.value, -q.i.scale).result;
    else {
      value = q.i.value * pow10(q.i.scale);
      if (!inInt64(value)) value = null;
    }
    if (value !== null) {
      const r = removeInt64Factors(value, 1024n);
      return { number: r.result.toString(), exponent: r.times };
    }
  }
  const r = removeFactors(roundUp(exactDec(q), 0).unscaled, 1024n);
  return { number: r.result.toString(), exponent: r.times };
}

/** Whether rounding the quantity to an integer loses nothing (Quantity.AsScale(0)). */
function integral(q: Quantity): boolean {
  if (q.d) return cmpDec(roundUp(q.d, 0), q.d) === 0;
  return q.i.scale >= 0 || negativeScaleInt64(q.i.value, -q.i.scale).exact;
}

/** Quantity.CanonicalizeBytes: the canonical number and suffix. */
export function canonicalQuantity(q: Quantity): string {
  const d = exactDec(q);
  if (d.unscaled === 0n) return '0';
  let format: QuantityFormat = q.format === '' ? 'DecimalExponent' : q.format;
  if (format === 'BinarySI') {
    const small = cmpDec(d, { unscaled: -1024n, scale: 0 }) > 0 && cmpDec(d, { unscaled: 1024n, scale: 0 }) < 0;
    if (small || !integral(q)) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    const { number, exponent } = base1024Canonical(q);
    const suffix = [...BIN_SUFFIXES].find(([, e]) => e === exponent * 10)?.[0] ?? '';
    return number + suffix;
  }
  const { number, exponent } = q.d ? decCanonical(q.d) : int64Canonical(q.i.value, q.i.scale);
  if (format === 'DecimalExponent') return exponent === 0 ? number : `${number}e${exponent}`;
  return number + ([...DEC_SUFFIXES].find(([, e]) => e === exponent)?.[0] ?? '');
}

/** Quantity.String(): the cached string, else the canonical form. */
export function quantityString(q: Quantity): string {
  return q.s !== '' ? q.s : canonicalQuantity(q);
}

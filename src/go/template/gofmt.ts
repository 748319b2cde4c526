// A port of Go's fmt (Sprint, Sprintln, Sprintf) over our Go values, with strconv's float
// formatting (exact decimal expansion, round half to even) and quoting.
import { fromGoBytes, goBytes } from './bytes.ts';
import { PLAIN_QUOTED, escapeRune, goQuote as quote, isPrint } from '../strings.ts';
import { UNITS_PER_STEP, checkLength, checkString, spend } from './limits.ts';
import {
  asBig,
  asList,
  asMap,
  asNum,
  asStr,
  asStruct,
  bytesOf,
  isExported,
  isFloatKind,
  isIntKind,
  isUintKind,
  sortedEntries,
  zeroOf,
  type Value,
} from './values.ts';

// ---------------------------------------------------------------- strconv: quoting

/** strconv.Quote (asciiOnly: QuoteToASCII), charged when it looks at each rune. */
export function goQuote(s: string, asciiOnly = false): string {
  if (!PLAIN_QUOTED.test(s)) spend(s.length / UNITS_PER_STEP.lookedUp);
  return quote(s, asciiOnly);
}

/** strconv.QuoteRune (asciiOnly: QuoteRuneToASCII). */
export function goQuoteRune(r: number, asciiOnly = false): string {
  if (r > 0x10ffff || r < 0 || (r >= 0xd800 && r < 0xe000)) r = 0xfffd;
  return `'${escapeRune(r, 0x27, asciiOnly)}'`;
}

function canBackquote(s: string): boolean {
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (r === 0xfeff || r === 0x60) return false;
    if ((r < 0x20 && r !== 0x09) || r === 0x7f) return false;
  }
  return true;
}

// ---------------------------------------------------------------- strconv: floats

interface Decimal {
  digits: string; // no leading zeros; "" for zero
  dp: number; // decimal point position
}

const f64 = new DataView(new ArrayBuffer(8));

/** The float's bits: mantissa (with the implicit bit) and exponent such that |x| = mant * 2^exp. */
function floatBits(x: number): { mant: bigint; exp: number; neg: boolean } {
  f64.setFloat64(0, x);
  const hi = f64.getUint32(0);
  const lo = f64.getUint32(4);
  const neg = hi >>> 31 === 1;
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let exp: number;
  if (bexp === 0) exp = -1074;
  else {
    mant |= 1n << 52n;
    exp = bexp - 1075;
  }
  return { mant, exp, neg };
}

/** The exact decimal expansion of |x|. */
function exactDecimal(x: number): Decimal {
  const { mant, exp } = floatBits(x);
  if (mant === 0n) return { digits: '', dp: 0 };
  let s: string;
  let dp: number;
  if (exp >= 0) {
    s = (mant << BigInt(exp)).toString();
    dp = s.length;
  } else {
    s = (mant * 5n ** BigInt(-exp)).toString();
    dp = s.length + exp;
  }
  return trimZeros({ digits: s, dp });
}

function trimZeros(d: Decimal): Decimal {
  const digits = d.digits.replace(/0+$/, '');
  return digits === '' ? { digits: '', dp: 0 } : { digits, dp: d.dp };
}

/** Rounds to nd significant digits, half to even (strconv's decimal.Round on the exact value). */
function roundDecimal(d: Decimal, nd: number): Decimal {
  if (nd < 0 || nd >= d.digits.length) return d;
  const next = d.digits.charCodeAt(nd) - 48;
  let up = next > 5;
  if (next === 5) {
    up = nd + 1 < d.digits.length || (nd > 0 && (d.digits.charCodeAt(nd - 1) - 48) % 2 === 1);
  }
  let head = d.digits.slice(0, nd);
  let dp = d.dp;
  if (up) {
    let i = head.length - 1;
    while (i >= 0 && head[i] === '9') i--;
    if (i < 0) {
      head = '1';
      dp++;
    } else {
      head = head.slice(0, i) + String.fromCharCode(head.charCodeAt(i) + 1);
    }
  }
  return trimZeros({ digits: head, dp });
}

/** The shortest decimal that round-trips (JS and Go agree on it). */
function shortestDecimal(x: number): Decimal {
  if (x === 0) return { digits: '', dp: 0 };
  const [mant, e] = Math.abs(x).toExponential().split('e') as [string, string];
  return { digits: mant.replace('.', ''), dp: Number(e) + 1 };
}

/** The digits of d at positions from to to-1, zeros where it has none. */
function digitRange(d: Decimal, from: number, to: number): string {
  if (to <= from) return '';
  const before = Math.min(to, 0) - Math.min(from, 0);
  const digits = d.digits.slice(Math.max(from, 0), Math.max(to, 0));
  return '0'.repeat(before) + digits + '0'.repeat(to - from - before - digits.length);
}

function fmtE(neg: boolean, d: Decimal, prec: number, e: string): string {
  let s = neg ? '-' : '';
  s += d.digits.length === 0 ? '0' : d.digits[0];
  if (prec > 0) s += '.' + digitRange(d, 1, prec + 1);
  const exp = d.digits.length === 0 ? 0 : d.dp - 1;
  const a = Math.abs(exp);
  return s + e + (exp < 0 ? '-' : '+') + (a < 10 ? '0' : '') + a;
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let s = neg ? '-' : '';
  s += d.dp > 0 ? digitRange(d, 0, d.dp) : '0';
  if (prec > 0) s += '.' + digitRange(d, d.dp, d.dp + prec);
  return s;
}

/** strconv's %x for floats (fmtX): the leading 1 sits at bit 60 of a 64-bit mantissa. */
function fmtHexFloat(x: number, prec: number, upper: boolean): string {
  const M64 = (1n << 64n) - 1n;
  f64.setFloat64(0, x);
  const hi = f64.getUint32(0);
  const neg = hi >>> 31 === 1;
  const bexp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(f64.getUint32(4));
  let exp = bexp === 0 ? -1022 : bexp - 1023;
  if (bexp !== 0) mant |= 1n << 52n;
  if (mant === 0n) exp = 0;
  mant <<= 8n;
  while (mant !== 0n && (mant & (1n << 60n)) === 0n) {
    mant <<= 1n;
    exp--;
  }
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & ((1n << 60n) - 1n);
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n;
      exp++;
    }
  }
  const digit = (m: bigint): string => Number((m >> 60n) & 15n).toString(16);
  let s = `${neg ? '-' : ''}0x${digit(mant) === '0' ? '0' : '1'}`;
  mant = (mant << 4n) & M64;
  if (prec < 0 && mant !== 0n) {
    s += '.';
    while (mant !== 0n) {
      s += digit(mant);
      mant = (mant << 4n) & M64;
    }
  } else if (prec > 0) {
    s += '.';
    let i = 0;
    for (; i < prec && mant !== 0n; i++) {
      s += digit(mant);
      mant = (mant << 4n) & M64;
    }
    s += '0'.repeat(prec - i);
  }
  const e = Math.abs(exp);
  s += `p${exp < 0 ? '-' : '+'}${e < 10 ? '0' : ''}${e}`;
  return upper ? s.toUpperCase() : s;
}

/** strconv.FormatFloat(x, fmt, prec, 64). */
export function formatFloat(x: number, fmt: string, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return '+Inf';
  if (x === -Infinity) return '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  if (fmt === 'b') {
    const { mant, exp } = floatBits(x);
    return `${neg ? '-' : ''}${mant}p${exp >= 0 ? '+' : ''}${exp}`;
  }
  if (fmt === 'x' || fmt === 'X') return fmtHexFloat(x, prec, fmt === 'X');
  const shortest = prec < 0;
  let d: Decimal;
  if (shortest) {
    d = shortestDecimal(x);
    if (fmt === 'e' || fmt === 'E') prec = Math.max(d.digits.length - 1, 0);
    else if (fmt === 'f') prec = Math.max(d.digits.length - d.dp, 0);
    else prec = d.digits.length;
  } else {
    const exact = exactDecimal(x);
    if (fmt === 'e' || fmt === 'E') d = roundDecimal(exact, prec + 1);
    else if (fmt === 'f') d = roundDecimal(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      d = roundDecimal(exact, prec);
    }
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, d, prec, fmt);
    case 'f':
      return fmtF(neg, d, prec);
    default: {
      // 'g' / 'G'
      let eprec = prec;
      if (eprec > d.digits.length && d.digits.length >= d.dp) eprec = d.digits.length;
      if (shortest) eprec = 6;
      const exp = d.dp - 1;
      if (d.digits.length !== 0 && (exp < -4 || exp >= eprec)) {
        if (prec > d.digits.length) prec = d.digits.length;
        return fmtE(neg, d, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > d.dp) prec = d.digits.length;
      return fmtF(neg, d, Math.max(prec - d.dp, 0));
    }
  }
}

// ---------------------------------------------------------------- fmt

interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  wid: number;
  widPresent: boolean;
  prec: number;
  precPresent: boolean;
}

function noFlags(): Flags {
  return {
    plus: false,
    minus: false,
    sharp: false,
    space: false,
    zero: false,
    plusV: false,
    sharpV: false,
    wid: 0,
    widPresent: false,
    prec: 0,
    precPresent: false,
  };
}

/** The runes in s: its UTF-16 units less one for each surrogate pair. */
function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    if (s.codePointAt(i)! > 0xffff) {
      n--;
      i++;
    }
  }
  return n;
}

/** Go's %v spelling of a type name for %T and the %!verb(type=value) forms. */
export function typeName(v: Value): string {
  return v.t.kind === 'invalid' ? '<nil>' : v.t.name;
}

class Printer {
  buf = '';
  f: Flags = noFlags();
  erroring = false;
  /** The operand being printed, for badVerb. */
  arg: Value | null = null;

  /** Widths and precisions reach 10^7: what they add is checked before it is made. */
  padding(n: number): string {
    if (n <= 0) return '';
    checkLength(this.buf.length + n);
    return (this.f.zero && !this.f.minus ? '0' : ' ').repeat(n);
  }

  zeros(n: number): string {
    checkLength(this.buf.length + n);
    return '0'.repeat(n);
  }

  pad(s: string): void {
    if (!this.f.widPresent || this.f.wid === 0) {
      this.buf += s;
      return;
    }
    const p = this.padding(this.f.wid - runeCount(s));
    this.buf += this.f.minus ? s + p : p + s;
  }

  /** pad with zero padding suppressed (numbers place their own zeros). */
  padNoZero(s: string): void {
    const z = this.f.zero;
    this.f.zero = false;
    this.pad(s);
    this.f.zero = z;
  }

  /** The first prec runes of s. */
  truncate(s: string): string {
    if (!this.f.precPresent) return s;
    let end = 0;
    for (let n = 0; n < this.f.prec && end < s.length; n++) end += s.codePointAt(end)! > 0xffff ? 2 : 1;
    return s.slice(0, end);
  }

  fmtInteger(u: bigint, signed: boolean, base: number, verb: string, upper: boolean): void {
    const negative = signed && u < 0n;
    if (negative) u = -u;
    let prec = 0;
    if (this.f.precPresent) {
      prec = this.f.prec;
      if (prec === 0 && u === 0n) {
        const z = this.f.zero;
        this.f.zero = false;
        this.buf += this.padding(this.f.wid);
        this.f.zero = z;
        return;
      }
    } else if (this.f.zero && !this.f.minus && this.f.widPresent) {
      prec = this.f.wid;
      if (negative || this.f.plus || this.f.space) prec--;
    }
    let s = u.toString(base);
    if (upper) s = s.toUpperCase();
    if (s.length < prec) s = this.zeros(prec - s.length) + s;
    if (this.f.sharp) {
      if (base === 2) s = '0b' + s;
      else if (base === 8 && s[0] !== '0') s = '0' + s;
      else if (base === 16) s = (upper ? '0X' : '0x') + s;
    }
    if (verb === 'O') s = '0o' + s;
    if (negative) s = '-' + s;
    else if (this.f.plus) s = '+' + s;
    else if (this.f.space) s = ' ' + s;
    this.padNoZero(s);
  }

  fmtUnicode(u: bigint): void {
    let prec = 4;
    if (this.f.precPresent && this.f.prec > 4) prec = this.f.prec;
    let s = u.toString(16).toUpperCase();
    if (s.length < prec) s = this.zeros(prec - s.length) + s;
    s = 'U+' + s;
    if (this.f.sharp && u <= 0x10ffffn && isPrint(Number(u))) s += ` '${String.fromCodePoint(Number(u))}'`;
    this.padNoZero(s);
  }

  runeOf(u: bigint): number {
    if (u < 0n || u > 0x10ffffn) return 0xfffd;
    const r = Number(u);
    return r >= 0xd800 && r < 0xe000 ? 0xfffd : r;
  }

  fmtFloat(v: number, verb: string, prec: number): void {
    if (this.f.precPresent) prec = this.f.prec;
    // these print every digit of the precision
    if ('eEfxX'.includes(verb) || (this.f.sharp && verb !== 'b')) checkLength(this.buf.length + prec);
    let num = formatFloat(v, verb, prec);
    if (num[0] !== '-' && num[0] !== '+') num = '+' + num;
    if (this.f.space && num[0] === '+' && !this.f.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      if (num[1] === 'N' && !this.f.space && !this.f.plus) num = num.slice(1);
      this.padNoZero(num);
      return;
    }
    if (this.f.sharp && verb !== 'b') {
      let digits = 0;
      if (verb === 'v' || verb === 'g' || verb === 'G' || verb === 'x') digits = prec === -1 ? 6 : prec;
      let tail = '';
      let hasPoint = false;
      let sawNonzero = false;
      let body = num;
      for (let i = 1; i < body.length; i++) {
        const c = body[i]!;
        if (c === '.') hasPoint = true;
        else if (c === 'p' || c === 'P' || ((c === 'e' || c === 'E') && verb !== 'x' && verb !== 'X')) {
          tail = body.slice(i);
          body = body.slice(0, i);
          break;
        } else {
          if (c !== '0') sawNonzero = true;
          if (sawNonzero) digits--;
        }
      }
      if (!hasPoint) {
        if (body.length === 2 && body[1] === '0') digits--;
        body += '.';
      }
      num = body + '0'.repeat(Math.max(digits, 0)) + tail;
    }
    if (this.f.plus || num[0] !== '+') {
      if (this.f.zero && !this.f.minus && this.f.widPresent && this.f.wid > num.length) {
        this.buf += num[0] + this.padding(this.f.wid - num.length) + num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  fmtSx(bytes: Uint8Array, upper: boolean): void {
    let length = bytes.length;
    if (this.f.precPresent && this.f.prec < length) length = this.f.prec;
    let width = 2 * length;
    if (width > 0) {
      if (this.f.space) {
        if (this.f.sharp) width *= 2;
        width += length - 1;
      } else if (this.f.sharp) width += 2;
    } else {
      if (this.f.widPresent) this.buf += this.padding(this.f.wid);
      return;
    }
    checkLength(this.buf.length + width);
    spend(length / UNITS_PER_STEP.looped);
    if (this.f.widPresent && this.f.wid > width && !this.f.minus) this.buf += this.padding(this.f.wid - width);
    const x = upper ? '0X' : '0x';
    let s = this.f.sharp ? x : '';
    for (let i = 0; i < length; i++) {
      if (this.f.space && i > 0) s += this.f.sharp ? ' ' + x : ' ';
      const h = bytes[i]!.toString(16).padStart(2, '0');
      s += upper ? h.toUpperCase() : h;
    }
    this.buf += s;
    if (this.f.widPresent && this.f.wid > width && this.f.minus) this.buf += this.padding(this.f.wid - width);
  }

  fmtQ(s: string): void {
    s = this.truncate(s);
    if (this.f.sharp && canBackquote(s)) {
      this.pad('`' + s + '`');
      return;
    }
    this.pad(goQuote(s, this.f.plus));
  }

  fmtString(s: string, verb: string): void {
    switch (verb) {
      case 'v':
        if (this.f.sharpV) this.fmtQ(s);
        else this.pad(this.truncate(s));
        return;
      case 's':
        this.pad(this.truncate(s));
        return;
      case 'x':
      case 'X':
        this.fmtSx(goBytes(s), verb === 'X');
        return;
      case 'q':
        this.fmtQ(s);
        return;
      default:
        this.badVerb(verb);
    }
  }

  fmtIntegerVerb(v: Value, verb: string): void {
    const u = asBig(v);
    const signed = isIntKind(v.t.kind);
    switch (verb) {
      case 'v':
      case 'd':
        this.fmtInteger(u, signed, 10, verb, false);
        return;
      case 'b':
        this.fmtInteger(u, signed, 2, verb, false);
        return;
      case 'o':
      case 'O':
        this.fmtInteger(u, signed, 8, verb, false);
        return;
      case 'x':
        this.fmtInteger(u, signed, 16, verb, false);
        return;
      case 'X':
        this.fmtInteger(u, signed, 16, verb, true);
        return;
      case 'c':
        this.pad(String.fromCodePoint(this.runeOf(u)));
        return;
      case 'q':
        this.pad(goQuoteRune(this.runeOf(u), this.f.plus));
        return;
      case 'U':
        this.fmtUnicode(BigInt.asUintN(64, u));
        return;
      default:
        this.badVerb(verb);
    }
  }

  fmtFloatVerb(v: number, verb: string): void {
    switch (verb) {
      case 'v':
        this.fmtFloat(v, 'g', -1);
        return;
      case 'b':
      case 'g':
      case 'G':
      case 'x':
      case 'X':
        this.fmtFloat(v, verb, -1);
        return;
      case 'f':
      case 'e':
      case 'E':
        this.fmtFloat(v, verb, 6);
        return;
      case 'F':
        this.fmtFloat(v, 'f', 6);
        return;
      default:
        this.badVerb(verb);
    }
  }

  fmtComplex([re, im]: [number, number], verb: string): void {
    if (!'vbgGxXfFeE'.includes(verb)) {
      this.badVerb(verb);
      return;
    }
    const plus = this.f.plus;
    this.buf += '(';
    this.fmtFloatVerb(re, verb);
    this.f.plus = true; // the imaginary part always has a sign
    this.fmtFloatVerb(im, verb);
    this.buf += 'i)';
    this.f.plus = plus;
  }

  badVerb(verb: string): void {
    this.erroring = true;
    this.buf += '%!' + verb + '(';
    const arg = this.arg;
    if (arg && arg.t.kind !== 'invalid' && !(arg.t.kind === 'interface' && arg.v === null)) {
      this.buf += arg.t.name + '=';
      this.printArg(arg, 'v');
    } else {
      this.buf += '<nil>';
    }
    this.buf += ')';
    this.erroring = false;
  }

  /**
   * fmt's handleMethods: GoString() for %#v, String() for the verbs that take a string. A
   * pointer has its element's value methods too; calling one on a nil pointer panics, which fmt
   * prints as a bare <nil>.
   */
  handleMethods(v: Value, verb: string): boolean {
    if (this.erroring) return false;
    const ptr = v.t.kind === 'ptr';
    const t = ptr ? v.t.elem! : v.t;
    const target = ptr ? (v.v as Value | null) : v;
    if (this.f.sharpV) {
      if (!t.goStringer) return false;
      if (target === null) this.buf += '<nil>';
      else this.pad(this.truncate(t.goStringer(target)));
      return true;
    }
    if (!'vsxXq'.includes(verb)) return false;
    if (ptr && t.ptrStringer) this.fmtString(t.ptrStringer(target), verb);
    else if (!t.stringer) return false;
    else if (target === null) this.buf += '<nil>';
    else this.fmtString(t.stringer(target), verb);
    return true;
  }

  printArg(arg: Value, verb: string): void {
    this.arg = arg;
    if (arg.t.kind === 'invalid' || (arg.t.kind === 'interface' && arg.v === null)) {
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb);
      return;
    }
    if (verb === 'T') {
      this.pad(this.truncate(arg.t.name));
      return;
    }
    if (verb === 'p') {
      this.fmtPointer(arg, verb);
      return;
    }
    if (this.handleMethods(arg, verb)) return;
    this.printValue(arg, verb, 0);
  }

  fmtPointer(v: Value, verb: string): void {
    const nil = v.v === null;
    if (!['ptr', 'map', 'slice', 'func'].includes(v.t.kind)) {
      this.badVerb(verb);
      return;
    }
    // Addresses are not reproducible; a fixed stand-in keeps the shape of Go's output.
    if (verb === 'v' && this.f.sharpV) this.buf += `(${v.t.name})(${nil ? 'nil' : '0xc000010000'})`;
    else if (verb === 'v') this.pad(nil ? '<nil>' : '0xc000010000');
    else if (verb === 'p') this.pad(nil ? '0x0' : '0xc000010000');
    else if ('bodxX'.includes(verb)) this.fmtIntegerVerb({ t: v.t, v: nil ? 0n : 0xc000010000n }, verb);
    else this.badVerb(verb);
  }

  /** `hidden`: reached through an unexported field, so fmt cannot call the value's methods. */
  printValue(v: Value, verb: string, depth: number, hidden = false): void {
    // a step per value: shared lists and maps print each time they are reached
    spend(1);
    this.arg = v;
    if (depth > 0 && v.t.kind !== 'invalid' && !hidden && this.handleMethods(v, verb)) return;
    checkLength(this.buf.length);
    const k = v.t.kind;
    const sharpV = this.f.sharpV;
    if (k === 'bool') {
      if (verb === 't' || verb === 'v') this.pad(v.v ? 'true' : 'false');
      else this.badVerb(verb);
      return;
    }
    if (sharpV && verb === 'v' && isUintKind(k)) {
      // %#v shows unsigned integers in hex
      this.f.sharp = true;
      this.fmtInteger(asBig(v), false, 16, verb, false);
      this.f.sharp = false;
      return;
    }
    if (isIntKind(k) || isUintKind(k)) return this.fmtIntegerVerb(v, verb);
    if (isFloatKind(k)) return this.fmtFloatVerb(asNum(v), verb);
    if (k === 'complex128') return this.fmtComplex(v.v as [number, number], verb);
    switch (k) {
      case 'invalid':
        if (depth === 0) this.pad('<invalid reflect.Value>');
        else if (verb === 'v') this.pad('<nil>');
        else this.badVerb(verb);
        return;
      case 'string':
        this.fmtString(asStr(v), verb);
        return;
      case 'map': {
        if (sharpV) {
          this.buf += v.t.name;
          if (v.v === null) {
            this.buf += '(nil)';
            return;
          }
          this.buf += '{';
        } else this.buf += 'map[';
        sortedEntries(asMap(v)).forEach(([key, e], i) => {
          if (i > 0) this.buf += sharpV ? ', ' : ' ';
          this.printValue({ t: v.t.key!, v: key }, verb, depth + 1, hidden);
          this.buf += ':';
          this.printValue(e, verb, depth + 1, hidden);
        });
        this.buf += sharpV ? '}' : ']';
        return;
      }
      case 'struct': {
        if (sharpV) this.buf += v.t.name;
        this.buf += '{';
        const rec = asStruct(v);
        (v.t.fields ?? []).forEach((f, i) => {
          if (i > 0) this.buf += sharpV ? ', ' : ' ';
          if (this.f.plusV || sharpV) this.buf += f.name + ':';
          this.printValue(rec[f.name] ?? zeroOf(f.type), verb, depth + 1, hidden || !isExported(f.name));
        });
        this.buf += '}';
        return;
      }
      case 'interface':
        this.buf += sharpV ? `${v.t.name}(nil)` : '<nil>';
        return;
      case 'slice': {
        if ('sqxX'.includes(verb) && v.t.elem?.kind === 'uint8') {
          const bytes = bytesOf(v);
          if (verb === 's') this.pad(this.truncate(fromGoBytes(bytes)));
          else if (verb === 'q') this.fmtQ(fromGoBytes(bytes));
          else this.fmtSx(bytes, verb === 'X');
          return;
        }
        if (sharpV) {
          // printArg names an operand of type []byte itself so; reflection finds []uint8
          this.buf += depth === 0 && v.t.name === '[]uint8' ? '[]byte' : v.t.name;
          if (v.v === null) {
            this.buf += '(nil)';
            return;
          }
        }
        this.buf += sharpV ? '{' : '[';
        asList(v).forEach((e, i) => {
          if (i > 0) this.buf += sharpV ? ', ' : ' ';
          this.printValue(e, verb, depth + 1, hidden);
        });
        this.buf += sharpV ? '}' : ']';
        return;
      }
      case 'ptr':
        if (depth === 0 && v.v !== null) {
          const target = v.v as Value;
          if (['slice', 'struct', 'map'].includes(target.t.kind)) {
            this.buf += '&';
            this.printValue(target, verb, depth + 1, hidden);
            return;
          }
        }
        this.fmtPointer(v, verb);
        return;
      case 'func':
        this.fmtPointer(v, verb);
        return;
      default:
        this.badVerb(verb);
    }
  }

  doPrint(args: Value[]): void {
    let prevString = false;
    args.forEach((arg, i) => {
      checkLength(this.buf.length);
      const isString = arg.t.kind === 'string';
      if (i > 0 && !isString && !prevString) this.buf += ' ';
      this.printArg(arg, 'v');
      prevString = isString;
    });
  }

  doPrintln(args: Value[]): void {
    args.forEach((arg, i) => {
      checkLength(this.buf.length);
      if (i > 0) this.buf += ' ';
      this.printArg(arg, 'v');
    });
    this.buf += '\n';
  }

  doPrintf(format: string, a: Value[]): void {
    const end = format.length;
    let argNum = 0;
    let afterIndex = false;
    let reordered = false;
    let goodArgNum = true;

    const argNumber = (i: number): [number, boolean] => {
      if (i >= end || format[i] !== '[') return [i, false];
      reordered = true;
      const close = format.indexOf(']', i + 1);
      if (end - i < 3 || close < 0) {
        goodArgNum = false;
        return [i + 1, false];
      }
      const digits = format.slice(i + 1, close);
      if (!/^[0-9]+$/.test(digits)) {
        goodArgNum = false;
        return [close + 1, false];
      }
      const index = parseInt(digits, 10) - 1;
      if (index >= 0 && index < a.length) {
        argNum = index;
        return [close + 1, true];
      }
      goodArgNum = false;
      return [close + 1, true];
    };
    const parsenum = (i: number): { num: number; ok: boolean; next: number } => {
      let num = 0;
      let ok = false;
      let j = i;
      for (; j < end && format[j]! >= '0' && format[j]! <= '9'; j++) {
        if (num > 1e6) return { num: 0, ok: false, next: end };
        num = num * 10 + (format.charCodeAt(j) - 48);
        ok = true;
      }
      return { num, ok, next: j };
    };
    const intFromArg = (): { num: number; ok: boolean } => {
      if (argNum >= a.length) return { num: 0, ok: false };
      const v = a[argNum]!;
      argNum++;
      if (isIntKind(v.t.kind) || isUintKind(v.t.kind)) {
        const n = asBig(v);
        if (n >= -(2n ** 63n) && n < 2n ** 63n && n <= 1000000n && n >= -1000000n) return { num: Number(n), ok: true };
      }
      return { num: 0, ok: false };
    };

    let i = 0;
    formatLoop: while (i < end) {
      checkLength(this.buf.length);
      goodArgNum = true;
      const pct = format.indexOf('%', i);
      const lasti = i;
      i = pct < 0 ? end : pct;
      if (i > lasti) this.buf += format.slice(lasti, i);
      if (i >= end) break;
      i++;
      this.f = noFlags();
      simple: for (; i < end; i++) {
        const c = format[i]!;
        switch (c) {
          case '#':
            this.f.sharp = true;
            break;
          case '0':
            this.f.zero = true;
            break;
          case '+':
            this.f.plus = true;
            break;
          case '-':
            this.f.minus = true;
            break;
          case ' ':
            this.f.space = true;
            break;
          default:
            if (c >= 'a' && c <= 'z' && argNum < a.length) {
              if (c === 'v' || c === 'w') this.vFlags();
              this.printArg(a[argNum]!, c);
              argNum++;
              i++;
              continue formatLoop;
            }
            break simple;
        }
      }
      [i, afterIndex] = argNumber(i);
      if (i < end && format[i] === '*') {
        i++;
        const r = intFromArg();
        this.f.wid = r.num;
        this.f.widPresent = r.ok;
        if (!r.ok) this.buf += '%!(BADWIDTH)';
        if (this.f.wid < 0) {
          this.f.wid = -this.f.wid;
          this.f.minus = true;
          this.f.zero = false;
        }
        afterIndex = false;
      } else {
        const r = parsenum(i);
        this.f.wid = r.num;
        this.f.widPresent = r.ok;
        i = r.next;
        if (afterIndex && this.f.widPresent) goodArgNum = false;
      }
      if (i + 1 < end && format[i] === '.') {
        i++;
        if (afterIndex) goodArgNum = false;
        [i, afterIndex] = argNumber(i);
        if (i < end && format[i] === '*') {
          i++;
          const r = intFromArg();
          this.f.prec = r.num;
          this.f.precPresent = r.ok;
          if (this.f.prec < 0) {
            this.f.prec = 0;
            this.f.precPresent = false;
          }
          if (!this.f.precPresent) this.buf += '%!(BADPREC)';
          afterIndex = false;
        } else {
          const r = parsenum(i);
          this.f.prec = r.num;
          this.f.precPresent = r.ok;
          i = r.next;
          if (!this.f.precPresent) {
            this.f.prec = 0;
            this.f.precPresent = true;
          }
        }
      }
      if (!afterIndex) [i, afterIndex] = argNumber(i);
      if (i >= end) {
        this.buf += '%!(NOVERB)';
        break;
      }
      const verb = String.fromCodePoint(format.codePointAt(i)!);
      i += verb.length;
      if (verb === '%') this.buf += '%';
      else if (!goodArgNum) this.buf += `%!${verb}(BADINDEX)`;
      else if (argNum >= a.length) this.buf += `%!${verb}(MISSING)`;
      else {
        if (verb === 'v' || verb === 'w') this.vFlags();
        this.printArg(a[argNum]!, verb);
        argNum++;
      }
    }
    if (!reordered && argNum < a.length) {
      this.f = noFlags();
      this.buf += '%!(EXTRA ';
      a.slice(argNum).forEach((arg, j) => {
        if (j > 0) this.buf += ', ';
        if (arg.t.kind === 'invalid' || (arg.t.kind === 'interface' && arg.v === null)) this.buf += '<nil>';
        else {
          this.buf += arg.t.name + '=';
          this.printArg(arg, 'v');
        }
      });
      this.buf += ')';
    }
  }

  vFlags(): void {
    this.f.sharpV = this.f.sharp;
    this.f.sharp = false;
    this.f.plusV = this.f.plus;
    this.f.plus = false;
  }
}

/** A printer's output, bounded like any string a template builds and charged for its size. */
function output(p: Printer): string {
  checkString(p.buf);
  spend(p.buf.length / UNITS_PER_STEP.native);
  return p.buf;
}

export function sprint(args: Value[]): string {
  const p = new Printer();
  p.doPrint(args);
  return output(p);
}

export function sprintln(args: Value[]): string {
  const p = new Printer();
  p.doPrintln(args);
  return output(p);
}

export function sprintf(format: string, args: Value[]): string {
  const p = new Printer();
  p.doPrintf(format, args);
  return output(p);
}

/** fmt.Sprint of one value, as %v. */
export function formatV(v: Value): string {
  return sprint([v]);
}


// The sprig v2.22.0 TxtFuncMap subset we provide, with sprig's exact Go signatures (so argument
// conversion errors match) and semantics, panics included. Deliberately absent: env/expandenv
// (refused, see REFUSED) and the non-hermetic functions (clock, randomness, network, keys).
import { createHash } from 'node:crypto';
import { fromGoBytes, goByteLen, goBytes } from './bytes.ts';
import { GoError, type FuncDef } from './exec.ts';
import { marshalIndentJSON, marshalJSON, JSONError } from './gojson.ts';
import { formatV, goQuote, sprintf } from './gofmt.ts';
import {
  abbreviateFull,
  deleteWhiteSpace,
  goReplaceAll,
  goSplitN,
  goTitle,
  goToLower,
  goToUpper,
  goTrim,
  goTrimSpace,
  initials,
  swapCase,
  toCamelCase,
  toKebabCase,
  toSnakeCase,
  uncapitalize,
  wrapCustom,
} from './gostrings.ts';
import { Builder, UNITS_PER_STEP, checkItems, checkLength, spend } from './limits.ts';
import { parseGoFloat } from './literals.ts';
import { joinURL, URLError, urlParts } from './neturl.ts';
import { compileOrPanicText, type GoRegexp } from './re2.ts';
import { compareVersions, parseVersion, semverCompare, SemverError, versionString, type Version } from './semver.ts';
import { withStringMethods } from './specials.ts';
import {
  NIL_ANY,
  T,
  T_MAP_ANY,
  T_MAP_STRING,
  T_SLICE_ANY,
  T_SLICE_STRING,
  anyMap,
  anySlice,
  asBig,
  asBool,
  asList,
  asMap,
  asNum,
  asStr,
  asStruct,
  bool,
  bytesOf,
  compareStrings,
  deref,
  float64,
  int,
  int64,
  isExported,
  isFloatKind,
  isIntKind,
  isTrue,
  isUintKind,
  isValid,
  lenOf,
  mapKey,
  ptrTo,
  sliceOf,
  sortedEntries,
  str,
  strSlice,
  type FuncSig,
  type GoType,
  type Method,
  type Value,
  zeroOf,
} from './values.ts';

/** A Go runtime panic inside a function; text/template reports it like a returned error. */
function panic(msg: string): never {
  throw new GoError(msg);
}
const NIL_DEREF = 'runtime error: invalid memory address or nil pointer dereference';

const isNilIface = (v: Value): boolean => !isValid(v) || (v.t.kind === 'interface' && v.v === null);

/** reflect.Kind's name, as sprig prints it in panics and kindOf. */
function kindName(v: Value): string {
  return isNilIface(v) ? 'invalid' : v.t.kind;
}

// ---------------------------------------------------------------- conversions

/** sprig strval: a string, []byte, a fmt.Stringer's String() (which may panic on nil), else %v. */
export function strval(v: Value): string {
  if (v.t === T.string) return asStr(v);
  if (v.t.kind === 'slice' && v.t.elem?.kind === 'uint8') return fromGoBytes(bytesOf(v));
  const ptr = v.t.kind === 'ptr';
  const t = ptr ? v.t.elem! : v.t;
  const target = ptr ? (v.v as Value | null) : v;
  if (ptr && t.ptrStringer) return t.ptrStringer(target);
  if (t.stringer) return target === null ? panic(NIL_DEREF) : t.stringer(target);
  return formatV(v);
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** Go's float64 -> int64 conversion (amd64: out of range and NaN give the minimum). */
function floatToInt64(f: number): bigint {
  if (!Number.isFinite(f) || f >= 2 ** 63 || f < -(2 ** 63)) return INT64_MIN;
  return BigInt(Math.trunc(f));
}

function derefPtr(v: Value): Value {
  return v.t.kind === 'ptr' && v.v !== null ? (v.v as Value) : v;
}

/**
 * A decimal integer (strconv's syntax), or null. Past 20 significant digits any stand-in out of
 * the int64 range will do, and is far cheaper than a BigInt of a megabyte of digits.
 */
function decimal(s: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  if (s.replace(/^[+-]?0*/, '').length <= 20) return BigInt(s);
  return s.startsWith('-') ? INT64_MIN - 1n : INT64_MAX + 1n;
}

/** strconv.ParseInt(s, 10, 64) with sprig's "0 on error". */
function parseInt10(s: string): bigint | null {
  const n = decimal(s);
  if (n === null || n > INT64_MAX || n < INT64_MIN) return null;
  return n;
}

export function toInt64(v: Value): bigint {
  if (v.t === T.string) return parseInt10(asStr(v)) ?? 0n;
  v = derefPtr(v);
  const k = v.t.kind;
  if (isIntKind(k)) return asBig(v);
  if (isUintKind(k)) return asBig(v) > INT64_MAX ? INT64_MAX : asBig(v);
  if (isFloatKind(k)) return floatToInt64(asNum(v));
  if (k === 'bool') return asBool(v) ? 1n : 0n;
  return 0n;
}

export function toFloat64(v: Value): number {
  if (v.t === T.string) {
    const s = asStr(v);
    // strconv.ParseFloat also accepts Go literal forms such as 0x1p4 and 1_000
    return /^[+-]?(inf|infinity|nan|[0-9._]+([eE][+-]?[0-9_]+)?|0[xX][0-9a-fA-F._]*[pP][+-]?[0-9_]+)$/i.test(s)
      ? (parseGoFloat(s) ?? 0)
      : 0;
  }
  v = derefPtr(v);
  const k = v.t.kind;
  if (isIntKind(k) || isUintKind(k)) return Number(asBig(v));
  if (isFloatKind(k)) return asNum(v);
  if (k === 'bool') return asBool(v) ? 1 : 0;
  return 0;
}

/** strconv.Atoi with sprig's ignored error: 0 on syntax errors, clamped on overflow. */
function atoi(s: string): bigint {
  const n = decimal(s) ?? 0n;
  return n > INT64_MAX ? INT64_MAX : n < INT64_MIN ? INT64_MIN : n;
}

function strslice(v: Value): string[] {
  spend(v.t.kind === 'slice' ? asList(v).length : 0);
  if (v.t === T_SLICE_STRING) return asList(v).map(asStr);
  if (v.t.kind === 'slice') return asList(v).filter((e) => !isNilIface(e)).map(strval);
  if (isNilIface(v)) return [];
  return [strval(v)];
}

// ---------------------------------------------------------------- reflection helpers

/** sprig's empty(). */
export function empty(v: Value): boolean {
  if (isNilIface(v)) return true;
  const k = v.t.kind;
  if (k === 'string') return asStr(v) === '';
  if (k === 'slice' || k === 'map') return lenOf(v) === 0;
  if (k === 'bool') return !asBool(v);
  if (isIntKind(k) || isUintKind(k)) return asBig(v) === 0n;
  if (isFloatKind(k)) return asNum(v) === 0;
  if (k === 'struct') return false;
  if (k === 'complex128') return !isTrue(v);
  return v.v === null;
}

/**
 * reflect.DeepEqual, a step for each pair of values it compares: lists that share structure
 * have far more paths than values, and uniq, without and has compare every pair of items.
 */
export function deepEqual(a: Value, b: Value): boolean {
  spend(1);
  if (isNilIface(a) || isNilIface(b)) return isNilIface(a) && isNilIface(b);
  if (a.t.name !== b.t.name) return false;
  switch (a.t.kind) {
    case 'slice': {
      if ((a.v === null) !== (b.v === null)) return false;
      const x = asList(a);
      const y = asList(b);
      // Go's shortcut: the same array is equal to itself without a look inside
      return x.length === y.length && (x === y || x.every((e, i) => deepEqual(e, y[i]!)));
    }
    case 'map': {
      if ((a.v === null) !== (b.v === null)) return false;
      const x = asMap(a);
      const y = asMap(b);
      if (x.size !== y.size) return false;
      if (x === y) return true;
      for (const [k, e] of x) {
        const f = y.get(mapKey(y, k));
        if (f === undefined || !deepEqual(e, f)) return false;
      }
      return true;
    }
    case 'string':
      // two strings of one length are compared character by character
      if (asStr(a).length === asStr(b).length) spend(asStr(a).length / UNITS_PER_STEP.native);
      return a.v === b.v;
    case 'ptr':
      return a.v === b.v || (a.v !== null && b.v !== null && deepEqual(a.v as Value, b.v as Value));
    case 'struct': {
      const x = asStruct(a);
      const y = asStruct(b);
      return (a.t.fields ?? []).every((f) => deepEqual(x[f.name]!, y[f.name]!));
    }
    case 'float32':
    case 'float64':
      return asNum(a) === asNum(b);
    default:
      return a.v === b.v;
  }
}

/** What a new Map costs before its first entry (some 300 bytes), in steps of copying. */
const NEW_MAP_STEPS = 4;

/**
 * copystructure.Copy, which sprig's deepCopy uses: it cannot set unexported fields, so they come
 * out zero, except in time.Time, which it copies whole. A step per value made, more for a map:
 * shared structure comes out a copy per path to it.
 */
function deepCopy(v: Value): Value {
  spend(1);
  switch (v.t.kind) {
    case 'slice':
      return v.v === null ? v : { t: v.t, v: asList(v).map(deepCopy) };
    case 'map': {
      if (v.v === null) return v;
      spend(NEW_MAP_STEPS);
      const m = new Map<string, Value>();
      for (const [k, e] of asMap(v)) m.set(mapKey(m, k), deepCopy(e));
      return { t: v.t, v: m };
    }
    case 'ptr':
      return v.v === null ? v : { t: v.t, v: deepCopy(v.v as Value) };
    case 'struct': {
      if (v.t.name === 'time.Time') return v;
      const rec = asStruct(v);
      return { t: v.t, v: Object.fromEntries((v.t.fields ?? []).map((f) => [f.name, isExported(f.name) ? deepCopy(rec[f.name] ?? zeroOf(f.type)) : zeroOf(f.type)])) };
    }
    default:
      return v;
  }
}

/** The elements of a slice argument, or sprig's panic for other kinds. */
function listArg(v: Value, what: string): Value[] {
  if (isNilIface(v)) panic(NIL_DEREF);
  if (v.t.kind !== 'slice') panic(what.replace('%s', kindName(v)));
  spend(asList(v).length);
  return asList(v).map((e) => (isValid(e) ? e : NIL_ANY));
}

// ---------------------------------------------------------------- strings

/** s[a:b] on the UTF-8 bytes with Go's bounds panics; b = null means len(s). */
function byteSlice(s: string, a: number, b: number | null): string {
  const bytes = goBytes(s);
  const len = bytes.length;
  const hi = b ?? len;
  if (hi < 0) panic(`runtime error: slice bounds out of range [:${hi}]`);
  if (hi > len) panic(`runtime error: slice bounds out of range [:${hi}] with length ${len}`);
  if (a < 0) panic(`runtime error: slice bounds out of range [${a}:]`);
  if (a > hi) panic(`runtime error: slice bounds out of range [${a}:${hi}]`);
  return fromGoBytes(bytes.subarray(a, hi));
}

function substring(start: number, end: number, s: string): string {
  if (start < 0) return byteSlice(s, 0, end);
  const len = goByteLen(s);
  if (end < 0 || end > len) return byteSlice(s, start, null);
  return byteSlice(s, start, end);
}

function splitMap(parts: string[]): Value {
  // A step per entry, more for the map, as deepCopy charges a map it makes: a split into many
  // parts was free, and a loop of them held a worker three times as long as ordinary work.
  spend(NEW_MAP_STEPS + parts.length);
  return { t: T_MAP_STRING, v: new Map(parts.map((p, i) => [`_${i}`, str(p)])) };
}

function b32decode(s: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  if (s.length % 8 !== 0) return `illegal base32 data at input byte ${Math.floor(s.length / 8) * 8}`;
  spend(s.length / UNITS_PER_STEP.looped);
  let bits = 0;
  let acc = 0;
  const out: number[] = [];
  const body = trimTrailing(s, '=');
  const padLen = s.length - body.length;
  if (![0, 1, 3, 4, 6].includes(padLen)) return `illegal base32 data at input byte ${body.length}`;
  for (let i = 0; i < body.length; i++) {
    const v = alphabet.indexOf(body[i]!);
    if (v < 0) return `illegal base32 data at input byte ${i}`;
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
  }
  return fromGoBytes(Uint8Array.from(out));
}

function b64decode(s: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) {
    const bad = [...s].findIndex((c, i) => !/[A-Za-z0-9+/=]/.test(c) || (c === '=' && i < s.length - 2));
    const at = bad >= 0 ? bad : Math.floor(s.length / 4) * 4;
    return `illegal base64 data at input byte ${at}`;
  }
  return fromGoBytes(Buffer.from(s, 'base64'));
}

function adler32(s: string): number {
  spend(s.length / UNITS_PER_STEP.looped);
  let a = 1;
  let b = 0;
  for (const byte of goBytes(s)) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

// ---------------------------------------------------------------- path

function pathClean(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  // a step per element; runs of slashes are one separator
  const parts = p.split(/\/+/);
  spend(parts.length);
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!rooted) out.push('..');
    } else out.push(part);
  }
  const s = (rooted ? '/' : '') + out.join('/');
  return s === '' ? '.' : s;
}

/** `s` without its trailing run of `c`; /c+$/ would retry the run from each of its characters. */
function trimTrailing(s: string, c: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === c) end--;
  return s.slice(0, end);
}

function pathBase(p: string): string {
  if (p === '') return '.';
  p = trimTrailing(p, '/');
  if (p === '') return '/';
  return p.slice(p.lastIndexOf('/') + 1);
}

function pathDir(p: string): string {
  return pathClean(p.slice(0, p.lastIndexOf('/') + 1));
}

function pathExt(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

// ---------------------------------------------------------------- regex

function mustCompile(expr: string): GoRegexp {
  const r = compileOrPanicText(expr);
  if (typeof r === 'string') panic(r);
  return r;
}

const nilStrings = (xs: string[] | null): Value => (xs === null ? { t: T_SLICE_STRING, v: null } : strSlice(xs));

// ---------------------------------------------------------------- dicts

/** mergo.Merge / MergeWithOverwrite of map[string]interface{} values (deep for nested maps). */
function mergeMaps(dst: Map<string, Value>, src: Map<string, Value>, overwrite: boolean): void {
  spend(src.size);
  for (const [k, sv] of src) {
    const dv = dst.get(mapKey(dst, k));
    if (dv !== undefined && dv.t === T_MAP_ANY && sv.t === T_MAP_ANY && dv.v !== null && sv.v !== null) {
      mergeMaps(asMap(dv), asMap(sv), overwrite);
    } else if (dv === undefined || empty(dv) || (overwrite && !empty(sv))) {
      dst.set(mapKey(dst, k), sv);
    }
  }
}

// ---------------------------------------------------------------- registry

const A = T.any;
const S = T.string;
const I = T.int;
const SLICE_INT = sliceOf(T.int);

function def(params: GoType[], result: GoType, fn: (args: Value[]) => Value, extra: Partial<FuncSig> = {}): FuncDef {
  return { sig: { params, result, ...extra }, fn };
}
const variadic = (params: GoType[], rest: GoType, result: GoType, fn: (args: Value[]) => Value): FuncDef =>
  def(params, result, fn, { variadic: rest });
const s1 = (f: (s: string) => string): FuncDef => def([S], S, ([a]) => str(f(asStr(a!))));
const s2 = (f: (a: string, b: string) => string): FuncDef => def([S, S], S, ([a, b]) => str(f(asStr(a!), asStr(b!))));
const pred2 = (f: (a: string, b: string) => boolean): FuncDef => def([S, S], T.bool, ([a, b]) => bool(f(asStr(a!), asStr(b!))));
const num = (b: Value): number => Number(asBig(b));

function divide(a: bigint, b: bigint, mod: boolean): bigint {
  if (b === 0n) panic('runtime error: integer divide by zero');
  if (a === INT64_MIN && b === -1n) return mod ? 0n : INT64_MIN;
  return mod ? a % b : a / b;
}

function untilStep(start: number, stop: number, step: number): Value {
  if (stop < start && step < 0) checkItems(Math.ceil((start - stop) / -step));
  else if (start < stop && step > 0) checkItems(Math.ceil((stop - start) / step));
  const v: number[] = [];
  if (stop < start) {
    if (step < 0) for (let i = start; i > stop; i += step) v.push(i);
  } else if (step > 0) {
    for (let i = start; i < stop; i += step) v.push(i);
  }
  return { t: SLICE_INT, v: v.map(int) };
}

function round(a: Value, p: Value, rest: Value[]): Value {
  const roundOn = rest.length > 0 ? asNum(rest[0]!) : 0.5;
  const val = toFloat64(a);
  const pow = Math.pow(10, Number(asBig(p)));
  const digit = pow * val;
  const frac = digit - Math.trunc(digit);
  return float64((frac >= roundOn ? Math.ceil(digit) : Math.floor(digit)) / pow);
}

function typeName(v: Value): string {
  return isNilIface(v) ? '<nil>' : v.t.name;
}

function jsonOrEmpty(f: (v: Value) => string, v: Value): Value {
  try {
    return str(f(v));
  } catch (e) {
    if (e instanceof JSONError) return str('');
    throw e;
  }
}

/** strings.Join, failing as soon as the result would be too big. */
function joinChecked(parts: string[], sep: string): string {
  checkLength(parts.reduce((n, p) => n + p.length, 0) + sep.length * Math.max(parts.length - 1, 0));
  return parts.join(sep);
}

/** quote and squote: the arguments that are not nil, each quoted, stopping once too big. */
function quoteEach(args: Value[], quoted: (v: Value) => string): Value {
  const out = new Builder();
  args.filter((x) => !isNilIface(x)).forEach((x, i) => out.add((i > 0 ? ' ' : '') + quoted(x)));
  return str(out.toString());
}

// ---------------------------------------------------------------- semver

/** A returned Go error of semver (not a panic): the call fails with its text. */
function semverResult<R>(f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (e instanceof SemverError) throw new GoError(e.message);
    throw e;
  }
}

const VERSION_FIELDS = ['major', 'minor', 'patch', 'pre', 'metadata', 'original'] as const;

function versionOf(recv: Value): Version {
  if (recv.v === null) panic(NIL_DEREF);
  const r = asStruct(recv);
  return { major: asBig(r['major']!), minor: asBig(r['minor']!), patch: asBig(r['patch']!), pre: asStr(r['pre']!), metadata: asStr(r['metadata']!), original: asStr(r['original']!) };
}

function versionValue(v: Version): Value {
  return {
    t: VERSION,
    v: Object.fromEntries(VERSION_FIELDS.map((k) => [k, typeof v[k] === 'bigint' ? int64(v[k]) : str(v[k])])),
  };
}

const vMethod = (result: GoType, fn: (v: Version, args: Value[]) => Value, params: GoType[] = [], ptr = true): Method => ({
  ptr,
  sig: { params, result },
  fn: (recv, args) => fn(versionOf(recv), args),
});

/** Version methods returning a changed copy; `original` keeps a leading v. */
function bumped(v: Version, change: Partial<Version>): Value {
  const next = { ...v, pre: '', metadata: '', ...change };
  return versionValue({ ...next, original: (v.original.startsWith('v') ? 'v' : '') + versionString(next) });
}

const VALID_PRERELEASE = /^([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)$/;

/** *semver.Version, which sprig's semver returns, with the methods templates can call. */
const VERSION: GoType = withStringMethods({
  kind: 'struct',
  name: 'semver.Version',
  named: true,
  fields: VERSION_FIELDS.map((name) => ({ name, type: name === 'major' || name === 'minor' || name === 'patch' ? T.int64 : T.string, json: '' })),
  ptrStringer: (recv) => (recv === null ? '<nil>' : versionString(versionOf(recv))),
});
const VERSION_PTR = ptrTo(VERSION);
// MarshalJSON is declared on *Version, so only the pointer marshals as its string.
VERSION_PTR.marshalJSON = (v) => (v.v === null ? 'null' : JSON.stringify(versionString(versionOf(deref(v)))));
const cmpArg = (f: (c: number) => Value): ((v: Version, args: Value[]) => Value) => (v, [o]) => f(compareVersions(v, versionOf(deref(o!))));
VERSION.methods = new Map<string, Method>([
  ...(VERSION.methods ?? []),
  ['Original', vMethod(S, (v) => str(v.original))],
  ['Major', vMethod(T.int64, (v) => int64(v.major))],
  ['Minor', vMethod(T.int64, (v) => int64(v.minor))],
  ['Patch', vMethod(T.int64, (v) => int64(v.patch))],
  ['Prerelease', vMethod(S, (v) => str(v.pre))],
  ['Metadata', vMethod(S, (v) => str(v.metadata))],
  ['LessThan', vMethod(T.bool, cmpArg((c) => bool(c < 0)), [VERSION_PTR])],
  ['GreaterThan', vMethod(T.bool, cmpArg((c) => bool(c > 0)), [VERSION_PTR])],
  ['Equal', vMethod(T.bool, cmpArg((c) => bool(c === 0)), [VERSION_PTR])],
  ['Compare', vMethod(I, cmpArg((c) => int(c)), [VERSION_PTR])],
  ['IncPatch', vMethod(VERSION, (v) => bumped(v, v.pre === '' ? { patch: v.patch + 1n } : {}), [], false)],
  ['IncMinor', vMethod(VERSION, (v) => bumped(v, { patch: 0n, minor: v.minor + 1n }), [], false)],
  ['IncMajor', vMethod(VERSION, (v) => bumped(v, { patch: 0n, minor: 0n, major: v.major + 1n }), [], false)],
  ['SetPrerelease', vMethod(VERSION, (v, [p]) => setPart(v, 'pre', asStr(p!), 'Invalid Prerelease string'), [S], false)],
  ['SetMetadata', vMethod(VERSION, (v, [m]) => setPart(v, 'metadata', asStr(m!), 'Invalid Metadata string'), [S], false)],
]);

function setPart(v: Version, part: 'pre' | 'metadata', value: string, invalid: string): Value {
  if (value !== '' && !VALID_PRERELEASE.test(value)) throw new GoError(invalid);
  const next = { ...v, [part]: value };
  return versionValue({ ...next, original: (v.original.startsWith('v') ? 'v' : '') + versionString(next) });
}

// ---------------------------------------------------------------- urls

// net/url parses and escapes character by character, each looked up.

function urlParse(s: string): Value {
  spend(s.length / UNITS_PER_STEP.lookedUp);
  let parts: Record<string, string>;
  try {
    parts = urlParts(s);
  } catch (e) {
    if (e instanceof URLError) panic(`unable to parse url: ${e.message}`);
    throw e;
  }
  return anyMap(new Map(Object.entries(parts).map(([k, v]) => [k, str(v)])));
}

function urlJoin(d: Map<string, Value>): string {
  const get = (key: string): string => {
    const v = d.get(key);
    if (v === undefined) return '';
    if (isNilIface(v)) panic(NIL_DEREF);
    if (v.t.kind !== 'string') panic(`unable to parse ${key} key, must be of type string, but ${kindName(v)} found`);
    return asStr(v);
  };
  const parts = {
    scheme: get('scheme'),
    host: get('host'),
    path: get('path'),
    query: get('query'),
    opaque: get('opaque'),
    fragment: get('fragment'),
    userinfo: get('userinfo'),
  };
  spend(Object.values(parts).reduce((n, p) => n + p.length, 0) / UNITS_PER_STEP.lookedUp);
  try {
    return joinURL(parts);
  } catch (e) {
    if (e instanceof URLError) panic(`unable to parse userinfo in dict: ${e.message}`);
    throw e;
  }
}

const LIST_FNS: ReadonlyArray<[string, (l: Value[]) => Value, string]> = [
  ['first', (l) => l[0] ?? NIL_ANY, 'Cannot find first on type %s'],
  ['last', (l) => l[l.length - 1] ?? NIL_ANY, 'Cannot find last on type %s'],
  ['rest', (l) => (l.length === 0 ? { t: T_SLICE_ANY, v: null } : anySlice(l.slice(1))), 'Cannot find rest on type %s'],
  ['initial', (l) => (l.length === 0 ? { t: T_SLICE_ANY, v: null } : anySlice(l.slice(0, -1))), 'Cannot find initial on type %s'],
  ['reverse', (l) => anySlice([...l].reverse()), 'Cannot find reverse on type %s'],
  ['compact', (l) => anySlice(l.filter((e) => !empty(e))), 'Cannot compact on type %s'],
  ['uniq', (l) => anySlice(l.filter((e, i) => l.findIndex((x) => deepEqual(x, e)) === i)), 'Cannot find uniq on type %s'],
];

const entries: [string, FuncDef][] = [
  ['hello', def([], S, () => str('Hello!'))],
  ['abbrev', def([I, S], S, ([w, s]) => str(num(w!) < 4 ? asStr(s!) : (abbreviateFull(asStr(s!), 0, num(w!)) ?? '')))],
  [
    'abbrevboth',
    def([I, I, S], S, ([l, r, s]) => {
      const left = num(l!);
      const right = num(r!);
      if (right < 4 || (left > 0 && right < 7)) return s!;
      return str(abbreviateFull(asStr(s!), left, right) ?? '');
    }),
  ],
  ['trunc', def([I, S], S, ([c, s]) => (goByteLen(asStr(s!)) <= num(c!) ? s! : str(byteSlice(asStr(s!), 0, num(c!)))))],
  ['trim', s1(goTrimSpace)],
  ['upper', s1(goToUpper)],
  ['lower', s1(goToLower)],
  ['title', s1(goTitle)],
  ['untitle', s1(uncapitalize)],
  ['substr', def([I, I, S], S, ([a, b, s]) => str(substring(num(a!), num(b!), asStr(s!))))],
  [
    'repeat',
    def([I, S], S, ([c, s]) => {
      if (num(c!) < 0) panic('strings: negative Repeat count');
      checkLength(num(c!) * asStr(s!).length);
      return str(asStr(s!).repeat(num(c!)));
    }),
  ],
  ['trimall', s2((a, b) => goTrim(b, a))],
  ['trimAll', s2((a, b) => goTrim(b, a))],
  ['trimSuffix', s2((a, b) => (a !== '' && b.endsWith(a) ? b.slice(0, b.length - a.length) : b))],
  ['trimPrefix', s2((a, b) => (b.startsWith(a) ? b.slice(a.length) : b))],
  ['nospace', s1(deleteWhiteSpace)],
  ['initials', s1(initials)],
  ['swapcase', s1(swapCase)],
  ['snakecase', s1(toSnakeCase)],
  ['camelcase', s1(toCamelCase)],
  ['kebabcase', s1(toKebabCase)],
  ['wrap', def([I, S], S, ([l, s]) => str(wrapCustom(asStr(s!), num(l!), '', false)))],
  ['wrapWith', def([I, S, S], S, ([l, sep, s]) => str(wrapCustom(asStr(s!), num(l!), asStr(sep!), true)))],
  ['contains', pred2((sub, s) => s.includes(sub))],
  ['hasPrefix', pred2((p, s) => s.startsWith(p))],
  ['hasSuffix', pred2((p, s) => s.endsWith(p))],
  ['quote', variadic([], A, S, (a) => quoteEach(a, (x) => goQuote(strval(x))))],
  ['squote', variadic([], A, S, (a) => quoteEach(a, (x) => `'${formatV(x)}'`))],
  [
    'cat',
    variadic([], A, S, (a) => {
      const v = a.filter((x) => !isNilIface(x));
      return str(sprintf(v.map(() => '%v').join(' '), v));
    }),
  ],
  ['indent', def([I, S], S, ([n, s]) => str(indent(num(n!), asStr(s!))))],
  ['nindent', def([I, S], S, ([n, s]) => str('\n' + indent(num(n!), asStr(s!))))],
  ['replace', def([S, S, S], S, ([o, n, s]) => str(goReplaceAll(asStr(s!), asStr(o!), asStr(n!))))],
  ['plural', def([S, S, I], S, ([one, many, c]) => (asBig(c!) === 1n ? one! : many!))],
  ['sha1sum', s1((s) => createHash('sha1').update(goBytes(s)).digest('hex'))],
  ['sha256sum', s1((s) => createHash('sha256').update(goBytes(s)).digest('hex'))],
  ['adler32sum', s1((s) => String(adler32(s)))],
  ['toString', def([A], S, ([v]) => str(strval(v!)))],
  ['atoi', def([S], I, ([s]) => int(atoi(asStr(s!))))],
  ['int64', def([A], T.int64, ([v]) => int64(toInt64(v!)))],
  ['int', def([A], I, ([v]) => int(toInt64(v!)))],
  ['float64', def([A], T.float64, ([v]) => float64(toFloat64(v!)))],
  ['toDecimal', def([A], T.int64, ([v]) => int64(parseOctal(formatV(v!))))],
  ['split', s2ToValue((sep, s) => splitMap(goSplitN(s, sep, -1)))],
  ['splitList', s2ToValue((sep, s) => strSlice(goSplitN(s, sep, -1)))],
  ['splitn', def([S, I, S], T_MAP_STRING, ([sep, n, s]) => splitMap(goSplitN(asStr(s!), asStr(sep!), num(n!))))],
  ['toStrings', def([A], T_SLICE_STRING, ([v]) => strSlice(strslice(v!)))],
  ['until', def([I], SLICE_INT, ([c]) => untilStep(0, num(c!), num(c!) < 0 ? -1 : 1))],
  ['untilStep', def([I, I, I], SLICE_INT, ([a, b, c]) => untilStep(num(a!), num(b!), num(c!)))],
  ['add1', def([A], T.int64, ([v]) => int64(toInt64(v!) + 1n))],
  ['add', variadic([], A, T.int64, (a) => int64(a.reduce((s, v) => s + toInt64(v), 0n)))],
  ['sub', def([A, A], T.int64, ([a, b]) => int64(toInt64(a!) - toInt64(b!)))],
  ['div', def([A, A], T.int64, ([a, b]) => int64(divide(toInt64(a!), toInt64(b!), false)))],
  ['mod', def([A, A], T.int64, ([a, b]) => int64(divide(toInt64(a!), toInt64(b!), true)))],
  ['mul', variadic([A], A, T.int64, ([a, ...r]) => int64(r.reduce((s, v) => BigInt.asIntN(64, s * toInt64(v)), toInt64(a!))))],
  ['biggest', variadic([A], A, T.int64, ([a, ...r]) => int64(r.map(toInt64).reduce((m, x) => (x > m ? x : m), toInt64(a!))))],
  ['max', variadic([A], A, T.int64, ([a, ...r]) => int64(r.map(toInt64).reduce((m, x) => (x > m ? x : m), toInt64(a!))))],
  ['min', variadic([A], A, T.int64, ([a, ...r]) => int64(r.map(toInt64).reduce((m, x) => (x < m ? x : m), toInt64(a!))))],
  ['ceil', def([A], T.float64, ([a]) => float64(Math.ceil(toFloat64(a!))))],
  ['floor', def([A], T.float64, ([a]) => float64(Math.floor(toFloat64(a!))))],
  ['round', def([A, I], T.float64, ([a, p, ...r]) => round(a!, p!, r), { variadic: T.float64 })],
  ['join', def([S, A], S, ([sep, v]) => str(joinChecked(strslice(v!), asStr(sep!))))],
  [
    'sortAlpha',
    def([A], T_SLICE_STRING, ([v]) => {
      if (derefPtr(v!).t.kind === 'slice') return strSlice(strslice(v!).sort(compareStrings));
      return strSlice([strval(v!)]);
    }),
  ],
  ['default', variadic([A], A, A, ([d, ...g]) => (g.length === 0 || empty(g[0]!) ? d! : g[0]!))],
  ['empty', def([A], T.bool, ([v]) => bool(empty(v!)))],
  ['coalesce', variadic([], A, A, (a) => a.find((v) => !empty(v)) ?? NIL_ANY)],
  ['deepCopy', def([A], A, ([v]) => deepCopy(v!))],
  ['toJson', def([A], S, ([v]) => jsonOrEmpty(marshalJSON, v!))],
  ['toPrettyJson', def([A], S, ([v]) => jsonOrEmpty(marshalIndentJSON, v!))],
  ['ternary', def([A, A, T.bool], A, ([t, f, c]) => (asBool(c!) ? t! : f!))],
  ['typeOf', def([A], S, ([v]) => str(typeName(v!)))],
  ['typeIs', def([S, A], T.bool, ([t, v]) => bool(asStr(t!) === typeName(v!)))],
  ['typeIsLike', def([S, A], T.bool, ([t, v]) => bool(asStr(t!) === typeName(v!) || '*' + asStr(t!) === typeName(v!)))],
  ['kindOf', def([A], S, ([v]) => str(kindName(v!)))],
  ['kindIs', def([S, A], T.bool, ([t, v]) => bool(asStr(t!) === kindName(v!)))],
  ['deepEqual', def([A, A], T.bool, ([a, b]) => bool(deepEqual(a!, b!)))],
  ['base', s1(pathBase)],
  ['dir', s1(pathDir)],
  ['clean', s1(pathClean)],
  ['ext', s1(pathExt)],
  ['isAbs', def([S], T.bool, ([p]) => bool(asStr(p!).startsWith('/')))],
  ['b64enc', s1((s) => Buffer.from(goBytes(s)).toString('base64'))],
  ['b64dec', s1(b64decode)],
  ['b32enc', s1(b32encode)],
  ['b32dec', s1(b32decode)],
  ['tuple', variadic([], A, T_SLICE_ANY, (a) => anySlice(a))],
  ['list', variadic([], A, T_SLICE_ANY, (a) => anySlice(a))],
  [
    'dict',
    variadic([], A, T_MAP_ANY, (a) => {
      const m = new Map<string, Value>();
      for (let i = 0; i < a.length; i += 2) m.set(mapKey(m, strval(a[i]!)), i + 1 < a.length ? a[i + 1]! : str(''));
      return anyMap(m);
    }),
  ],
  ['set', def([T_MAP_ANY, S, A], T_MAP_ANY, ([d, k, v]) => (asMap(d!).set(mapKey(asMap(d!), asStr(k!)), v!), d!))],
  ['unset', def([T_MAP_ANY, S], T_MAP_ANY, ([d, k]) => (asMap(d!).delete(mapKey(asMap(d!), asStr(k!))), d!))],
  ['hasKey', def([T_MAP_ANY, S], T.bool, ([d, k]) => bool(asMap(d!).has(mapKey(asMap(d!), asStr(k!)))))],
  [
    'pluck',
    variadic([S], T_MAP_ANY, T_SLICE_ANY, ([k, ...ds]) =>
      anySlice(ds.flatMap((d) => asMap(d).get(mapKey(asMap(d), asStr(k!))) ?? [])),
    ),
  ],
  // Go ranges over the maps in random order; we answer sorted.
  [
    'keys',
    variadic([], T_MAP_ANY, T_SLICE_STRING, (ds) => {
      checkItems(ds.reduce((n, d) => n + lenOf(d), 0));
      return strSlice(ds.flatMap((d) => sortedEntries(asMap(d)).map(([k]) => k)));
    }),
  ],
  ['values', def([T_MAP_ANY], T_SLICE_ANY, ([d]) => anySlice(sortedEntries(asMap(d!)).map(([, e]) => e)))],
  [
    'pick',
    variadic([T_MAP_ANY], S, T_MAP_ANY, ([d, ...ks]) => {
      const m = asMap(d!);
      const picked = new Map<string, Value>();
      for (const k of ks.map(asStr)) {
        const e = m.get(mapKey(m, k));
        if (e !== undefined) picked.set(mapKey(picked, k), e);
      }
      return anyMap(picked);
    }),
  ],
  [
    'omit',
    variadic([T_MAP_ANY], S, T_MAP_ANY, ([d, ...ks]) => {
      const drop = new Set(ks.map(asStr));
      const kept = new Map<string, Value>();
      for (const [k, e] of asMap(d!)) if (!drop.has(mapKey(drop, k))) kept.set(mapKey(kept, k), e);
      return anyMap(kept);
    }),
  ],
  ['merge', variadic([T_MAP_ANY], T_MAP_ANY, A, ([d, ...ss]) => mergeInto(d!, ss, false))],
  ['mergeOverwrite', variadic([T_MAP_ANY], T_MAP_ANY, A, ([d, ...ss]) => mergeInto(d!, ss, true))],
  ['append', def([A, A], T_SLICE_ANY, ([l, v]) => anySlice([...listArg(l!, 'Cannot push on type %s'), v!]))],
  ['push', def([A, A], T_SLICE_ANY, ([l, v]) => anySlice([...listArg(l!, 'Cannot push on type %s'), v!]))],
  ['prepend', def([A, A], T_SLICE_ANY, ([l, v]) => anySlice([v!, ...listArg(l!, 'Cannot prepend on type %s')]))],
  ...LIST_FNS.map(([name, f, msg]): [string, FuncDef] => [name, def([A], name === 'first' || name === 'last' ? A : T_SLICE_ANY, ([l]) => f(listArg(l!, msg)))]),
  [
    'without',
    variadic([A], A, T_SLICE_ANY, ([l, ...omit]) => anySlice(listArg(l!, 'Cannot find without on type %s').filter((e) => !omit.some((o) => deepEqual(o, e))))),
  ],
  [
    'has',
    def([A, A], T.bool, ([needle, hay]) => {
      if (isNilIface(hay!)) return bool(false);
      return bool(listArg(hay!, 'Cannot find has on type %s').some((e) => deepEqual(needle!, e)));
    }),
  ],
  ['slice', variadic([A], A, A, ([l, ...idx]) => sliceList(l!, idx))],
  [
    'concat',
    variadic([], A, A, (ls) => {
      checkItems(ls.reduce((n, l) => n + (l.t.kind === 'slice' ? asList(l).length : 0), 0));
      const out = ls.flatMap((l) => listArg(l, 'Cannot concat type %s as list'));
      return out.length === 0 ? { t: T_SLICE_ANY, v: null } : anySlice(out);
    }),
  ],
  ['fail', def([S], S, ([m]) => panic(asStr(m!)))],
  [
    'regexMatch',
    def([S, S], T.bool, ([re, s]) => {
      const r = compileOrPanicText(asStr(re!));
      return bool(typeof r !== 'string' && r.matchString(asStr(s!)));
    }),
  ],
  ['regexFindAll', def([S, S, I], T_SLICE_STRING, ([re, s, n]) => nilStrings(mustCompile(asStr(re!)).findAllString(asStr(s!), num(n!))))],
  ['regexFind', def([S, S], S, ([re, s]) => str(mustCompile(asStr(re!)).findString(asStr(s!))))],
  ['regexReplaceAll', def([S, S, S], S, ([re, s, r]) => str(mustCompile(asStr(re!)).replaceAllString(asStr(s!), asStr(r!))))],
  ['regexReplaceAllLiteral', def([S, S, S], S, ([re, s, r]) => str(mustCompile(asStr(re!)).replaceAllLiteralString(asStr(s!), asStr(r!))))],
  ['regexSplit', def([S, S, I], T_SLICE_STRING, ([re, s, n]) => nilStrings(mustCompile(asStr(re!)).split(asStr(s!), num(n!))))],
  ['semver', def([S], VERSION_PTR, ([v]) => ({ t: VERSION_PTR, v: versionValue(semverResult(() => parseVersion(asStr(v!)))) }))],
  ['semverCompare', def([S, S], T.bool, ([c, v]) => bool(semverResult(() => semverCompare(asStr(c!), asStr(v!)))))],
  ['urlParse', def([S], T_MAP_ANY, ([u]) => urlParse(asStr(u!)))],
  ['urlJoin', def([T_MAP_ANY], S, ([d]) => str(urlJoin(asMap(d!))))],
];

function s2ToValue(f: (a: string, b: string) => Value): FuncDef {
  const result = f('', '').t;
  return def([S, S], result, ([a, b]) => f(asStr(a!), asStr(b!)));
}

/** strconv.ParseInt(s, 8, 64) with sprig's "0 on error". */
function parseOctal(s: string): bigint {
  const m = /^([+-]?)([0-7]+)$/.exec(s);
  if (!m) return 0n;
  const n = (m[1] === '-' ? -1n : 1n) * BigInt('0o' + m[2]!);
  return n > INT64_MAX || n < INT64_MIN ? 0n : n;
}

function indent(n: number, s: string): string {
  if (n < 0) panic('strings: negative Repeat count');
  // each line gets a pad: a step a line, and the size known before it is built
  let lines = 1;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) lines++;
  spend(lines);
  checkLength(s.length + n * lines);
  const pad = ' '.repeat(n);
  return pad + s.replaceAll('\n', '\n' + pad);
}

function b32encode(s: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bytes = goBytes(s);
  spend(bytes.length / UNITS_PER_STEP.looped);
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(acc >> bits) & 31];
    }
  }
  if (bits > 0) out += alphabet[(acc << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

function mergeInto(dst: Value, srcs: Value[], overwrite: boolean): Value {
  for (const s of srcs) mergeMaps(asMap(dst), asMap(s), overwrite);
  return dst;
}

/** sprig's slice: l2.Slice(start, end) with reflect's bound panics. */
function sliceList(l: Value, idx: Value[]): Value {
  if (isNilIface(l)) panic(NIL_DEREF);
  if (l.t.kind !== 'slice') panic(`list should be type of slice or array but ${kindName(l)}`);
  const items = asList(l);
  if (items.length === 0) return NIL_ANY;
  const start = idx.length > 0 ? Number(toInt64(idx[0]!)) : 0;
  const end = idx.length < 2 ? items.length : Number(toInt64(idx[1]!));
  if (start < 0 || end < start || end > items.length) panic('reflect.Value.Slice: slice index out of bounds');
  return { t: l.t, v: items.slice(start, end) };
}

export const SPRIG: ReadonlyMap<string, FuncDef> = new Map(entries);

/** Functions refused outright: they would expose the controller's environment. */
export const REFUSED: ReadonlyMap<string, string> = new Map([
  ['env', 'templates must not read the controller environment'],
  ['expandenv', 'templates must not read the controller environment'],
]);

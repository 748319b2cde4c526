// The Go value model the engine executes on: a small reflect. Every value carries its Go type,
// so int vs int64 vs float64, named string types, nil pointers/maps/interfaces and
// pointer-receiver methods behave as they do under Go's text/template.

import { compareGo, fromJSON as goString } from '../strings.ts';
import { goByteLen } from './bytes.ts';
import { spend, UNITS_PER_STEP } from './limits.ts';

export type Kind =
  | 'invalid'
  | 'bool'
  | 'int'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'uintptr'
  | 'float32'
  | 'float64'
  | 'complex128'
  | 'string'
  | 'slice'
  | 'map'
  | 'ptr'
  | 'struct'
  | 'interface'
  | 'func';

export interface StructField {
  name: string;
  type: GoType;
  embedded?: boolean;
  /** The json struct tag, e.g. "metadata,omitempty" or ",inline". */
  json?: string;
}

export interface Method {
  /** Declared on the pointer receiver: callable only through a pointer or addressable value. */
  ptr: boolean;
  sig: FuncSig;
  fn: (recv: Value, args: Value[]) => Value;
}

/** A Go function signature; results are one value, optionally followed by an error. */
export interface FuncSig {
  params: GoType[];
  /** Element type of a trailing ...T parameter. */
  variadic?: GoType;
  result: GoType;
}

export interface GoType {
  kind: Kind;
  /** The type as %T prints it; also its identity (two types are identical iff names match). */
  name: string;
  /** True for defined (named) types such as int64, string, types.UID, v1alpha1.Cluster. */
  named: boolean;
  elem?: GoType;
  key?: GoType;
  fields?: StructField[];
  methods?: Map<string, Method>;
  /** fmt.Stringer, as String() on the value receiver. */
  stringer?: (v: Value) => string;
  /**
   * String() declared on the pointer receiver: fmt uses it for *T, text/template also for an
   * addressable T. `recv` is the pointee, null for a nil pointer (which such methods may accept).
   */
  ptrStringer?: (recv: Value | null) => string;
  /** fmt.GoStringer, which %#v uses. */
  goStringer?: (v: Value) => string;
  /** json.Marshaler. */
  marshalJSON?: (v: Value) => string;
}

/**
 * A Go value. `v` by kind: bool boolean; integers bigint; floats number; string string;
 * complex128 [re, im]; slice Value[] | null; map Map<string, Value> | null; ptr Value | null (the pointee);
 * struct Record<string, Value>; interface null (only the nil interface is ever boxed: a
 * non-nil interface is represented by its dynamic value); func values do not occur in our data.
 */
export interface Value {
  t: GoType;
  v: unknown;
  /** Reachable through a pointer or slice, so pointer-receiver methods apply. */
  addr?: boolean;
  /** Read from an interface{} map entry or slice element and not yet through a pipeline. */
  iface?: boolean;
}

function basic(kind: Kind, name = kind as string): GoType {
  return { kind, name, named: true };
}

export const T = {
  bool: basic('bool'),
  int: basic('int'),
  int8: basic('int8'),
  int16: basic('int16'),
  int32: basic('int32'),
  int64: basic('int64'),
  uint: basic('uint'),
  uint8: basic('uint8'),
  uint16: basic('uint16'),
  uint32: basic('uint32'),
  uint64: basic('uint64'),
  uintptr: basic('uintptr'),
  float32: basic('float32'),
  float64: basic('float64'),
  complex128: basic('complex128'),
  string: basic('string'),
  any: { kind: 'interface', name: 'interface {}', named: false } as GoType,
  /** Builtins take reflect.Value: any operand is accepted unconverted, even an invalid one. */
  reflectValue: { kind: 'struct', name: 'reflect.Value', named: true, fields: [] } as GoType,
  invalid: { kind: 'invalid', name: '<nil>', named: false } as GoType,
};

// Composite types are cached by their element's identity, not their name: distinct Go types can
// share a %T name (apps/v1beta1.Deployment and extensions/v1beta1.Deployment both print
// v1beta1.Deployment).
const sliceTypes = new WeakMap<GoType, GoType>();
export function sliceOf(elem: GoType): GoType {
  let t = sliceTypes.get(elem);
  if (!t) {
    t = { kind: 'slice', name: `[]${elem.name}`, named: false, elem };
    sliceTypes.set(elem, t);
  }
  return t;
}

const mapTypes = new WeakMap<GoType, WeakMap<GoType, GoType>>();
export function mapOf(key: GoType, elem: GoType): GoType {
  let byElem = mapTypes.get(key);
  if (!byElem) {
    byElem = new WeakMap();
    mapTypes.set(key, byElem);
  }
  let t = byElem.get(elem);
  if (!t) {
    t = { kind: 'map', name: `map[${key.name}]${elem.name}`, named: false, key, elem };
    byElem.set(elem, t);
  }
  return t;
}

const ptrTypes = new WeakMap<GoType, GoType>();
export function ptrTo(elem: GoType): GoType {
  let t = ptrTypes.get(elem);
  if (!t) {
    t = { kind: 'ptr', name: `*${elem.name}`, named: false, elem };
    ptrTypes.set(elem, t);
  }
  return t;
}

export const T_SLICE_ANY = sliceOf(T.any);
export const T_SLICE_STRING = sliceOf(T.string);
export const T_MAP_ANY = mapOf(T.string, T.any);
export const T_MAP_STRING = mapOf(T.string, T.string);

/** The "no value" of reflect (reflect.Value{}): a missing map key, an unset result. */
export const INVALID: Value = Object.freeze({ t: T.invalid, v: null });
/** The nil interface{} (a present map entry holding JSON null, an unset argument). */
export const NIL_ANY: Value = Object.freeze({ t: T.any, v: null });

export const isValid = (v: Value): boolean => v.t.kind !== 'invalid';

const INT_KINDS: ReadonlySet<Kind> = new Set<Kind>(['int', 'int8', 'int16', 'int32', 'int64']);
const UINT_KINDS: ReadonlySet<Kind> = new Set<Kind>(['uint', 'uint8', 'uint16', 'uint32', 'uint64', 'uintptr']);
export const isIntKind = (k: Kind): boolean => INT_KINDS.has(k);
export const isUintKind = (k: Kind): boolean => UINT_KINDS.has(k);
export const isFloatKind = (k: Kind): boolean => k === 'float32' || k === 'float64';

const BITS: Partial<Record<Kind, number>> = {
  int: 64,
  int8: 8,
  int16: 16,
  int32: 32,
  int64: 64,
  uint: 64,
  uint8: 8,
  uint16: 16,
  uint32: 32,
  uint64: 64,
  uintptr: 64,
};

/** Wraps an integer into a Go integer type, truncating like a Go conversion. */
export function mkInt(t: GoType, n: bigint): Value {
  const bits = BITS[t.kind] ?? 64;
  return { t, v: isUintKind(t.kind) ? BigInt.asUintN(bits, n) : BigInt.asIntN(bits, n) };
}
export const int = (n: number | bigint): Value => mkInt(T.int, BigInt(n));
export const int64 = (n: number | bigint): Value => mkInt(T.int64, BigInt(n));
export const float64 = (n: number): Value => ({ t: T.float64, v: n });
export const str = (s: string): Value => ({ t: T.string, v: s });
export const bool = (b: boolean): Value => ({ t: T.bool, v: b });
export const slice = (t: GoType, items: Value[] | null): Value => ({ t, v: items });
export const anySlice = (items: Value[]): Value => ({ t: T_SLICE_ANY, v: items });
export const strSlice = (items: string[]): Value => ({ t: T_SLICE_STRING, v: items.map(str) });
export const anyMap = (m: Map<string, Value>): Value => ({ t: T_MAP_ANY, v: m });

// []byte is a list of uint8 values, one shared frozen value per byte; the bytes behind a list
// made from bytes are remembered, so that big Secrets marshal without a pass over the values.
const BYTE_VALUES: readonly Value[] = Array.from({ length: 256 }, (_, b) => Object.freeze({ t: T.uint8, v: BigInt(b) }));
const bytesBehind = new WeakMap<Value[], Uint8Array>();

/** A []byte value. */
export function bytesValue(bytes: Uint8Array): Value {
  const items = new Array<Value>(bytes.length);
  for (let i = 0; i < bytes.length; i++) items[i] = BYTE_VALUES[bytes[i]!]!;
  bytesBehind.set(items, bytes);
  return { t: sliceOf(T.uint8), v: items };
}

/** The bytes of a []byte (or other uint8 slice) value. */
export function bytesOf(v: Value): Uint8Array {
  const items = (v.v as Value[] | null) ?? [];
  return bytesBehind.get(items) ?? Uint8Array.from(items, (b) => Number(b.v as bigint));
}

/** Typed accessors; callers check the kind first. */
export const asBig = (v: Value): bigint => v.v as bigint;
export const asNum = (v: Value): number => v.v as number;
export const asStr = (v: Value): string => v.v as string;
export const asBool = (v: Value): boolean => v.v as boolean;
export const asList = (v: Value): Value[] => (v.v as Value[] | null) ?? [];
export const asMap = (v: Value): Map<string, Value> => (v.v as Map<string, Value> | null) ?? new Map<string, Value>();
export const asComplex = (v: Value): [number, number] => v.v as [number, number];
export const asStruct = (v: Value): Record<string, Value> => v.v as Record<string, Value>;

export function isNilValue(v: Value): boolean {
  switch (v.t.kind) {
    case 'invalid':
      return true;
    case 'slice':
    case 'map':
    case 'ptr':
    case 'interface':
    case 'func':
      return v.v === null;
    default:
      return false;
  }
}

/** reflect.Value.Len for strings (bytes), slices and maps. */
export function lenOf(v: Value): number {
  switch (v.t.kind) {
    case 'string':
      return utf8Len(asStr(v));
    case 'slice':
      return asList(v).length;
    case 'map':
      return asMap(v).size;
    default:
      return 0;
  }
}

export function utf8Len(s: string): number {
  return goByteLen(s);
}

/** Go's `indirect`: follows pointers and nil-able interfaces; isNil when it hits a nil one. */
export function indirect(v: Value): { v: Value; isNil: boolean } {
  while (v.t.kind === 'ptr' || v.t.kind === 'interface') {
    if (v.v === null) return { v, isNil: true };
    v = deref(v);
  }
  return { v, isNil: false };
}

/** The pointee of a non-nil pointer; it is addressable. */
export function deref(p: Value): Value {
  const target = p.v as Value;
  return target.addr ? target : { ...target, addr: true };
}

/** Go's indirectInterface: a nil interface becomes the invalid value. */
export function indirectInterface(v: Value): Value {
  return v.t.kind === 'interface' && v.v === null ? INVALID : v;
}

/** Go's isTrue; ok=false for values with no truth (not reachable with our kinds). */
export function isTrue(v: Value): boolean {
  switch (v.t.kind) {
    case 'invalid':
      return false;
    case 'string':
      return asStr(v).length > 0;
    case 'slice':
    case 'map':
      return lenOf(v) > 0;
    case 'bool':
      return asBool(v);
    case 'ptr':
    case 'interface':
    case 'func':
      return v.v !== null;
    case 'float32':
    case 'float64':
      return asNum(v) !== 0;
    case 'struct':
      return true;
    case 'complex128':
      return asComplex(v)[0] !== 0 || asComplex(v)[1] !== 0;
    default:
      return asBig(v) !== 0n;
  }
}

/** reflect's AssignableTo for the types we model. */
export function assignableTo(from: GoType, to: GoType): boolean {
  if (from.name === to.name) return true;
  if (to.kind === 'interface' && to.name === 'interface {}') return true;
  if (to === T.reflectValue) return true;
  // identical underlying types where at least one side is unnamed
  if ((!from.named || !to.named) && from.kind === to.kind && from.kind !== 'struct') {
    return (from.elem?.name ?? '') === (to.elem?.name ?? '') && (from.key?.name ?? '') === (to.key?.name ?? '');
  }
  return false;
}

/**
 * Go's byte order of strings, how Go sorts string map keys. A step per comparison and per 64
 * characters of the shorter string: sorting long keys that differ only at their end reads them
 * whole at every comparison.
 */
export function compareStrings(a: string, b: string): number {
  spend(1 + Math.min(a.length, b.length) / UNITS_PER_STEP.native);
  return compareGo(a, b);
}

/** A map's entries in key order, Go's order for printing and ranging over it. */
export function sortedEntries(m: Map<string, Value>): [string, Value][] {
  return [...m].sort(([a], [b]) => compareStrings(a, b));
}

/** V8 hashes a string this long by its length alone. */
const UNHASHED_LENGTH = 16384;

/**
 * A key about to be looked up in or stored into m. A Map compares a key of UNHASHED_LENGTH or
 * more with every key of that length it holds: charged as if m held only such keys.
 */
export function mapKey(m: { readonly size: number }, key: string): string {
  if (key.length >= UNHASHED_LENGTH) spend((m.size * key.length) / UNITS_PER_STEP.native);
  return key;
}

/** Converts plain JSON (as unstructured decodes it) to Go values: integers int64, other numbers float64, strings as Go's decoder makes them. */
export function fromJSON(x: unknown): Value {
  if (x === null || x === undefined) return NIL_ANY;
  switch (typeof x) {
    case 'string':
      return str(goString(x));
    case 'boolean':
      return bool(x);
    case 'number':
      return Number.isInteger(x) && Math.abs(x) < 2 ** 63 ? int64(x) : float64(x);
    case 'bigint':
      return int64(x);
    case 'object':
      if (Array.isArray(x)) return anySlice(x.map(fromJSON));
      return anyMap(new Map(Object.entries(x as Record<string, unknown>).map(([k, e]) => [goString(k), fromJSON(e)])));
    default:
      throw new TypeError(`template data: cannot represent ${typeof x} as a Go value`);
  }
}

/** The zero value of a type. */
export function zeroOf(t: GoType): Value {
  switch (t.kind) {
    case 'bool':
      return { t, v: false };
    case 'string':
      return { t, v: '' };
    case 'float32':
    case 'float64':
      return { t, v: 0 };
    case 'complex128':
      return { t, v: [0, 0] };
    case 'struct': {
      const rec: Record<string, Value> = {};
      for (const f of t.fields ?? []) rec[f.name] = zeroOf(f.type);
      return { t, v: rec };
    }
    case 'invalid':
      return INVALID;
    default:
      if (isIntKind(t.kind) || isUintKind(t.kind)) return { t, v: 0n };
      return { t, v: null };
  }
}

/** Go exports an identifier that starts with an upper-case letter. */
export function isExported(name: string): boolean {
  const first = String.fromCodePoint(name.codePointAt(0) ?? 0);
  return first !== first.toLowerCase() && first === first.toUpperCase();
}

type Selected = { field: Value } | { method: Method; recv: Value };

/**
 * Go's selector lookup on a struct value: its own fields and methods, then those promoted from
 * embedded structs, shallowest depth first; two candidates at the same depth are ambiguous and
 * hide the name entirely. Pointer-receiver methods need an addressable value.
 */
function select(base: Value, name: string): Selected | undefined {
  let level: Value[] = [base];
  while (level.length > 0) {
    const found: Selected[] = [];
    const next: Value[] = [];
    for (const s of level) {
      const m = s.t.methods?.get(name);
      if (m) found.push({ method: m, recv: s });
      if (s.t.kind !== 'struct') continue;
      const rec = asStruct(s);
      for (const f of s.t.fields ?? []) {
        const fv = rec[f.name] ?? zeroOf(f.type);
        const val = s.addr ? { ...fv, addr: true } : fv;
        if (f.name === name) found.push({ field: val });
        if (f.embedded && f.type.kind === 'struct') next.push(val);
      }
    }
    if (found.length > 1) return undefined;
    const [hit] = found;
    if (hit) return 'method' in hit && hit.method.ptr && !hit.recv.addr ? undefined : hit;
    level = next;
  }
  return undefined;
}

/** Field lookup with Go's promotion through embedded structs. */
export function fieldByName(v: Value, name: string): Value | undefined {
  const hit = select(v, name);
  return hit && 'field' in hit ? hit.field : undefined;
}

/**
 * Method lookup as reflect's MethodByName on v (a struct value, or pointer to one), with
 * promotion from embedded fields. Pointer-receiver methods need a pointer or an addressable value.
 */
export function methodByName(v: Value, name: string): { m: Method; recv: Value } | undefined {
  let base = v;
  if (v.t.kind === 'ptr') {
    // Go finds methods on a nil pointer too; calling one then fails on the nil receiver.
    if (v.v === null) {
      const m = v.t.elem?.methods?.get(name);
      return m ? { m, recv: { t: v.t.elem!, v: null } } : undefined;
    }
    base = deref(v);
  }
  const hit = select(base, name);
  return hit && 'method' in hit ? { m: hit.method, recv: hit.recv } : undefined;
}

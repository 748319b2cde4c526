// Typed Go values for the kinds upstream's scheme knows (client-go v0.21.3's kubernetes scheme
// plus clusterregistry v1alpha1). Upstream reads such objects typed, so its content matcher and
// templates see Go structs: Go field names, promoted ObjectMeta methods, the generated String()
// of the protobuf types, and the typed JSON form (struct order, omitempty, unknown fields
// dropped, []byte as base64, zero values such as `creationTimestamp: null`).
//
// The types come from typemodel.json, which tools/oracle generates from the Go types themselves
// (its format is described there, in typemodel.go). It is read on first use only: a controller
// that never templates or content-matches a typed kind never loads it.
import { fromJSON as goString } from '../strings.ts';
import { readFileSync } from 'node:fs';
import { GoError } from './exec.ts';
import { formatV } from './gofmt.ts';
import { marshalJSON } from './gojson.ts';
import { DecodeError, SPECIALS, withStringMethods } from './specials.ts';
import {
  T,
  asList,
  asMap,
  asStr,
  asStruct,
  bytesValue,
  compareStrings,
  deref,
  mapOf,
  ptrTo,
  sliceOf,
  str,
  zeroOf,
  type GoType,
  type Method,
  type StructField,
  type Value,
} from './values.ts';

/** A group/version/kind; the core group is "". */
export interface GVK {
  group?: string;
  version?: string;
  kind?: string;
}

type RawRef = string | number;
type RawField = [string, RawRef, string?, 1?];
/** One printed field of a generated String(): see stringFields in tools/oracle/typemodel.go. */
type RawStringField = number | [number, string, ...string[]];
type RawType = [string, ...unknown[]];
interface RawModel {
  kinds: [string, string, string, number, 0 | 1][];
  types: RawType[];
}

// Naming the file in a type is what makes the build copy it next to this module.
type ModelFile = typeof import('./typemodel.json');
const MODEL_KEYS: readonly (keyof ModelFile)[] = ['kinds', 'types'];

const BASIC: ReadonlyMap<string, GoType> = new Map(Object.values(T).filter((t) => t.kind !== 'interface' && t.kind !== 'invalid' && t !== T.reflectValue).map((t) => [t.name, t]));

const defaultTag = (name: string): string => name[0]!.toLowerCase() + name.slice(1) + ',omitempty';

class TypeModel {
  private readonly raw: RawModel;
  private readonly built = new Map<number, GoType>();
  private readonly kinds = new Map<string, { ref: number; proto: boolean }>();

  constructor(raw: RawModel) {
    this.raw = raw;
    for (const [g, v, k, ref, proto] of raw.kinds) this.kinds.set(`${g}/${v}/${k}`, { ref, proto: proto === 1 });
  }

  kind(gvk: GVK): { type: GoType; proto: boolean } | undefined {
    const k = this.kinds.get(`${gvk.group ?? ''}/${gvk.version ?? ''}/${gvk.kind ?? ''}`);
    return k && { type: this.type(k.ref), proto: k.proto };
  }

  type(ref: RawRef): GoType {
    if (typeof ref === 'string') {
      const basic = BASIC.get(ref);
      if (!basic) throw new Error(`type model: unknown basic type ${ref}`);
      return basic;
    }
    const done = this.built.get(ref);
    if (done) return done;
    const raw = this.raw.types[ref];
    if (!raw) throw new Error(`type model: no type ${ref}`);
    const t = this.build(ref, raw);
    this.built.set(ref, t);
    return t;
  }

  private build(ref: number, raw: RawType): GoType {
    const [tag, a, b, c] = raw as [string, unknown, unknown, unknown];
    switch (tag) {
      case 'n':
        return { ...this.type(b as string), name: a as string, named: true };
      case 'N': {
        const underlying = this.type(b as number);
        const t: GoType = { ...underlying, name: a as string, named: true };
        if (c === 1) t.stringer = (v) => formatV({ ...v, t: underlying });
        return withStringMethods(t);
      }
      case '*':
        return ptrTo(this.type(a as RawRef));
      case '[]':
        return sliceOf(this.type(a as RawRef));
      case 'map':
        return mapOf(this.type(a as RawRef), this.type(b as RawRef));
      case 'x': {
        const special = SPECIALS.get(a as string);
        if (!special) throw new Error(`type model: no hand-written type ${String(a)}`);
        return special.type;
      }
      case 's': {
        // Registered before its fields are built: types can refer to themselves.
        const t: GoType = { kind: 'struct', name: a as string, named: true, fields: [] };
        this.built.set(ref, t);
        t.fields = (b as RawField[]).map(([name, type, json, embedded]): StructField => ({
          name,
          type: this.type(type),
          json: json ?? defaultTag(name),
          embedded: embedded === 1,
        }));
        const methods = OBJECT_METHODS.get(t.name)?.(t);
        if (methods) t.methods = new Map(methods);
        if (c) {
          const spec = c as RawStringField[];
          t.ptrStringer = (recv) => (recv === null ? 'nil' : gogoString(t, spec, recv));
        }
        return withStringMethods(t);
      }
      default:
        throw new Error(`type model: unknown type form ${tag}`);
    }
  }
}

let model: TypeModel | undefined;

function loadModel(): TypeModel {
  if (!model) {
    const raw = JSON.parse(readFileSync(new URL('./typemodel.json', import.meta.url), 'utf8')) as RawModel;
    if (MODEL_KEYS.some((k) => !Array.isArray(raw[k]))) throw new Error('typemodel.json is not a type model');
    model = new TypeModel(raw);
  }
  return model;
}

// ---------------------------------------------------------------- decoding

const INT_RANGES: Partial<Record<string, [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint8: [0, 255],
};

function jsonKind(x: unknown): string {
  if (Array.isArray(x)) return 'array';
  return typeof x;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/**
 * JSON into a typed value as the informer delivers it: apimachinery's json-iterator (keys match
 * case-sensitively, unknown keys are dropped, null leaves the zero value) and, for kinds read as
 * protobuf, what that round trip changes (empty lists and maps become nil, a nil []byte map value
 * becomes empty, Time loses its fraction, Quantity is re-parsed from its canonical form).
 */
function decode(t: GoType, x: unknown, proto: boolean, path: string): Value {
  if (x === null || x === undefined) return zeroOf(t);
  const special = SPECIALS.get(t.name);
  if (special?.type === t) return special.decode(x, proto, path);
  const fail = (): never => {
    throw new DecodeError(`${path}: cannot decode a JSON ${jsonKind(x)} as ${t.name}`);
  };
  switch (t.kind) {
    case 'string':
      return typeof x === 'string' ? { t, v: goString(x) } : fail();
    case 'bool':
      return typeof x === 'boolean' ? { t, v: x } : fail();
    case 'int32':
    case 'int64':
    case 'uint8': {
      const [lo, hi] = INT_RANGES[t.kind]!;
      return typeof x === 'number' && Number.isInteger(x) && x >= lo && x <= hi ? { t, v: BigInt(x) } : fail();
    }
    case 'ptr':
      return { t, v: decode(t.elem!, x, proto, path) };
    case 'slice': {
      if (t.elem === T.uint8) {
        if (typeof x !== 'string') fail();
        const b64 = (x as string).replace(/[\r\n]/g, '');
        if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) fail();
        return bytesValue(Buffer.from(b64, 'base64'));
      }
      if (!Array.isArray(x)) fail();
      const items = (x as unknown[]).map((e, i) => decode(t.elem!, e, proto, `${path}[${i}]`));
      return { t, v: proto && items.length === 0 ? null : items };
    }
    case 'map': {
      if (!isObject(x)) fail();
      const entries = Object.entries(x as Record<string, unknown>).map(([k, e]): [string, Value] => {
        const v = decode(t.elem!, e, proto, `${path}.${k}`);
        return [goString(k), proto && t.elem === sliceOf(T.uint8) && v.v === null ? { t: v.t, v: [] } : v];
      });
      return { t, v: proto && entries.length === 0 ? null : new Map(entries) };
    }
    case 'struct': {
      if (!isObject(x)) fail();
      return { t, v: decodeFields(t, x as Record<string, unknown>, proto, path) };
    }
    default:
      return fail();
  }
}

function decodeFields(t: GoType, obj: Record<string, unknown>, proto: boolean, path: string): Record<string, Value> {
  const rec: Record<string, Value> = {};
  for (const f of t.fields ?? []) {
    const [name = ''] = (f.json ?? '').split(',');
    if (f.embedded && name === '' && f.type.kind === 'struct') {
      rec[f.name] = { t: f.type, v: decodeFields(f.type, obj, proto, path) };
    } else if (name === '-') {
      rec[f.name] = zeroOf(f.type);
    } else {
      const key = name || f.name;
      rec[f.name] = Object.hasOwn(obj, key) ? decode(f.type, obj[key], proto, path ? `${path}.${key}` : key) : zeroOf(f.type);
    }
  }
  return rec;
}

/**
 * The typed value upstream holds for `obj` when its scheme knows `gvk` (a pointer to the kind's
 * struct), undefined otherwise. `typeMeta` overrides apiVersion/kind, as the cache reader sets
 * them to the GVK it was asked for. Throws DecodeError when the JSON does not fit the type.
 */
export function typedObject(obj: Record<string, unknown>, gvk: GVK, typeMeta?: GVK): Value | undefined {
  const kind = loadModel().kind(gvk);
  if (!kind) return undefined;
  const value = decode(kind.type, obj, kind.proto, '');
  if (typeMeta) {
    const meta = asStruct(asStruct(value)['TypeMeta']!);
    meta['Kind'] = str(typeMeta.kind ?? '');
    meta['APIVersion'] = str(typeMeta.group ? `${typeMeta.group}/${typeMeta.version ?? ''}` : (typeMeta.version ?? ''));
  }
  return { t: ptrTo(kind.type), v: value };
}

/**
 * json.Marshal of the typed object upstream's content matcher holds for `obj` of kind `gvk`;
 * undefined when its scheme does not know the kind (upstream then marshals the unstructured map).
 * apiVersion and kind are always there: the reconciler matches what the cache reader's Get
 * returns (TypeMeta set to the GVK asked for) and the watch predicates set the GVK before they
 * match. An object that does not fit its type marshals as null, where no gjson path exists: the
 * informer would not have delivered it, so no content matcher holds.
 */
export function typedJSON(obj: Record<string, unknown>, gvk: GVK): string | undefined {
  let value: Value | undefined;
  try {
    value = typedObject(obj, gvk, gvk);
  } catch (e) {
    if (e instanceof DecodeError) return 'null';
    throw e;
  }
  return value && marshalJSON(value, false);
}

// ---------------------------------------------------------------- methods

const nilDeref = (): never => {
  throw new GoError('runtime error: invalid memory address or nil pointer dereference');
};

/**
 * A getter method on a pointer receiver (calling it on nil panics). Its result type can be given
 * lazily, for types that come from the type model.
 */
export function getter(result: GoType | (() => GoType), fn: (recv: Value) => Value): Method {
  const sig = typeof result === 'function' ? { params: [], get result(): GoType { return result(); } } : { params: [], result };
  return { ptr: true, sig, fn: (recv) => (recv.v === null ? nilDeref() : fn(recv)) };
}

/** schema.GroupVersionKind, which GroupVersionKind() returns. */
export const SCHEMA_GVK: GoType = {
  kind: 'struct',
  name: 'schema.GroupVersionKind',
  named: true,
  fields: ['Group', 'Version', 'Kind'].map((name) => ({ name, type: T.string, json: '' })),
  stringer: (v) => {
    const r = asStruct(v);
    return `${asStr(r['Group']!)}/${asStr(r['Version']!)}, Kind=${asStr(r['Kind']!)}`;
  },
};

/** schema.ParseGroupVersion; null for its error (more than one slash). */
function parseGroupVersion(apiVersion: string): { group: string; version: string } | null {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length > 2) return null;
  return parts.length === 1 ? { group: '', version: apiVersion } : { group: parts[0]!, version: parts[1]! };
}

/**
 * A schema.GroupVersionKind: TypeMeta's (FromAPIVersionAndKind keeps the kind of an unparsable
 * apiVersion) or Unstructured's (which gives the empty GVK then).
 */
export function groupVersionKind(apiVersion: string, kind: string, keepKind: boolean): Value {
  const gv = parseGroupVersion(apiVersion);
  const k = gv || keepKind ? kind : '';
  return { t: SCHEMA_GVK, v: { Group: str(gv?.group ?? ''), Version: str(gv?.version ?? ''), Kind: str(k) } };
}

/** meta/v1 ObjectMeta, whose field types Unstructured's getters return. */
export function objectMetaType(): GoType {
  return loadModel().kind({ version: 'v1', kind: 'Namespace' })!.type.fields!.find((f) => f.name === 'ObjectMeta')!.type;
}

/** JSON into a value of type t; throws DecodeError. */
export function decodeAs(t: GoType, x: unknown): Value {
  return decode(t, x, false, '');
}

/** The methods templates can call on ObjectMeta and TypeMeta (promoted to every kind). */
const OBJECT_METHODS: ReadonlyMap<string, (t: GoType) => [string, Method][]> = new Map([
  [
    'v1.ObjectMeta',
    (t: GoType): [string, Method][] => [
      ...(t.fields ?? []).map((f): [string, Method] => [`Get${f.name}`, getter(f.type, (r) => asStruct(r)[f.name]!)]),
      ['GetObjectMeta', getter(ptrTo(t), (r) => ({ t: ptrTo(t), v: r }))],
    ],
  ],
  [
    'v1.TypeMeta',
    (t: GoType): [string, Method][] => [
      ['GetObjectKind', getter(ptrTo(t), (r) => ({ t: ptrTo(t), v: r }))],
      ['GroupVersionKind', getter(SCHEMA_GVK, (r) => groupVersionKind(asStr(asStruct(r)['APIVersion']!), asStr(asStruct(r)['Kind']!), true))],
    ],
  ],
]);

// ---------------------------------------------------------------- generated String()

/** X.String() for an addressable value or a pointer X: the pointer-receiver method, else the value one. */
function callString(v: Value): string {
  const t = v.t.kind === 'ptr' ? v.t.elem! : v.t;
  const target = v.t.kind === 'ptr' ? (v.v === null ? null : deref(v)) : v;
  if (t.ptrStringer) return t.ptrStringer(target);
  return target === null ? nilDeref() : t.stringer!(target);
}

/** A value as fmt.Sprintf("%v", x) receives it: a copy, so only value methods apply. */
const sprintV = (v: Value): string => formatV(v.addr ? { ...v, addr: false } : v);

function printed(code: string, args: string[], v: Value): string {
  let s = code[0] === 'S' ? callString(v) : sprintV(v);
  if (args.length === 2) s = s.replace(args[0]!, () => args[1]!);
  if (code.endsWith('&')) s = s.replace('&', '');
  return s;
}

/** gogo protobuf's generated String() of struct t, described by `spec`. */
function gogoString(t: GoType, spec: RawStringField[], recv: Value): string {
  const rec = asStruct(recv);
  const parts = [`&${t.name.slice(t.name.lastIndexOf('.') + 1)}{`];
  for (const entry of spec) {
    const [index, code, ...args] = typeof entry === 'number' ? [entry, 'v'] : entry;
    const f = t.fields![index]!;
    const v = rec[f.name] ?? zeroOf(f.type);
    let text: string;
    if (code === 'p') text = v.v === null ? 'nil' : '*' + sprintV(deref(v));
    else if (code === 'L') {
      const [prefix = '', elem = 'v', ...replace] = args;
      text = prefix + asList(v).map((e) => printed(elem, replace, { ...e, addr: true }) + ',').join('') + '}';
    } else if (code === 'M') {
      const m = asMap(v);
      text = args[0]! + [...m.keys()].sort(compareStrings).map((k) => `${k}: ${sprintV(m.get(k)!)},`).join('') + '}';
    } else text = printed(code, args, { ...v, addr: true });
    parts.push(`${f.name}:${text},`);
  }
  return parts.join('') + '}';
}

export { DecodeError };

// The API types whose JSON form, printing or internals come from hand-written Go methods rather
// than their fields: metav1.Time and MicroTime (time.Time inside), resource.Quantity,
// intstr.IntOrString, runtime.RawExtension and metav1.FieldsV1. The type model names them and
// these definitions stand in. Times are shown in the controller's local zone, which in its
// container is UTC.
import { fromGoBytes, goBytes } from './bytes.ts';
import { formatV } from './gofmt.ts';
import { compactMarshalerOutput, quoteJSON } from './gojson.ts';
import { canonicalQuantity, parseQuantity, quantityString, type Quantity, type QuantityFormat } from './quantity.ts';
import { asBig, asStr, asStruct, bool, bytesOf, bytesValue, ptrTo, sliceOf, str, T, zeroOf, type GoType, type Method, type StructField, type Value } from './values.ts';

/** The JSON of a typed object does not fit its Go type (the informer would fail to decode it). */
export class DecodeError extends Error {}

export interface Special {
  type: GoType;
  /** Decodes the JSON of a value of this type; JSON null never gets here (it leaves the zero value). */
  decode(x: unknown, proto: boolean, path: string): Value;
}

const field = (name: string, type: GoType, json = '', embedded = false): StructField => ({ name, type, json, embedded });

function named(name: string, base: GoType): GoType {
  return { ...base, name, named: true };
}

function struct(name: string, fields: StructField[], extra: Partial<GoType> = {}): GoType {
  return withStringMethods({ kind: 'struct', name, named: true, fields, ...extra });
}

/** Gives a type with a String() (either receiver) the String method templates can call. */
export function withStringMethods(t: GoType): GoType {
  const { stringer, ptrStringer } = t;
  const method: Method | undefined = ptrStringer
    ? { ptr: true, sig: { params: [], result: T.string }, fn: (recv) => str(ptrStringer(recv.v === null ? null : recv)) }
    : stringer && { ptr: false, sig: { params: [], result: T.string }, fn: (recv) => str(stringer(recv)) };
  if (method) t.methods = new Map([...(t.methods ?? []), ['String', method]]);
  return t;
}

function fail(path: string, what: string, x: unknown): never {
  throw new DecodeError(`${path}: cannot decode ${JSON.stringify(x)} as ${what}`);
}

const BYTES = sliceOf(T.uint8);

// ---------------------------------------------------------------- time.Time, metav1.Time, MicroTime

/** Unix seconds of 0001-01-01T00:00:00Z, the zero time.Time. */
const YEAR_ONE = -62135596800n;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** A time: seconds since year 1, nanoseconds, and whether its location is Local rather than UTC. */
interface Instant {
  sec: bigint;
  nsec: number;
  local: boolean;
}

// time.Time's own fields, which fmt shows for verbs that skip String(): wall holds the
// nanoseconds (no monotonic reading), ext the seconds since year 1, loc nil for UTC. Local is
// the container's zone, UTC, as Go loads it.
const ZONE = struct('time.zone', [field('name', T.string), field('offset', T.int), field('isDST', T.bool)]);
const ZONE_TRANS = struct('time.zoneTrans', [field('when', T.int64), field('index', T.uint8), field('isstd', T.bool), field('isutc', T.bool)]);
const LOCATION = struct('time.Location', [
  field('name', T.string),
  field('zone', sliceOf(ZONE)),
  field('tx', sliceOf(ZONE_TRANS)),
  field('extend', T.string),
  field('cacheStart', T.int64),
  field('cacheEnd', T.int64),
  field('cacheZone', ptrTo(ZONE)),
]);
const UTC_ZONE: Value = { t: ZONE, v: { name: str('UTC'), offset: { t: T.int, v: 0n }, isDST: bool(false) } };
const LOCAL: Value = {
  t: ptrTo(LOCATION),
  v: {
    t: LOCATION,
    v: {
      name: str('Local'),
      zone: { t: sliceOf(ZONE), v: [UTC_ZONE] },
      tx: { t: sliceOf(ZONE_TRANS), v: [{ t: ZONE_TRANS, v: { when: { t: T.int64, v: -(1n << 63n) }, index: { t: T.uint8, v: 0n }, isstd: bool(false), isutc: bool(false) } }] },
      extend: str('UTC0'),
      cacheStart: { t: T.int64, v: -(1n << 63n) },
      cacheEnd: { t: T.int64, v: (1n << 63n) - 1n },
      cacheZone: { t: ptrTo(ZONE), v: UTC_ZONE },
    },
  },
};

function instantOf(v: Value): Instant {
  const rec = asStruct(v);
  return { sec: asBig(rec['ext']!), nsec: Number(asBig(rec['wall']!)), local: rec['loc']!.v !== null };
}

const isZeroInstant = (t: Instant): boolean => t.sec === 0n && t.nsec === 0;

// Proleptic Gregorian calendar <-> days since 1970-01-01.
function civilFromDays(days: number): { y: number; mo: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const mo = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (mo <= 2 ? 1 : 0), mo, d: doy - Math.floor((153 * mp + 2) / 5) + 1 };
}

function daysFromCivil(year: number, mo: number, d: number): number {
  const y = mo <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysIn = (mo: number, y: number): number => (mo === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(mo) ? 30 : 31);

function civil(t: Instant): { y: number; mo: number; d: number; h: number; mi: number; s: number } {
  const unix = t.sec + YEAR_ONE;
  const days = unix >= 0n ? unix / 86400n : -((-unix + 86399n) / 86400n);
  const secs = Number(unix - days * 86400n);
  return { ...civilFromDays(Number(days)), h: Math.floor(secs / 3600), mi: Math.floor(secs / 60) % 60, s: secs % 60 };
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** time.Time.String(): "2006-01-02 15:04:05.999999999 -0700 MST". */
function timeString(t: Instant): string {
  const c = civil(t);
  const frac = t.nsec === 0 ? '' : '.' + pad(t.nsec, 9).replace(/0+$/, '');
  return `${pad(c.y, 4)}-${pad(c.mo)}-${pad(c.d)} ${pad(c.h)}:${pad(c.mi)}:${pad(c.s)}${frac} +0000 UTC`;
}

/** time.Time.GoString(). */
function timeGoString(t: Instant): string {
  const c = civil(t);
  return `time.Date(${c.y}, time.${MONTHS[c.mo - 1]}, ${c.d}, ${c.h}, ${c.mi}, ${c.s}, ${t.nsec}, time.${t.local ? 'Local' : 'UTC'})`;
}

/** RFC 3339 in UTC with `digits` fractional digits (-1: as many as needed, RFC3339Nano). */
function rfc3339(t: Instant, digits: number): string {
  const c = civil(t);
  let frac = '';
  if (digits > 0) frac = '.' + pad(t.nsec, 9).slice(0, digits);
  else if (digits < 0 && t.nsec !== 0) frac = '.' + pad(t.nsec, 9).replace(/0+$/, '');
  return `${pad(c.y, 4)}-${pad(c.mo)}-${pad(c.d)}T${pad(c.h)}:${pad(c.mi)}:${pad(c.s)}${frac}Z`;
}

/** time.Parse of RFC 3339 (fractionDigits: exactly that many, or any number when undefined), then Local(). */
function parseRFC3339(s: string, fractionDigits?: number): Instant | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const frac = m[7];
  if (fractionDigits !== undefined && (frac ?? '').length !== fractionDigits) return null;
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h > 23 || mi > 59 || sec > 59) return null;
  let offset = 0;
  const zone = m[8]!;
  if (zone !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offset = (oh * 60 + om) * 60 * (zone[0] === '-' ? -1 : 1);
  }
  const unix = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + sec - offset);
  const nsec = frac === undefined ? 0 : Number((frac + '00000000').slice(0, 9));
  return { sec: unix - YEAR_ONE, nsec, local: true };
}

const TIME_TIME: GoType = struct('time.Time', [field('wall', T.uint64), field('ext', T.int64), field('loc', ptrTo(LOCATION))], {
  stringer: (v) => timeString(instantOf(v)),
  goStringer: (v) => timeGoString(instantOf(v)),
  marshalJSON: (v) => JSON.stringify(rfc3339(instantOf(v), -1)),
});

function instantValue(t: Instant): Value {
  return { t: TIME_TIME, v: { wall: { t: T.uint64, v: BigInt(t.nsec) }, ext: { t: T.int64, v: t.sec }, loc: t.local ? LOCAL : { t: ptrTo(LOCATION), v: null } } };
}

/**
 * A metav1 wrapper of time.Time. Time's JSON has whole seconds and so does its protobuf form;
 * MicroTime's JSON has exactly six fractional digits.
 */
function timeWrapper(name: string, fractionDigits: number, protoNanos: boolean): Special {
  const inner = (v: Value): Instant => instantOf(asStruct(v)['Time']!);
  const type = struct(name, [field('Time', TIME_TIME, '', true)], {
    stringer: (v) => timeString(inner(v)),
    goStringer: (v) => timeGoString(inner(v)),
    marshalJSON: (v) => (isZeroInstant(inner(v)) ? 'null' : JSON.stringify(rfc3339(inner(v), fractionDigits))),
    methods: new Map([['IsZero', { ptr: true, sig: { params: [], result: T.bool }, fn: (v) => bool(v.v === null || isZeroInstant(inner(v))) }]]),
  });
  return {
    type,
    decode: (x, proto, path) => {
      const t = typeof x === 'string' ? parseRFC3339(x, fractionDigits === 0 ? undefined : fractionDigits) : null;
      if (!t) fail(path, name, x);
      return { t: type, v: { Time: instantValue(proto && !protoNanos ? { ...t, nsec: 0 } : t) } };
    },
  };
}

// ---------------------------------------------------------------- resource.Quantity

const FORMAT = named('resource.Format', T.string);
const SCALE = named('resource.Scale', T.int32);
const INT64_AMOUNT = struct('resource.int64Amount', [field('value', T.int64), field('scale', SCALE)]);
const INF_DEC = struct('inf.Dec', [field('unscaled', named('big.Int', T.int64)), field('scale', named('inf.Scale', T.int32))]);
const INF_DEC_AMOUNT = struct('resource.infDecAmount', [field('Dec', ptrTo(INF_DEC), '', true)]);

function quantityOf(v: Value): Quantity {
  const rec = asStruct(v);
  const i = asStruct(rec['i']!);
  const dec = asStruct(rec['d']!)['Dec']!.v as Value | null;
  return {
    i: { value: asBig(i['value']!), scale: Number(asBig(i['scale']!)) },
    d: dec === null ? null : { unscaled: asBig(asStruct(dec)['unscaled']!), scale: Number(asBig(asStruct(dec)['scale']!)) },
    s: asStr(rec['s']!),
    format: asStr(rec['Format']!) as QuantityFormat | '',
  };
}

const QUANTITY: GoType = struct('resource.Quantity', [field('i', INT64_AMOUNT), field('d', INF_DEC_AMOUNT), field('s', T.string), field('Format', FORMAT)], {
  marshalJSON: (v) => JSON.stringify(quantityString(quantityOf(v))),
  // String() caches the canonical form in s, as Go's does.
  ptrStringer: (recv) => {
    if (recv === null) return '<nil>';
    const q = quantityOf(recv);
    if (q.s === '') asStruct(recv)['s'] = str(canonicalQuantity(q));
    return asStr(asStruct(recv)['s']!);
  },
});

function quantityValue(q: Quantity): Value {
  const dec: Value =
    q.d === null
      ? { t: ptrTo(INF_DEC), v: null }
      : { t: ptrTo(INF_DEC), v: { t: INF_DEC, v: { unscaled: { t: INF_DEC.fields![0]!.type, v: q.d.unscaled }, scale: { t: INF_DEC.fields![1]!.type, v: BigInt(q.d.scale) } } } };
  return {
    t: QUANTITY,
    v: {
      i: { t: INT64_AMOUNT, v: { value: { t: T.int64, v: q.i.value }, scale: { t: SCALE, v: BigInt(q.i.scale) } } },
      d: { t: INF_DEC_AMOUNT, v: { Dec: dec } },
      s: str(q.s),
      Format: { t: FORMAT, v: q.format },
    },
  };
}

const QUANTITY_SPECIAL: Special = {
  type: QUANTITY,
  decode: (x, proto, path) => {
    const text = typeof x === 'string' ? x.trim() : typeof x === 'number' ? String(x) : null;
    let q = text === null ? null : parseQuantity(text);
    // protobuf carries String() and the reader parses it again
    if (q && proto) q = parseQuantity(quantityString(q));
    if (!q) fail(path, 'resource.Quantity', x);
    return quantityValue(q);
  },
};

// ---------------------------------------------------------------- intstr.IntOrString

const INTSTR_TYPE = named('intstr.Type', T.int64);
const INT_OR_STRING: GoType = struct('intstr.IntOrString', [field('Type', INTSTR_TYPE, 'type'), field('IntVal', T.int32, 'intVal'), field('StrVal', T.string, 'strVal')], {
  marshalJSON: (v) => {
    const rec = asStruct(v);
    return asBig(rec['Type']!) === 1n ? quoteJSON(asStr(rec['StrVal']!)) : asBig(rec['IntVal']!).toString();
  },
  ptrStringer: (recv) => {
    if (recv === null) return '<nil>';
    const rec = asStruct(recv);
    if (asBig(rec['Type']!) === 1n) return asStr(rec['StrVal']!);
    return asBig(rec['IntVal']!).toString();
  },
});

const intOrString = (type: bigint, i: bigint, s: string): Value => ({
  t: INT_OR_STRING,
  v: { Type: { t: INTSTR_TYPE, v: type }, IntVal: { t: T.int32, v: i }, StrVal: str(s) },
});

const INT_OR_STRING_SPECIAL: Special = {
  type: INT_OR_STRING,
  decode: (x, _proto, path) => {
    if (typeof x === 'string') return intOrString(1n, 0n, x);
    if (typeof x === 'number' && Number.isInteger(x) && x >= -(2 ** 31) && x < 2 ** 31) return intOrString(0n, BigInt(x), '');
    return fail(path, 'intstr.IntOrString', x);
  },
};

// ---------------------------------------------------------------- raw JSON holders

/** The JSON text a RawExtension or FieldsV1 keeps: compact, as the apiserver sends it. */
const rawBytes = (x: unknown): Value => bytesValue(goBytes(JSON.stringify(x)));

function rawJSON(raw: Value): string {
  return raw.v === null ? 'null' : compactMarshalerOutput(fromGoBytes(bytesOf(raw)));
}

const RUNTIME_OBJECT: GoType = { kind: 'interface', name: 'runtime.Object', named: true };

const RAW_EXTENSION: GoType = struct('runtime.RawExtension', [field('Raw', BYTES, '-'), field('Object', RUNTIME_OBJECT, '-')], {
  marshalJSON: (v) => rawJSON(asStruct(v)['Raw']!),
  ptrStringer: (recv) => {
    if (recv === null) return 'nil';
    const raw = asStruct(recv)['Raw']!;
    return `&RawExtension{Raw:${raw.v === null ? 'nil' : '*' + formatV(raw)},}`;
  },
});

const FIELDS_V1: GoType = struct('v1.FieldsV1', [field('Raw', BYTES, '-')], {
  marshalJSON: (v) => rawJSON(asStruct(v)['Raw']!),
  stringer: (v) => fromGoBytes(bytesOf(asStruct(v)['Raw']!)),
});

function rawHolder(type: GoType): Special {
  return {
    type,
    decode: (x) => {
      const v = zeroOf(type);
      asStruct(v)['Raw'] = rawBytes(x);
      return v;
    },
  };
}

// ---------------------------------------------------------------- registry

/** The hand-written types by the name the type model gives them. */
export const SPECIALS: ReadonlyMap<string, Special> = new Map(
  [
    timeWrapper('v1.Time', 0, false),
    timeWrapper('v1.MicroTime', 6, true),
    QUANTITY_SPECIAL,
    INT_OR_STRING_SPECIAL,
    rawHolder(RAW_EXTENSION),
    rawHolder(FIELDS_V1),
  ].map((s) => [s.type.name, s]),
);

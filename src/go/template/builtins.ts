// text/template's builtin functions (funcs.go): and or not len index print printf println
// eq ne lt le gt ge html js urlquery call. `slice` is omitted: sprig's slice replaces it.
import { goBytes } from './bytes.ts';
import { GoError, type FuncDef } from './exec.ts';
import { sprint, sprintf, sprintln } from './gofmt.ts';
import { isEscapeChar, isPrint } from '../strings.ts';
import { UNITS_PER_STEP, spend } from './limits.ts';
import {
  INVALID,
  T,
  asBig,
  asComplex,
  asList,
  asMap,
  asNum,
  asStr,
  bool,
  indirect,
  indirectInterface,
  int,
  isFloatKind,
  isIntKind,
  isNilValue,
  isTrue,
  isUintKind,
  isValid,
  lenOf,
  mapKey,
  str,
  zeroOf,
  type FuncSig,
  type Value,
} from './values.ts';

const RV = T.reflectValue;

type BasicKind = 'invalid' | 'bool' | 'int' | 'uint' | 'float' | 'complex' | 'string';

function basicKind(v: Value): BasicKind {
  const k = v.t.kind;
  if (k === 'bool') return 'bool';
  if (isIntKind(k)) return 'int';
  if (isUintKind(k)) return 'uint';
  if (isFloatKind(k)) return 'float';
  if (k === 'string') return 'string';
  if (k === 'complex128') return 'complex';
  return 'invalid';
}

function typeOf(v: Value): string {
  return isValid(v) ? v.t.name : '<nil>';
}

function eqValues(arg1: Value, arg2: Value[]): boolean {
  arg1 = indirectInterface(arg1);
  if (arg2.length === 0) throw new GoError('missing argument for comparison');
  const k1 = basicKind(arg1);
  for (let arg of arg2) {
    arg = indirectInterface(arg);
    const k2 = basicKind(arg);
    let truth = false;
    if (k1 !== k2) {
      if (k1 === 'int' && k2 === 'uint') truth = asBig(arg1) >= 0n && asBig(arg1) === asBig(arg);
      else if (k1 === 'uint' && k2 === 'int') truth = asBig(arg) >= 0n && asBig(arg1) === asBig(arg);
      else if (isValid(arg1) && isValid(arg)) {
        throw new GoError(`incompatible types for comparison: ${typeOf(arg1)} and ${typeOf(arg)}`);
      }
    } else if (k1 === 'invalid') {
      if (isValid(arg1) && isValid(arg) && arg1.t.kind !== arg.t.kind) {
        throw new GoError(sprintf('non-comparable types %s: %v, %s: %v', [arg1, str(typeOf(arg1)), str(typeOf(arg)), arg]));
      }
      if (isNilValue(arg1) || isNilValue(arg)) truth = isNilValue(arg) === isNilValue(arg1);
      else if (arg.t.kind === 'slice' || arg.t.kind === 'map' || arg.t.kind === 'func') {
        throw new GoError(sprintf('non-comparable type %s: %v', [arg, str(typeOf(arg))]));
      } else truth = arg1.t.name === arg.t.name && (arg1.v === arg.v || sprint([arg1]) === sprint([arg]));
    } else if (k1 === 'complex') {
      const [a, b] = [asComplex(arg1), asComplex(arg)];
      truth = a[0] === b[0] && a[1] === b[1];
    } else {
      truth = arg1.v === arg.v;
    }
    if (truth) return true;
  }
  return false;
}

function lessThan(arg1: Value, arg2: Value): boolean {
  arg1 = indirectInterface(arg1);
  const k1 = basicKind(arg1);
  if (k1 === 'invalid') throw new GoError('invalid type for comparison');
  arg2 = indirectInterface(arg2);
  const k2 = basicKind(arg2);
  if (k2 === 'invalid') throw new GoError('invalid type for comparison');
  if (k1 !== k2) {
    if (k1 === 'int' && k2 === 'uint') return asBig(arg1) < 0n || asBig(arg1) < asBig(arg2);
    if (k1 === 'uint' && k2 === 'int') return asBig(arg2) >= 0n && asBig(arg1) < asBig(arg2);
    throw new GoError(`incompatible types for comparison: ${typeOf(arg1)} and ${typeOf(arg2)}`);
  }
  switch (k1) {
    case 'bool':
    case 'complex':
      throw new GoError('invalid type for comparison');
    case 'float':
      return asNum(arg1) < asNum(arg2);
    case 'string':
      return Buffer.compare(goBytes(asStr(arg1)), goBytes(asStr(arg2))) < 0;
    default:
      return asBig(arg1) < asBig(arg2);
  }
}

function indexArg(index: Value, cap: number): number {
  let x: bigint;
  if (isIntKind(index.t.kind) || isUintKind(index.t.kind)) x = asBig(index);
  else if (!isValid(index)) throw new GoError('cannot index slice/array with nil');
  else throw new GoError(`cannot index slice/array with type ${index.t.name}`);
  if (x < 0n || x > BigInt(cap)) throw new GoError(`index out of range: ${x}`);
  return Number(x);
}

function index(args: Value[]): Value {
  let item = indirectInterface(args[0]!);
  if (!isValid(item)) throw new GoError('index of untyped nil');
  for (let idx of args.slice(1)) {
    idx = indirectInterface(idx);
    const r = indirect(item);
    if (r.isNil) throw new GoError('index of nil pointer');
    item = r.v;
    switch (item.t.kind) {
      case 'slice':
      case 'string': {
        const n = lenOf(item);
        const x = indexArg(idx, n);
        if (x === n) throw new GoError(`reflect: ${item.t.kind} index out of range`);
        if (item.t.kind === 'string') item = { t: T.uint8, v: BigInt(goBytes(asStr(item))[x]!) };
        else {
          const e = asList(item)[x]!;
          item = item.t.elem?.kind === 'interface' ? { ...e, iface: true } : { ...e, addr: true };
        }
        break;
      }
      case 'map': {
        if (!isValid(idx)) throw new GoError(`value is nil; should be of type ${item.t.key!.name}`);
        if (idx.t.name !== item.t.key!.name) {
          throw new GoError(`value has type ${idx.t.name}; should be ${item.t.key!.name}`);
        }
        const m = asMap(item);
        const e = m.get(mapKey(m, asStr(idx)));
        item = e === undefined ? zeroOf(item.t.elem!) : item.t.elem?.kind === 'interface' ? { ...e, iface: true } : e;
        break;
      }
      default:
        throw new GoError(`can't index item of type ${item.t.name}`);
    }
  }
  return item;
}

function length(args: Value[]): Value {
  const r = indirect(args[0]!);
  if (r.isNil) throw new GoError('len of nil pointer');
  if (!isValid(r.v)) throw new GoError('reflect: call of reflect.Value.Type on zero Value');
  const k = r.v.t.kind;
  if (k === 'slice' || k === 'map' || k === 'string') return int(lenOf(r.v));
  throw new GoError(`len of type ${typeOf(r.v)}`);
}

/** evalArgs of funcs.go: a lone string as is, else fmt.Sprint of the (printable) args. */
function evalArgs(args: Value[]): string {
  if (args.length === 1 && args[0]!.t === T.string) return asStr(args[0]!);
  // printableValue: pointers are followed, a nil interface prints as <no value>
  return sprint(args.map((a) => (a.t.kind === 'ptr' ? indirect(a).v : isValid(indirectInterface(a)) ? a : str('<no value>'))));
}

function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) => {
    spend(1 / UNITS_PER_STEP.looped);
    return HTML_ESCAPES[c]!;
  });
}
const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '\0': '\uFFFD',
  '"': '&#34;',
  "'": '&#39;',
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
};

function jsEscape(s: string): string {
  // what needs no escaping passes as it is; the rest is looked at rune by rune, a step each
  if (/^[\x20\x21\x23-\x25\x28-\x3b\x3f-\x5b\x5d-\x7f]*$/.test(s)) return s;
  spend(s.length / UNITS_PER_STEP.lookedUp);
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    switch (ch) {
      case '\\':
        out += '\\\\';
        continue;
      case "'":
        out += "\\'";
        continue;
      case '"':
        out += '\\"';
        continue;
      case '<':
        out += '\\u003C';
        continue;
      case '>':
        out += '\\u003E';
        continue;
      case '&':
        out += '\\u0026';
        continue;
      case '=':
        out += '\\u003D';
        continue;
      default:
    }
    if (r < 0x20) out += '\\u00' + r.toString(16).toUpperCase().padStart(2, '0');
    // An invalid byte decodes as U+FFFD, which is printable: the byte is written as it is.
    else if (r < 0x80 || isPrint(r) || isEscapeChar(ch)) out += ch;
    else out += '\\u' + r.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** The bytes url.QueryEscape keeps. */
const QUERY_KEPT = Uint8Array.from({ length: 256 }, (_, b) => Number(/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))));
const HEX_DIGITS = Buffer.from('0123456789ABCDEF');

/** url.QueryEscape. */
function queryEscape(s: string): string {
  const bytes = goBytes(s);
  spend(bytes.length / UNITS_PER_STEP.looped);
  const out = Buffer.alloc(3 * bytes.length);
  let n = 0;
  for (const b of bytes) {
    if (QUERY_KEPT[b]) out[n++] = b;
    else if (b === 0x20) out[n++] = 0x2b;
    else {
      out[n++] = 0x25;
      out[n++] = HEX_DIGITS[b >> 4]!;
      out[n++] = HEX_DIGITS[b & 15]!;
    }
  }
  return out.toString('latin1', 0, n);
}

function sig(params: FuncSig['params'], result: FuncSig['result'], extra: Partial<FuncSig> = {}): FuncSig {
  return { params, result, ...extra };
}

const cmp = (f: (a: Value, b: Value) => boolean): FuncDef => ({
  sig: sig([RV, RV], T.bool),
  fn: ([a, b]) => bool(f(a!, b!)),
});

export const BUILTINS: ReadonlyMap<string, FuncDef> = new Map<string, FuncDef>([
  // and/or/call are evaluated by exec itself; these entries carry their signatures.
  ['and', { sig: sig([RV], RV, { variadic: RV }), fn: () => INVALID }],
  ['or', { sig: sig([RV], RV, { variadic: RV }), fn: () => INVALID }],
  ['call', { sig: sig([RV], RV, { variadic: RV }), fn: () => INVALID }],
  ['not', { sig: sig([RV], T.bool), fn: ([a]) => bool(!isTrue(indirectInterface(a!))) }],
  ['len', { sig: sig([RV], T.int), fn: length }],
  ['index', { sig: sig([RV], RV, { variadic: RV }), fn: index }],
  ['print', { sig: sig([], T.string, { variadic: T.any }), fn: (a) => str(sprint(a)) }],
  ['println', { sig: sig([], T.string, { variadic: T.any }), fn: (a) => str(sprintln(a)) }],
  ['printf', { sig: sig([T.string], T.string, { variadic: T.any }), fn: ([f, ...a]) => str(sprintf(asStr(f!), a)) }],
  ['html', { sig: sig([], T.string, { variadic: T.any }), fn: (a) => str(htmlEscape(evalArgs(a))) }],
  ['js', { sig: sig([], T.string, { variadic: T.any }), fn: (a) => str(jsEscape(evalArgs(a))) }],
  ['urlquery', { sig: sig([], T.string, { variadic: T.any }), fn: (a) => str(queryEscape(evalArgs(a))) }],
  ['eq', { sig: sig([RV], T.bool, { variadic: RV }), fn: ([a, ...b]) => bool(eqValues(a!, b)) }],
  ['ne', cmp((a, b) => !eqValues(a, [b]))],
  ['lt', cmp(lessThan)],
  ['le', cmp((a, b) => lessThan(a, b) || eqValues(a, [b]))],
  ['gt', cmp((a, b) => !(lessThan(a, b) || eqValues(a, [b])))],
  ['ge', cmp((a, b) => !lessThan(a, b))],
]);


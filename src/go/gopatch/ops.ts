// go-patch v0.2.0 replace and remove ops (patch.ReplaceOp, patch.RemoveOp) built the way
// patch.NewOpsFromDefinitions builds them, applied to a copy of a YAML/JSON-shaped document.
import { compareGo, goJSONString } from '../strings.ts';
import { GoPatchError } from './errors.ts';
import { parsePointer, type Modifier, type Pointer, type Token } from './pointer.ts';

export type Op = { type: 'replace'; path: string; value: unknown } | { type: 'remove'; path: string };

type Doc = unknown;
type DocMap = Record<string, unknown>;

const isMap = (v: unknown): v is DocMap => typeof v === 'object' && v !== null && !Array.isArray(v);

// Sets a key as an own property, even `__proto__`.
function setKey(m: DocMap, key: string, value: unknown): void {
  Object.defineProperty(m, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A deep copy of plain data; go-patch clones values through YAML for the same isolation. */
function clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clone);
  if (isMap(v)) {
    const out: DocMap = {};
    for (const [k, e] of Object.entries(v)) setKey(out, k, clone(e));
    return out;
  }
  return v;
}

/** Go's %T of a value decoded from YAML by gopkg.in/yaml.v2 into interface{}. */
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? 'int' : 'float64';
  return 'map[interface {}]interface {}';
}

function mismatch(kind: 'an array' | 'a map', path: Pointer, obj: unknown): GoPatchError {
  return new GoPatchError(`Expected to find ${kind} at path '${path.toString()}' but found '${goTypeName(obj)}'`);
}

function missingKey(key: string, path: Pointer, obj: DocMap): GoPatchError {
  const keys = Object.keys(obj).sort(compareGo);
  const siblings = keys.length === 0 ? 'found no other map keys' : `found map keys: '${keys.join("', '")}'`;
  return new GoPatchError(`Expected to find a map key '${key}' for path '${path.toString()}' (${siblings})`);
}

const modifierType = (m: Modifier): string => `patch.${m[0]?.toUpperCase() ?? ''}${m.slice(1)}Modifier`;

// int64 arithmetic wraps in Go.
const wrap = (n: bigint): bigint => BigInt.asIntN(64, n);

/** patch.ArrayIndex.Concrete: applies :prev/:next and resolves a negative index. */
function concreteIndex(index: bigint, modifiers: readonly Modifier[], array: unknown[], path: Pointer): number {
  let result = index;
  for (const m of modifiers) {
    if (m === 'prev') result = wrap(result - 1n);
    else if (m === 'next') result = wrap(result + 1n);
    else throw new GoPatchError(`Expected to find one of the following modifiers: 'prev', 'next', but found modifier '${modifierType(m)}'`);
  }
  const len = BigInt(array.length);
  if (result >= len || wrap(wrap(-result) - 1n) >= len) {
    throw new GoPatchError(`Expected to find array index '${result}' but found array of length '${array.length}' for path '${path.toString()}'`);
  }
  return Number(result < 0n ? len + result : result);
}

/** patch.ArrayInsertion.Concrete + Update: a replace at an index, or an insert with :before/:after. */
function insertAt(index: bigint, modifiers: readonly Modifier[], array: unknown[], path: Pointer, value: unknown): unknown[] {
  let before = false;
  let after = false;
  const mods: Modifier[] = [];
  for (const m of modifiers) {
    if (before || after) {
      throw new GoPatchError(`Expected to not find any modifiers after '${before ? 'before' : 'after'}' modifier, but found modifier '${modifierType(m)}'`);
    }
    if (m === 'before') before = true;
    else if (m === 'after') after = true;
    else mods.push(m);
  }
  let num = concreteIndex(index, mods, array, path);
  if (after && num !== array.length) num += 1;
  if (before || after) return [...array.slice(0, num), value, ...array.slice(num)];
  array[num] = value;
  return array;
}

function matchingIndexes(array: unknown[], key: string, value: string): number[] {
  const idxs: number[] = [];
  array.forEach((item, i) => {
    if (isMap(item) && Object.hasOwn(item, key) && item[key] === value) idxs.push(i);
  });
  return idxs;
}

function multipleMatches(path: Pointer, count: number): GoPatchError {
  return new GoPatchError(`Expected to find exactly one matching array item for path '${path.toString()}' but found ${count}`);
}

function unexpectedToken(token: { kind: 'afterLast' | 'root' }, path: Pointer): GoPatchError {
  const typeName = token.kind === 'afterLast' ? 'AfterLastIndexToken' : 'RootToken';
  return new GoPatchError(`Expected to not find token 'patch.${typeName}' at path '${path.toString()}'`);
}

/** patch.ReplaceOp.Apply on a document the caller owns. */
function replace(doc: Doc, path: Pointer, value: unknown): Doc {
  const tokens = path.tokens;
  if (tokens.length === 1) return clone(value);
  let obj: unknown = doc;
  let prevUpdate = (v: unknown): void => void (doc = v);
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    const isLast = i === tokens.length - 1;
    const currPath = path.prefix(i + 1);
    switch (token.kind) {
      case 'index': {
        if (!Array.isArray(obj)) throw mismatch('an array', currPath, obj);
        const array = obj as unknown[];
        if (isLast) {
          prevUpdate(insertAt(token.index, token.modifiers, array, currPath, clone(value)));
        } else {
          const idx = concreteIndex(token.index, token.modifiers, array, currPath);
          obj = array[idx];
          prevUpdate = (v) => void (array[idx] = v);
        }
        break;
      }
      case 'afterLast': {
        if (!Array.isArray(obj)) throw mismatch('an array', currPath, obj);
        if (!isLast) throw new GoPatchError(`Expected after last index token to be last in path '${path.toString()}'`);
        prevUpdate([...(obj as unknown[]), clone(value)]);
        break;
      }
      case 'matching': {
        if (!Array.isArray(obj)) throw mismatch('an array', currPath, obj);
        const array = obj as unknown[];
        const idxs = matchingIndexes(array, token.key, token.value);
        if (token.optional && idxs.length === 0) {
          if (isLast) {
            prevUpdate([...array, clone(value)]);
          } else {
            const item: DocMap = {};
            setKey(item, token.key, token.value);
            obj = item;
            prevUpdate([...array, item]);
          }
        } else {
          if (idxs.length !== 1) throw multipleMatches(currPath, idxs.length);
          const found = BigInt(idxs[0] ?? 0);
          if (isLast) {
            prevUpdate(insertAt(found, token.modifiers, array, currPath, clone(value)));
          } else {
            obj = array[concreteIndex(found, token.modifiers, array, currPath)];
          }
        }
        break;
      }
      case 'key': {
        if (!isMap(obj)) throw mismatch('a map', currPath, obj);
        const map = obj;
        const found = Object.hasOwn(map, token.key);
        if (!found && !token.optional) throw missingKey(token.key, currPath, map);
        obj = found ? map[token.key] : undefined;
        if (isLast) {
          setKey(map, token.key, clone(value));
        } else {
          prevUpdate = (v) => setKey(map, token.key, v);
          if (!found) {
            // An optional missing key is created with the container the next token needs.
            const next = tokens[i + 1] as Token;
            if (next.kind === 'afterLast' || next.kind === 'matching') obj = [];
            else if (next.kind === 'key') obj = {};
            else throw new GoPatchError(`Expected to find key, matching index or after last index token at path '${path.prefix(i + 2).toString()}'`);
            setKey(map, token.key, obj);
          }
        }
        break;
      }
      case 'root':
        throw unexpectedToken(token, currPath);
    }
  }
  return doc;
}

/** patch.RemoveOp.Apply on a document the caller owns. */
function remove(doc: Doc, path: Pointer): Doc {
  const tokens = path.tokens;
  if (tokens.length === 1) throw new GoPatchError('Cannot remove entire document');
  let obj: unknown = doc;
  let prevUpdate = (v: unknown): void => void (doc = v);
  for (let i = 1; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    const isLast = i === tokens.length - 1;
    const currPath = path.prefix(i + 1);
    switch (token.kind) {
      case 'index':
      case 'matching': {
        if (!Array.isArray(obj)) throw mismatch('an array', currPath, obj);
        const array = obj as unknown[];
        let idx: number;
        if (token.kind === 'index') {
          idx = concreteIndex(token.index, token.modifiers, array, currPath);
        } else {
          const idxs = matchingIndexes(array, token.key, token.value);
          if (token.optional && idxs.length === 0) return doc;
          if (idxs.length !== 1) throw multipleMatches(currPath, idxs.length);
          idx = concreteIndex(BigInt(idxs[0] ?? 0), token.modifiers, array, currPath);
        }
        if (isLast) {
          prevUpdate([...array.slice(0, idx), ...array.slice(idx + 1)]);
        } else {
          obj = array[idx];
          // A matched item is a map, so the next token never needs to replace it.
          if (token.kind === 'index') prevUpdate = (v) => void (array[idx] = v);
        }
        break;
      }
      case 'key': {
        if (!isMap(obj)) throw mismatch('a map', currPath, obj);
        const map = obj;
        if (!Object.hasOwn(map, token.key)) {
          if (token.optional) return doc;
          throw missingKey(token.key, currPath, map);
        }
        if (isLast) {
          delete map[token.key];
        } else {
          obj = map[token.key];
          prevUpdate = (v) => setKey(map, token.key, v);
        }
        break;
      }
      case 'afterLast':
      case 'root':
        throw unexpectedToken(token, currPath);
    }
  }
  return doc;
}

type Built = { type: 'replace'; path: Pointer; value: unknown } | { type: 'remove'; path: Pointer };

// patch.parser.fmtOpDef: the op as indented JSON, value redacted, '<' and '>' unescaped.
function formatDefinition(op: Record<string, unknown>): string {
  const lines: string[] = [];
  if (typeof op.type === 'string' && op.type !== '') lines.push(`  "Type": ${goJSONString(op.type)}`);
  if (typeof op.path === 'string') lines.push(`  "Path": ${goJSONString(op.path)}`);
  if (op.value !== undefined) lines.push(`  "Value": "<redacted>"`);
  const json = lines.length === 0 ? '{}' : `{\n${lines.join(',\n')}\n}`;
  return json.replace(/\\u003c|\\u003e/g, (m) => (m === '\\u003c' ? '<' : '>'));
}

/** patch.NewOpsFromDefinitions for the replace and remove ops. */
function buildOps(ops: readonly Op[]): Built[] {
  return ops.map((raw, i) => {
    const op = raw as unknown as Record<string, unknown>;
    const type = typeof op.type === 'string' ? op.type : ''; // Go's zero value when absent
    const path = typeof op.path === 'string' ? op.path : undefined;
    const label = type === 'replace' ? 'Replace' : type === 'remove' ? 'Remove' : type === 'test' ? 'Test' : undefined;
    const fail = (msg: string): GoPatchError =>
      new GoPatchError(`${label ?? ''} operation [${i}]: ${msg} within\n${formatDefinition(op)}`);
    if (label === undefined) {
      throw new GoPatchError(`Unknown operation [${i}] with type '${type}' within\n${formatDefinition(op)}`);
    }
    if (path === undefined) throw fail('Missing path');
    if (type === 'test') {
      // Overrides never carry go-patch's `absent`, and a test op with a value is not supported here.
      if (op.value === undefined) throw fail('Missing value or absent');
      throw new GoPatchError(`Unsupported operation [${i}] with type 'test'`);
    }
    if (type === 'replace' && op.value === undefined) throw fail('Missing value');
    if (type === 'remove' && op.value !== undefined) throw fail('Cannot specify value');
    let pointer: Pointer;
    try {
      pointer = parsePointer(path);
    } catch (e) {
      throw e instanceof GoPatchError ? fail(`Invalid path: ${e.message}`) : e;
    }
    return type === 'replace' ? { type, path: pointer, value: op.value } : { type: 'remove', path: pointer };
  });
}

/**
 * Applies go-patch ops in order and returns the new document; the input is never modified.
 * Every op is validated before any is applied, as go-patch does. Throws GoPatchError.
 */
export function applyOps(doc: unknown, ops: readonly Op[]): unknown {
  let out = clone(doc);
  for (const op of buildOps(ops)) {
    out = op.type === 'replace' ? replace(out, op.path, op.value) : remove(out, op.path);
  }
  return out;
}

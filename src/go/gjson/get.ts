// gjson v1.9.3's Get, ported function by function (parseObject, parseArray, queries, pipes,
// sub-selectors, modifiers) so that odd paths and odd JSON behave exactly as in Go. gjson does
// not validate its input; neither does this.
import { compareGo, goJSONString } from '../strings.ts';
import { built, spend } from './built.ts';
import { matchLimit } from './match.ts';
import { execModifier } from './modifiers.ts';
import { parseGjsonUint, parseGoFloat } from './numbers.ts';
import { emptyRaw, rawBool, rawExists, rawString, type RawResult } from './result.ts';

const code = (s: string, i: number): number => s.charCodeAt(i);
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

interface Ctx {
  json: string;
  value: RawResult;
  pipe: string;
  piped: boolean;
  calcd: boolean;
}

/** Parse(json): the first value in the text, without validation. */
export function parse(json: string): RawResult {
  const value = emptyRaw();
  for (let i = 0; i < json.length; i++) {
    const c = json[i] ?? '';
    if (c === '{' || c === '[') {
      value.type = 'JSON';
      value.raw = json.slice(i);
      break;
    }
    if (code(json, i) <= SPACE) continue;
    if (c === 'n') {
      value.raw = tolit(json.slice(i));
    } else if (c === 't') {
      value.type = 'True';
      value.raw = tolit(json.slice(i));
    } else if (c === 'f') {
      value.type = 'False';
      value.raw = tolit(json.slice(i));
    } else if (c === '"') {
      value.type = 'String';
      [value.raw, value.str] = tostr(json.slice(i));
    } else if ((c >= '0' && c <= '9') || c === '-') {
      value.type = 'Number';
      [value.raw, value.num] = tonum(json.slice(i));
    } else {
      return emptyRaw();
    }
    break;
  }
  return value;
}

/** squash: the leading string, array, object or parenthesised text, nested values skipped. */
export function squash(json: string): string {
  let i = 0;
  let depth = 0;
  if (json[0] !== '"') {
    i = 1;
    depth = 1;
  }
  for (; i < json.length; i++) {
    const c = json[i] ?? '';
    if (c === '"') {
      i = skipStringBody(json, i + 1);
      if (depth === 0) return i >= json.length ? json : json.slice(0, i + 1);
    } else if (c === '{' || c === '[' || c === '(') {
      depth++;
    } else if (c === '}' || c === ']' || c === ')') {
      depth--;
      if (depth === 0) return json.slice(0, i + 1);
    }
  }
  return json;
}

// From just after an opening quote: the index of the closing quote (or the end), where a quote
// preceded by an odd run of backslashes (counted back to `start`) is escaped.
function skipStringBody(json: string, start: number): number {
  let i = start;
  for (; i < json.length; i++) {
    if (code(json, i) > BACKSLASH) continue;
    if (code(json, i) === QUOTE) {
      if (code(json, i - 1) === BACKSLASH) {
        let n = 0;
        for (let j = i - 2; j > start - 1; j--) {
          if (code(json, j) !== BACKSLASH) break;
          n++;
        }
        if (n % 2 === 0) continue;
      }
      break;
    }
  }
  return i;
}

function tonum(json: string): [string, number] {
  for (let i = 1; i < json.length; i++) {
    const c = code(json, i);
    if (c <= 0x2d) {
      // Whitespace and ',' end a number; '+' and '-' may be part of it.
      if (c <= SPACE || c === 0x2c) {
        const raw = json.slice(0, i);
        return [raw, parseGoFloat(raw)];
      }
      continue;
    }
    if (c < 0x5d) continue; // below ']': probably a valid number character
    if (c === 0x65 || c === 0x45) continue; // 'e', 'E'
    const raw = json.slice(0, i);
    return [raw, parseGoFloat(raw)];
  }
  return [json, parseGoFloat(json)];
}

function tolit(json: string): string {
  for (let i = 1; i < json.length; i++) {
    const c = json[i] ?? '';
    if (c < 'a' || c > 'z') return json.slice(0, i);
  }
  return json;
}

// The escaped-quote test of tostr/parseString/parseObject: backslashes counted back to index 1.
function quoteIsEscaped(json: string, i: number): boolean {
  if (code(json, i - 1) !== BACKSLASH) return false;
  let n = 0;
  for (let j = i - 2; j > 0; j--) {
    if (code(json, j) !== BACKSLASH) break;
    n++;
  }
  return n % 2 === 0;
}

function tostr(json: string): [string, string] {
  for (let i = 1; i < json.length; i++) {
    const c = code(json, i);
    if (c > BACKSLASH) continue;
    if (c === QUOTE) return [json.slice(0, i + 1), json.slice(1, i)];
    if (c === BACKSLASH) {
      i++;
      for (; i < json.length; i++) {
        const d = code(json, i);
        if (d > BACKSLASH) continue;
        if (d === QUOTE) {
          if (quoteIsEscaped(json, i)) continue;
          return [json.slice(0, i + 1), unescape(json.slice(1, i))];
        }
      }
      return [i + 1 < json.length ? json.slice(0, i + 1) : json.slice(0, i), unescape(json.slice(1, i))];
    }
  }
  return [json, json.slice(1)];
}

/** parseString from just after the opening quote: [next index, raw with quotes, escaped, ok]. */
function parseString(json: string, i: number): [number, string, boolean, boolean] {
  const s = i;
  for (; i < json.length; i++) {
    const c = code(json, i);
    if (c > BACKSLASH) continue;
    if (c === QUOTE) return [i + 1, json.slice(s - 1, i + 1), false, true];
    if (c === BACKSLASH) {
      i++;
      for (; i < json.length; i++) {
        const d = code(json, i);
        if (d > BACKSLASH) continue;
        if (d === QUOTE) {
          if (quoteIsEscaped(json, i)) continue;
          return [i + 1, json.slice(s - 1, i + 1), true, true];
        }
      }
      break;
    }
  }
  return [i, json.slice(s - 1), false, false];
}

function parseNumber(json: string, i: number): [number, string] {
  const s = i;
  for (i++; i < json.length; i++) {
    const c = json[i] ?? '';
    if (code(json, i) <= SPACE || c === ',' || c === ']' || c === '}') return [i, json.slice(s, i)];
  }
  return [i, json.slice(s)];
}

function parseLiteral(json: string, i: number): [number, string] {
  const s = i;
  for (i++; i < json.length; i++) {
    const c = json[i] ?? '';
    if (c < 'a' || c > 'z') return [i, json.slice(s, i)];
  }
  return [i, json.slice(s)];
}

function hex4(json: string): number {
  const h = json.slice(0, 4);
  return /^[0-9a-fA-F]{4}$/.test(h) ? parseInt(h, 16) : 0;
}

const isSurrogate = (r: number): boolean => r >= 0xd800 && r < 0xe000;

/** unescape: JSON string escapes; stops at a control character or a bad escape. */
export function unescape(json: string): string {
  let out = '';
  for (let i = 0; i < json.length; i++) {
    const c = json[i] ?? '';
    if (code(json, i) < SPACE) return out;
    if (c !== '\\') {
      out += c;
      continue;
    }
    i++;
    if (i >= json.length) return out;
    const e = json[i] ?? '';
    switch (e) {
      case '\\': case '/': case '"': out += e; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (i + 5 > json.length) return out;
        let r = hex4(json.slice(i + 1));
        i += 5;
        if (isSurrogate(r) && json.length - i >= 6 && json[i] === '\\' && json[i + 1] === 'u') {
          const r2 = hex4(json.slice(i + 2));
          // utf16.DecodeRune: a valid pair or U+FFFD
          r = r < 0xdc00 && r2 >= 0xdc00 && r2 < 0xe000 ? ((r - 0xd800) << 10) + (r2 - 0xdc00) + 0x10000 : 0xfffd;
          i += 6;
        }
        out += String.fromCodePoint(isSurrogate(r) ? 0xfffd : r); // utf8.EncodeRune
        i--;
        break;
      }
      default:
        return out;
    }
  }
  return out;
}

interface ArrayPath {
  part: string;
  path: string;
  pipe: string;
  piped: boolean;
  more: boolean;
  alogok: boolean;
  arrch: boolean;
  alogkey: string;
  query: { on: boolean; all: boolean; path: string; op: string; value: string };
}

// A '.' followed by '@', '[' or '{' starts a pipe-like sub-path (modifiers are enabled).
const isDotPiperChar = (c: string | undefined): boolean => c === '@' || c === '[' || c === '{';

function parseArrayPath(path: string): ArrayPath {
  const r: ArrayPath = {
    part: '', path: '', pipe: '', piped: false, more: false, alogok: false, arrch: false, alogkey: '',
    query: { on: false, all: false, path: '', op: '', value: '' },
  };
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    if (c === '|') {
      r.part = path.slice(0, i);
      r.pipe = path.slice(i + 1);
      r.piped = true;
      return r;
    }
    if (c === '.') {
      r.part = path.slice(0, i);
      if (!r.arrch && i < path.length - 1 && isDotPiperChar(path[i + 1])) {
        r.pipe = path.slice(i + 1);
        r.piped = true;
      } else {
        r.path = path.slice(i + 1);
        r.more = true;
      }
      return r;
    }
    if (c === '#') {
      r.arrch = true;
      if (i === 0 && path.length > 1) {
        if (path[1] === '.') {
          r.alogok = true;
          r.alogkey = path.slice(2);
          r.path = path.slice(0, 1);
        } else if (path[1] === '[' || path[1] === '(') {
          r.query.on = true;
          const q = parseQuery(path.slice(i));
          if (!q) break; // a bad query ends the path here
          let value = q.value;
          if (value.length > 2 && value.startsWith('"') && value.endsWith('"')) {
            value = value.slice(1, -1);
            if (q.vesc) value = unescape(value);
          }
          r.query.path = q.path;
          r.query.op = q.op;
          r.query.value = value;
          i = q.end - 1;
          if (i + 1 < path.length && path[i + 1] === '#') r.query.all = true;
        }
      }
    }
  }
  r.part = path;
  r.path = '';
  return r;
}

const trim = (s: string): string => {
  let a = 0;
  let b = s.length;
  while (a < b && code(s, a) <= SPACE) a++;
  while (b > a && code(s, b - 1) <= SPACE) b--;
  return s.slice(a, b);
};

/** parseQuery: `#(path op value)` or `#[...]` split into its parts; `end` is just past ')'. */
function parseQuery(query: string): { path: string; op: string; value: string; end: number; vesc: boolean } | undefined {
  if (query.length < 2 || query[0] !== '#' || (query[1] !== '(' && query[1] !== '[')) return undefined;
  let i = 2;
  let j = 0; // start of the value part
  let depth = 1;
  let vesc = false;
  for (; i < query.length; i++) {
    const c = query[i];
    if (depth === 1 && j === 0 && (c === '!' || c === '=' || c === '<' || c === '>' || c === '%')) {
      j = i;
      continue;
    }
    if (c === '\\') {
      i++;
    } else if (c === '[' || c === '(') {
      depth++;
    } else if (c === ']' || c === ')') {
      depth--;
      if (depth === 0) break;
    } else if (c === '"') {
      for (i++; i < query.length; i++) {
        if (query[i] === '\\') {
          vesc = true;
          i++;
        } else if (query[i] === '"') {
          break;
        }
      }
    }
  }
  if (depth > 0) return undefined;
  if (j === 0) return { path: trim(query.slice(2, i)), op: '', value: '', end: i + 1, vesc };
  const path = trim(query.slice(2, j));
  let value = trim(query.slice(j, i));
  let opsz = 0;
  const two = value.slice(0, 2);
  if (value.length === 1) opsz = 1;
  else if (two === '!=' || two === '!%' || two === '<=' || two === '>=') opsz = 2;
  else if (two === '==') {
    value = value.slice(1);
    opsz = 1;
  } else if (value[0] === '<' || value[0] === '>' || value[0] === '=' || value[0] === '%') opsz = 1;
  return { path, op: value.slice(0, opsz), value: trim(value.slice(opsz)), end: i + 1, vesc };
}

interface ObjectPath {
  part: string;
  path: string;
  pipe: string;
  piped: boolean;
  wild: boolean;
  more: boolean;
}

function parseObjectPath(path: string): ObjectPath {
  const r: ObjectPath = { part: '', path: '', pipe: '', piped: false, wild: false, more: false };
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    if (c === '|') {
      r.part = path.slice(0, i);
      r.pipe = path.slice(i + 1);
      r.piped = true;
      return r;
    }
    if (c === '.') {
      r.part = path.slice(0, i);
      if (i < path.length - 1 && isDotPiperChar(path[i + 1])) {
        r.pipe = path.slice(i + 1);
        r.piped = true;
      } else {
        r.path = path.slice(i + 1);
        r.more = true;
      }
      return r;
    }
    if (c === '*' || c === '?') {
      r.wild = true;
      continue;
    }
    if (c === '\\') {
      // Escape mode: the part is rebuilt without its escape characters.
      let epart = path.slice(0, i);
      i++;
      if (i < path.length) {
        epart += path[i];
        for (i++; i < path.length; i++) {
          const d = path[i];
          if (d === '\\') {
            i++;
            if (i < path.length) epart += path[i];
            continue;
          } else if (d === '.') {
            r.part = epart;
            if (i < path.length - 1 && isDotPiperChar(path[i + 1])) {
              r.pipe = path.slice(i + 1);
              r.piped = true;
            } else {
              r.path = path.slice(i + 1);
            }
            r.more = true;
            return r;
          } else if (d === '|') {
            r.part = epart;
            r.pipe = path.slice(i + 1);
            r.piped = true;
            return r;
          } else if (d === '*' || d === '?') {
            r.wild = true;
          }
          epart += d;
        }
      }
      r.part = epart;
      return r;
    }
  }
  r.part = path;
  return r;
}

/** parseSquash from an opening bracket: [index after the value, the value's text]. */
function parseSquash(json: string, i: number): [number, string] {
  const s = i;
  let depth = 1;
  for (i++; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      i = skipStringBody(json, i + 1);
    } else if (c === '{' || c === '[' || c === '(') {
      depth++;
    } else if (c === '}' || c === ']' || c === ')') {
      depth--;
      if (depth === 0) return [i + 1, json.slice(s, i + 1)];
    }
  }
  return [i, json.slice(s)];
}

function setLiteral(target: RawResult, vc: string, raw: string): void {
  target.raw = raw;
  if (vc === 't') target.type = 'True';
  else if (vc === 'f') target.type = 'False';
}

function parseObject(c: Ctx, i: number, path: string): [number, boolean] {
  const json = c.json;
  let pmatch = false;
  let hit = false;
  let key = '';
  let kesc = false;
  let ok = false;
  const rp = parseObjectPath(path);
  if (!rp.more && rp.piped) {
    c.pipe = rp.pipe;
    c.piped = true;
  }
  while (i < json.length) {
    for (; i < json.length; i++) {
      if (code(json, i) === QUOTE) {
        // The key, without its quotes.
        const s = ++i;
        [ok, kesc] = [false, false];
        let end = -1;
        for (; i < json.length; i++) {
          const k = code(json, i);
          if (k > BACKSLASH) continue;
          if (k === QUOTE) {
            end = i;
            break;
          }
          if (k === BACKSLASH) {
            for (i++; i < json.length; i++) {
              const d = code(json, i);
              if (d > BACKSLASH) continue;
              if (d === QUOTE && !quoteIsEscaped(json, i)) {
                end = i;
                kesc = true;
                break;
              }
            }
            break;
          }
        }
        if (end >= 0) {
          key = json.slice(s, end);
          i = end + 1;
          ok = true;
        } else {
          key = json.slice(s);
          kesc = false;
        }
        break;
      }
      if (json[i] === '}') return [i + 1, false];
    }
    if (!ok) return [i, false];
    const k = kesc ? unescape(key) : key;
    pmatch = rp.wild ? matchLimit(k, rp.part) : rp.part === k;
    hit = pmatch && !rp.more;
    for (; i < json.length; i++) {
      const ch = json[i] ?? '';
      if (ch === '"') {
        const [next, val, vesc, sok] = parseString(json, i + 1);
        i = next;
        if (!sok) return [i, false];
        if (hit) {
          c.value.str = vesc ? unescape(val.slice(1, -1)) : val.slice(1, -1);
          c.value.raw = val;
          c.value.type = 'String';
          return [i, true];
        }
      } else if (ch === '{' || ch === '[') {
        if (pmatch && !hit) {
          [i, hit] = ch === '{' ? parseObject(c, i + 1, rp.path) : parseArray(c, i + 1, rp.path);
          if (hit) return [i, true];
        } else {
          let val: string;
          [i, val] = parseSquash(json, i);
          if (hit) {
            c.value.raw = val;
            c.value.type = 'JSON';
            return [i, true];
          }
        }
      } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
        let val: string;
        [i, val] = parseNumber(json, i);
        if (hit) {
          c.value.raw = val;
          c.value.type = 'Number';
          c.value.num = parseGoFloat(val);
          return [i, true];
        }
      } else if (ch === 't' || ch === 'f' || ch === 'n') {
        let val: string;
        [i, val] = parseLiteral(json, i);
        if (hit) {
          setLiteral(c.value, ch, val);
          return [i, true];
        }
      } else {
        continue;
      }
      break;
    }
  }
  return [i, false];
}

function queryMatches(rp: ArrayPath, value: RawResult): boolean {
  let rpv = rp.query.value;
  if (rpv.startsWith('~')) {
    // `~` compares the value's truthiness
    rpv = rpv.slice(1);
    value = { ...emptyRaw(), type: rawBool(value) ? 'True' : 'False' };
  }
  if (!rawExists(value)) return false;
  const op = rp.query.op;
  if (op === '') return true;
  switch (value.type) {
    case 'String': {
      const cmp = compareGo(value.str, rpv);
      switch (op) {
        case '=': return cmp === 0;
        case '!=': return cmp !== 0;
        case '<': return cmp < 0;
        case '<=': return cmp <= 0;
        case '>': return cmp > 0;
        case '>=': return cmp >= 0;
        case '%': return matchLimit(value.str, rpv);
        case '!%': return !matchLimit(value.str, rpv);
      }
      return false;
    }
    case 'Number': {
      const n = parseGoFloat(rpv);
      switch (op) {
        case '=': return value.num === n;
        case '!=': return value.num !== n;
        case '<': return value.num < n;
        case '<=': return value.num <= n;
        case '>': return value.num > n;
        case '>=': return value.num >= n;
      }
      return false;
    }
    case 'True':
      switch (op) {
        case '=': return rpv === 'true';
        case '!=': return rpv !== 'true';
        case '>': return rpv === 'false';
        case '>=': return true;
      }
      return false;
    case 'False':
      switch (op) {
        case '=': return rpv === 'false';
        case '!=': return rpv !== 'false';
        case '<': return rpv === 'true';
        case '<=': return true;
      }
      return false;
    case 'Null': case 'JSON':
      return false;
  }
}

function partIndex(part: string): number {
  const n = parseGjsonUint(part);
  if (n === undefined) return -1;
  const asInt = BigInt.asIntN(64, n); // Go's int(n)
  return asInt >= 0n && asInt <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(asInt) : -1;
}

function parseArray(c: Ctx, i: number, path: string): [number, boolean] {
  const json = c.json;
  let pmatch = false;
  let hit = false;
  let h = 0;
  const alog: number[] = [];
  let multires = '';
  const rp = parseArrayPath(path);
  const partidx = rp.arrch ? 0 : partIndex(rp.part);
  if (!rp.more && rp.piped) {
    c.pipe = rp.pipe;
    c.piped = true;
  }

  const procQuery = (qval: RawResult): boolean => {
    if (rp.query.all && multires.length === 0) multires = '[';
    let res: RawResult;
    if (qval.type === 'JSON') {
      res = get(qval.raw, rp.query.path);
    } else {
      if (rp.query.path !== '') return false;
      res = qval;
    }
    if (!queryMatches(rp, res)) return false;
    if (rp.more) {
      const split = splitPossiblePipe(rp.path);
      if (split) {
        rp.path = split[0];
        c.pipe = split[1];
        c.piped = true;
      }
      res = get(qval.raw, rp.path);
    } else {
      res = qval;
    }
    if (!rp.query.all) {
      c.value = res;
      return true;
    }
    const raw = res.raw.length > 0 ? res.raw : rawString(res);
    if (raw !== '') {
      if (multires.length > 1) multires += ',';
      multires += raw;
    }
    return false;
  };

  while (i < json.length + 1) {
    if (!rp.arrch) {
      pmatch = partidx === h;
      hit = pmatch && !rp.more;
    }
    h++;
    if (rp.alogok) alog.push(i);
    for (; ; i++) {
      if (i > json.length) break;
      const ch = i === json.length ? ']' : (json[i] ?? '');
      if (ch === '"') {
        const [next, val, vesc, ok] = parseString(json, i + 1);
        i = next;
        if (!ok) return [i, false];
        const str = vesc ? unescape(val.slice(1, -1)) : val.slice(1, -1);
        if (rp.query.on) {
          if (procQuery({ type: 'String', raw: val, str, num: 0 })) return [i, true];
        } else if (hit && !rp.alogok) {
          c.value.str = str;
          c.value.raw = val;
          c.value.type = 'String';
          return [i, true];
        }
      } else if (ch === '{' || ch === '[') {
        if (pmatch && !hit) {
          [i, hit] = ch === '{' ? parseObject(c, i + 1, rp.path) : parseArray(c, i + 1, rp.path);
          if (hit && !rp.alogok) return [i, true];
        } else {
          let val: string;
          [i, val] = parseSquash(json, i);
          if (rp.query.on) {
            if (procQuery({ type: 'JSON', raw: val, str: '', num: 0 })) return [i, true];
          } else if (hit && !rp.alogok) {
            c.value.raw = val;
            c.value.type = 'JSON';
            return [i, true];
          }
        }
      } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
        let val: string;
        [i, val] = parseNumber(json, i);
        if (rp.query.on) {
          if (procQuery({ type: 'Number', raw: val, str: '', num: parseGoFloat(val) })) return [i, true];
        } else if (hit && !rp.alogok) {
          c.value.raw = val;
          c.value.type = 'Number';
          c.value.num = parseGoFloat(val);
          return [i, true];
        }
      } else if (ch === 't' || ch === 'f' || ch === 'n') {
        let val: string;
        [i, val] = parseLiteral(json, i);
        if (rp.query.on) {
          const qval = emptyRaw();
          setLiteral(qval, ch, val);
          if (procQuery(qval)) return [i, true];
        } else if (hit && !rp.alogok) {
          setLiteral(c.value, ch, val);
          return [i, true];
        }
      } else if (ch === ']') {
        if (rp.arrch && rp.part === '#') {
          if (rp.alogok) {
            c.value = collectAlog(c, rp, alog);
            return [i + 1, true];
          }
          c.value.type = 'Number';
          c.value.num = h - 1;
          c.value.raw = String(h - 1);
          c.calcd = true;
          return [i + 1, true];
        }
        if (!rawExists(c.value)) {
          if (multires.length > 0) c.value = { type: 'JSON', raw: multires + ']', str: '', num: 0 };
          else if (rp.query.all) c.value = { type: 'JSON', raw: '[]', str: '', num: 0 };
        }
        return [i + 1, false];
      } else {
        continue;
      }
      break;
    }
  }
  return [i, false];
}

// `#.key` at the end of an array: the key's value in every element, as a JSON array.
function collectAlog(c: Ctx, rp: ArrayPath, alog: number[]): RawResult {
  const json = c.json;
  const split = splitPossiblePipe(rp.alogkey);
  if (split) {
    rp.alogkey = split[0];
    c.pipe = split[1];
    c.piped = true;
  }
  const parts: string[] = [];
  for (let idx of alog) {
    while (idx < json.length && ' \t\r\n'.includes(json[idx] ?? 'x')) idx++;
    if (idx < json.length && json[idx] !== ']') {
      const [, res, ok] = parseAny(json, idx);
      if (ok) {
        const sub = get(res.raw, rp.alogkey);
        if (rawExists(sub)) parts.push(sub.raw.length > 0 ? sub.raw : rawString(sub));
      }
    }
  }
  return { type: 'JSON', raw: `[${parts.join(',')}]`, str: '', num: 0 };
}

/** splitPossiblePipe: [left, right] when the path has a top-level '|' outside selectors. */
function splitPossiblePipe(path: string): [string, string] | undefined {
  if (!path.includes('|')) return undefined;
  if (path.startsWith('{')) {
    const squashed = squash(path.slice(1));
    if (squashed.length < path.length - 1) {
      const left = path.slice(0, squashed.length + 1);
      const remain = path.slice(left.length);
      if (remain[0] === '|') return [left, remain.slice(1)];
    }
    return undefined;
  }
  for (let i = 0; i < path.length; i++) {
    const c = path[i];
    if (c === '\\') {
      i++;
    } else if (c === '.') {
      if (i === path.length - 1) return undefined;
      if (path[i + 1] === '#') {
        i += 2;
        if (i === path.length) return undefined;
        if (path[i] === '[' || path[i] === '(') {
          const [start, end] = path[i] === '[' ? ['[', ']'] : ['(', ')'];
          let depth = 1;
          for (i++; i < path.length; i++) {
            const d = path[i];
            if (d === '\\') {
              i++;
            } else if (d === start) {
              depth++;
            } else if (d === end) {
              depth--;
              if (depth === 0) break;
            } else if (d === '"') {
              for (i++; i < path.length; i++) {
                if (path[i] === '\\') i++;
                else if (path[i] === '"') break;
              }
            }
          }
        }
      }
    } else if (c === '|') {
      return [path.slice(0, i), path.slice(i + 1)];
    }
  }
  return undefined;
}

/** parseAny with hit set: the next value from i. */
export function parseAny(json: string, i: number): [number, RawResult, boolean] {
  for (; i < json.length; i++) {
    const ch = json[i] ?? '';
    if (ch === '{' || ch === '[') {
      let val: string;
      [i, val] = parseSquash(json, i);
      return [i, { type: 'JSON', raw: val, str: '', num: 0 }, true];
    }
    if (code(json, i) <= SPACE) continue;
    if (ch === '"') {
      const [next, val, vesc, ok] = parseString(json, i + 1);
      if (!ok) return [next, emptyRaw(), false];
      return [next, { type: 'String', raw: val, str: vesc ? unescape(val.slice(1, -1)) : val.slice(1, -1), num: 0 }, true];
    }
    if (ch === '-' || (ch >= '0' && ch <= '9')) {
      const [next, val] = parseNumber(json, i);
      return [next, { type: 'Number', raw: val, str: '', num: parseGoFloat(val) }, true];
    }
    if (ch === 't' || ch === 'f' || ch === 'n') {
      const [next, val] = parseLiteral(json, i);
      const res = emptyRaw();
      setLiteral(res, ch, val);
      return [next, res, true];
    }
  }
  return [i, emptyRaw(), false];
}

interface SubSelector {
  name: string;
  path: string;
}

/** parseSubSelectors for `[a,b]` / `{a,b}` paths: the selectors and the path after them. */
function parseSubSelectors(path: string): { sels: SubSelector[]; rest: string } | undefined {
  const sels: SubSelector[] = [];
  let modifier = 0;
  let depth = 1;
  let colon = 0;
  let start = 1;
  let i = 1;
  const pushSel = (): void => {
    sels.push(colon === 0 ? { name: '', path: path.slice(start, i) } : { name: path.slice(start, colon), path: path.slice(colon + 1, i) });
    colon = 0;
    start = i + 1;
  };
  for (; i < path.length; i++) {
    const c = path[i];
    if (c === '\\') {
      i++;
    } else if (c === '@') {
      if (modifier === 0 && i > 0 && (path[i - 1] === '.' || path[i - 1] === '|')) modifier = i;
    } else if (c === ':') {
      if (modifier === 0 && colon === 0 && depth === 1) colon = i;
    } else if (c === ',') {
      if (depth === 1) pushSel();
    } else if (c === '"') {
      for (i++; i < path.length; i++) {
        if (path[i] === '\\') i++;
        else if (path[i] === '"') break;
      }
    } else if (c === '[' || c === '(' || c === '{') {
      depth++;
    } else if (c === ']' || c === ')' || c === '}') {
      depth--;
      if (depth === 0) {
        pushSel();
        return { sels, rest: path.slice(i + 1) };
      }
    }
  }
  return undefined;
}

function nameOfLast(path: string): string {
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i] === '|' || path[i] === '.') {
      if (i > 0 && path[i - 1] === '\\') continue;
      return path.slice(i + 1);
    }
  }
  return path;
}

function isSimpleName(component: string): boolean {
  for (let i = 0; i < component.length; i++) {
    if (code(component, i) < SPACE || '[]{}()#|'.includes(component[i] ?? '')) return false;
  }
  return true;
}

// appendJSONString: plain quoting when nothing needs escaping, else json.Marshal.
function appendJSONString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = code(s, i);
    if (c < SPACE || c > 126 || c === QUOTE || c === BACKSLASH) return goJSONString(s);
  }
  return `"${s}"`;
}

/** Valid: whether the text is one JSON value (gjson's validator accepts exactly JSON). */
export function valid(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}

/** Get(json, path). */
export function get(json: string, path: string): RawResult {
  if (path.length > 1) {
    if (path[0] === '@') {
      const mod = execModifier(json, path);
      if (mod) {
        const [npath] = mod;
        const rjson = built(mod[1]);
        if (npath.length > 0 && (npath[0] === '|' || npath[0] === '.')) return get(rjson, npath.slice(1));
        return parse(rjson);
      }
    }
    if (path[0] === '[' || path[0] === '{') {
      const kind = path[0];
      const sub = parseSubSelectors(path);
      // Go reassigns the path to what follows the selectors, or to '' when they do not parse.
      path = sub?.rest ?? '';
      if (sub && (sub.rest.length === 0 || sub.rest[0] === '|' || sub.rest[0] === '.')) {
        const items: string[] = [];
        for (const sel of sub.sels) {
          const res = get(json, sel.path);
          if (!rawExists(res)) continue;
          let item = '';
          if (kind === '{') {
            if (sel.name.length > 0) {
              item = sel.name[0] === '"' && valid(sel.name) ? sel.name : appendJSONString(sel.name);
            } else {
              const last = nameOfLast(sel.path);
              item = appendJSONString(isSimpleName(last) ? last : '_');
            }
            item += ':';
          }
          item += res.raw.length === 0 ? rawString(res) || 'null' : res.raw;
          // Charged before the join makes one string of them all.
          spend(item.length + 1);
          items.push(item);
        }
        const raw = kind + items.join(',') + (kind === '{' ? '}' : ']');
        const res: RawResult = { type: 'JSON', raw, str: '', num: 0 };
        return sub.rest.length > 0 ? get(raw, sub.rest.slice(1)) : res;
      }
    }
  }
  const c: Ctx = { json, value: emptyRaw(), pipe: '', piped: false, calcd: false };
  if (path.length >= 2 && path[0] === '.' && path[1] === '.') {
    parseArray(c, 0, path.slice(2));
  } else {
    for (let i = 0; i < json.length; i++) {
      if (json[i] === '{') {
        parseObject(c, i + 1, path);
        break;
      }
      if (json[i] === '[') {
        parseArray(c, i + 1, path);
        break;
      }
    }
  }
  return c.piped ? get(c.value.raw, c.pipe) : c.value;
}

/** Result.ForEach: the elements of an array, the members of an object, or the value itself. */
export function forEach(t: RawResult, iterator: (key: RawResult, value: RawResult) => boolean): void {
  if (!rawExists(t)) return;
  if (t.type !== 'JSON') {
    iterator(emptyRaw(), t);
    return;
  }
  const json = t.raw;
  let keys = false;
  let i = 0;
  const key = emptyRaw();
  for (; i < json.length; i++) {
    if (json[i] === '{') {
      i++;
      key.type = 'String';
      keys = true;
      break;
    } else if (json[i] === '[') {
      i++;
      break;
    }
    if (code(json, i) > SPACE) return;
  }
  for (; i < json.length; i++) {
    if (keys) {
      if (json[i] !== '"') continue;
      const [next, str, vesc, ok] = parseString(json, i + 1);
      i = next;
      if (!ok) return;
      key.str = vesc ? unescape(str.slice(1, -1)) : str.slice(1, -1);
      key.raw = str;
    }
    while (i < json.length && (code(json, i) <= SPACE || json[i] === ',' || json[i] === ':')) i++;
    const [next, value, ok] = parseAny(json, i);
    i = next;
    if (!ok || !iterator({ ...key }, value)) return;
  }
}

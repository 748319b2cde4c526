// gjson v1.9.3's built-in modifiers (@this, @reverse, @flatten, @join, @valid, @ugly, @pretty)
// and execModifier, which splits `@name:args` off the front of a path.
import { forEach, parse, squash, valid } from './get.ts';
import { defaultPrettyOptions, pretty, ugly, type PrettyOptions } from './pretty.ts';
import { rawBool, rawExists, rawInt, rawString, type RawResult } from './result.ts';

const isArray = (r: RawResult): boolean => r.type === 'JSON' && r.raw.startsWith('[');
const isObject = (r: RawResult): boolean => r.type === 'JSON' && r.raw.startsWith('{');

// gjson's trim (bytes <= ' ') then the outer brackets dropped.
function unwrap(json: string): string {
  let a = 0;
  let b = json.length;
  while (a < b && json.charCodeAt(a) <= 0x20) a++;
  while (b > a && json.charCodeAt(b - 1) <= 0x20) b--;
  json = json.slice(a, b);
  return json.length >= 2 && (json[0] === '[' || json[0] === '{') ? json.slice(1, -1) : json;
}

// Go's unicode.IsSpace.
const isGoSpace = (c: number): boolean =>
  (c >= 0x09 && c <= 0x0d) || c === 0x20 || c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;

/** strings.TrimSpace; a /\s+$/ regex would retry an inner run of spaces from each of them. */
function goTrimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

// Reads `{"name": value}` modifier arguments.
function argOption(arg: string, name: string): RawResult | undefined {
  let found: RawResult | undefined;
  forEach(parse(arg), (key, value) => {
    if (rawString(key) === name) found = value;
    return true;
  });
  return found;
}

function modReverse(json: string): string {
  const res = parse(json);
  if (isArray(res)) {
    const values: string[] = [];
    forEach(res, (_, value) => values.push(value.raw) > 0);
    return `[${values.reverse().join(',')}]`;
  }
  if (isObject(res)) {
    const members: string[] = [];
    forEach(res, (key, value) => members.push(`${key.raw}:${value.raw}`) > 0);
    return `{${members.reverse().join(',')}}`;
  }
  return json;
}

function modFlatten(json: string, arg: string): string {
  const res = parse(json);
  if (!isArray(res)) return json;
  const deepOpt = arg !== '' ? argOption(arg, 'deep') : undefined;
  const deep = deepOpt !== undefined && rawBool(deepOpt);
  const items: string[] = [];
  forEach(res, (_, value) => {
    let raw = value.raw;
    if (isArray(value)) raw = unwrap(deep ? modFlatten(value.raw, arg) : value.raw);
    raw = goTrimSpace(raw);
    if (raw.length > 0) items.push(raw);
    return true;
  });
  return `[${items.join(',')}]`;
}

function modJoin(json: string, arg: string): string {
  const res = parse(json);
  if (!isArray(res)) return json;
  const preserveOpt = arg !== '' ? argOption(arg, 'preserve') : undefined;
  const parts: string[] = [];
  if (preserveOpt !== undefined && rawBool(preserveOpt)) {
    forEach(res, (_, value) => {
      if (isObject(value)) parts.push(unwrap(value.raw));
      return true;
    });
  } else {
    // Later values win; keys keep the position (and raw text) of their first appearance.
    const keys: RawResult[] = [];
    const values = new Map<string, RawResult>();
    forEach(res, (_, obj) => {
      if (!isObject(obj)) return true;
      forEach(obj, (key, value) => {
        const k = rawString(key);
        if (!values.has(k)) keys.push(key);
        values.set(k, value);
        return true;
      });
      return true;
    });
    for (const key of keys) parts.push(`${key.raw}:${values.get(rawString(key))?.raw ?? ''}`);
  }
  return `{${parts.join(',')}}`;
}

// cleanWS: only the whitespace characters of s are kept.
const cleanWS = (s: string): string => s.replace(/[^ \t\n\r]/g, '');

function modPretty(json: string, arg: string): string {
  if (arg.length === 0) return pretty(json);
  const opts: PrettyOptions = { ...defaultPrettyOptions };
  forEach(parse(arg), (key, value) => {
    switch (rawString(key)) {
      case 'sortKeys': opts.sortKeys = rawBool(value); break;
      case 'indent': opts.indent = cleanWS(rawString(value)); break;
      case 'prefix': opts.prefix = cleanWS(rawString(value)); break;
      case 'width': opts.width = Number(rawInt(value)); break;
    }
    return true;
  });
  return pretty(json, opts);
}

const modifiers: Record<string, (json: string, arg: string) => string> = {
  pretty: modPretty,
  ugly: (json) => ugly(json),
  reverse: (json) => modReverse(json),
  this: (json) => json,
  flatten: modFlatten,
  join: modJoin,
  valid: (json) => (valid(json) ? json : ''),
};

/** execModifier for a path starting with '@': [the rest of the path, the modifier's output]. */
export function execModifier(json: string, path: string): [string, string] | undefined {
  let name = path.slice(1);
  let pathOut = '';
  let hasArgs = false;
  for (let i = 1; i < path.length; i++) {
    const c = path[i];
    if (c === ':') {
      pathOut = path.slice(i + 1);
      name = path.slice(1, i);
      hasArgs = pathOut.length > 0;
      break;
    }
    if (c === '|' || c === '.') {
      pathOut = path.slice(i);
      name = path.slice(1, i);
      break;
    }
  }
  const fn = Object.hasOwn(modifiers, name) ? modifiers[name] : undefined;
  if (fn === undefined) return undefined;
  let args = '';
  if (hasArgs) {
    let parsedArgs = false;
    if ('{["'.includes(pathOut[0] ?? 'x') && rawExists(parse(pathOut))) {
      args = squash(pathOut);
      pathOut = pathOut.slice(args.length);
      parsedArgs = true;
    }
    if (!parsedArgs) {
      const idx = pathOut.indexOf('|');
      if (idx === -1) {
        args = pathOut;
        pathOut = '';
      } else {
        args = pathOut.slice(0, idx);
        pathOut = pathOut.slice(idx);
      }
    }
  }
  return [pathOut, fn(json, args)];
}

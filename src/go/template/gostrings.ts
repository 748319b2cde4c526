// Ports of the Go string helpers sprig builds on: strings (TrimSpace, Title, Split, ...),
// Masterminds/goutils (Abbreviate, Initials, Wrap, SwapCase, ...) and huandu/xstrings
// (snake/kebab/camel case). Several goutils helpers walk bytes, not runes; that is kept.
import { fromGoBytes, goBytes } from './bytes.ts';
import { isEscapeChar, runesRewritten } from '../strings.ts';
import { MAX_STRING_BYTES, UNITS_PER_STEP, checkItems, checkLength, spend } from './limits.ts';

/** unicode.IsSpace. */
export function isGoSpace(r: number): boolean {
  if (r < 0x100) return r === 0x20 || (r >= 0x09 && r <= 0x0d) || r === 0x85 || r === 0xa0;
  return /^[\p{Zs}\p{Zl}\p{Zp}]$/u.test(String.fromCodePoint(r));
}

const cp = (ch: string): number => ch.codePointAt(0)!;
const isUpper = (ch: string): boolean => /^\p{Lu}$/u.test(ch);
const isLower = (ch: string): boolean => /^\p{Ll}$/u.test(ch);
const isTitle = (ch: string): boolean => /^\p{Lt}$/u.test(ch);
const isLetter = (ch: string): boolean => /^\p{L}$/u.test(ch);
const isNumber = (ch: string): boolean => /^\p{N}$/u.test(ch);
const isPunct = (ch: string): boolean => /^\p{P}$/u.test(ch);

/** Go's single-rune case mappings: full mappings that expand (ß -> SS) leave the rune as is. */
function mapRune(ch: string, f: (s: string) => string): string {
  const m = f(ch);
  return [...m].length === 1 ? m : ch;
}
export const toUpperRune = (ch: string): string => mapRune(ch, (s) => s.toUpperCase());
export const toLowerRune = (ch: string): string => mapRune(ch, (s) => s.toLowerCase());
const TITLE_EXCEPTIONS: Readonly<Record<string, string>> = { ǆ: 'ǅ', ǅ: 'ǅ', Ǆ: 'ǅ', ǉ: 'ǈ', ǈ: 'ǈ', Ǉ: 'ǈ', ǌ: 'ǋ', ǋ: 'ǋ', Ǌ: 'ǋ', ǳ: 'ǲ', ǲ: 'ǲ', Ǳ: 'ǲ' };
export const toTitleRune = (ch: string): string => TITLE_EXCEPTIONS[ch] ?? toUpperRune(ch);

/** Maps each rune; ASCII maps the same way natively. */
function mapRunes(s: string, f: (ch: string) => string, native: (s: string) => string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return native(s);
  spend(s.length / UNITS_PER_STEP.lookedUp);
  let out = '';
  for (const ch of runesRewritten(s)) out += f(ch);
  return out;
}
export const goToUpper = (s: string): string => mapRunes(s, toUpperRune, (a) => a.toUpperCase());
export const goToLower = (s: string): string => mapRunes(s, toLowerRune, (a) => a.toLowerCase());

/** s without the runes `trimmed` takes from either end; a step for each rune looked at. */
function trimRunes(s: string, trimmed: (ch: string) => boolean): string {
  let a = 0;
  let b = s.length;
  const width = (i: number): number => (s.codePointAt(i)! > 0xffff ? 2 : 1);
  while (a < b && trimmed(String.fromCodePoint(s.codePointAt(a)!))) a += width(a);
  // from the end: a low surrogate ends a pair when a high one comes before it
  const start = (end: number): number => (end - 2 >= a && s.codePointAt(end - 2)! > 0xffff ? end - 2 : end - 1);
  while (b > a && trimmed(s.slice(start(b), b))) b = start(b);
  spend((1 + a + s.length - b) / UNITS_PER_STEP.lookedUp);
  return s.slice(a, b);
}

export const goTrimSpace = (s: string): string => trimRunes(s, (ch) => isGoSpace(cp(ch)));

/** strings.Trim(s, cutset). */
export function goTrim(s: string, cutset: string): string {
  spend(cutset.length / UNITS_PER_STEP.looped);
  const cut = new Set([...cutset]);
  return trimRunes(s, (ch) => cut.has(ch));
}

/** strings.Title: upper-cases the first letter of each word. */
export function goTitle(s: string): string {
  spend(s.length / UNITS_PER_STEP.lookedUp);
  let prev = ' ';
  let out = '';
  for (const ch of runesRewritten(s)) {
    out += isSeparator(prev) ? toTitleRune(ch) : ch;
    prev = ch;
  }
  return out;
}

function isSeparator(ch: string): boolean {
  const r = cp(ch);
  if (r <= 0x7f) {
    if ((r >= 0x30 && r <= 0x39) || (r >= 0x61 && r <= 0x7a) || (r >= 0x41 && r <= 0x5a) || r === 0x5f) return false;
    return true;
  }
  if (isLetter(ch) || /^\p{Nd}$/u.test(ch)) return false;
  return isGoSpace(r);
}

/**
 * strings.Split / SplitN (n < 0: all parts; n == 0: none). Parts are cut one by one, so that a
 * result of too many parts fails before it is built.
 */
export function goSplitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  const parts: string[] = [];
  let at = 0;
  while (n < 0 || parts.length < n - 1) {
    // an empty separator cuts after each rune
    const end = sep !== '' ? s.indexOf(sep, at) : at < s.length ? at + ((s.codePointAt(at) ?? 0) > 0xffff ? 2 : 1) : -1;
    if (end < 0) break;
    parts.push(s.slice(at, end));
    checkItems(parts.length);
    at = end + sep.length;
  }
  // the rest of s is the last part, except after the last rune
  if (sep !== '' || at < s.length) parts.push(s.slice(at));
  return parts;
}

/** strings.Replace(s, old, new, -1). */
export function goReplaceAll(s: string, old: string, repl: string): string {
  if (old === '') {
    spend(s.length / UNITS_PER_STEP.looped);
    const runes = [...s];
    checkLength(s.length + (runes.length + 1) * repl.length);
    return repl + runes.map((c) => c + repl).join('');
  }
  // a step per match, and the result's size known before it is built
  let matches = 0;
  for (let i = s.indexOf(old); i >= 0; i = s.indexOf(old, i + old.length)) matches++;
  spend(matches);
  checkLength(s.length + matches * (repl.length - old.length));
  return s.split(old).join(repl);
}

// ---- goutils (byte-oriented where the original is)



/** A byte as goutils treats it: the rune with that value, written back as UTF-8. */
const byteRune = (b: number): string => String.fromCharCode(b);

/** Go's goutils walks the bytes, each kept one written as the rune of its value: charged by the bytes walked. */
export function deleteWhiteSpace(s: string): string {
  if (s === '') return s;
  const b = goBytes(s);
  spend(b.length / UNITS_PER_STEP.looped);
  const kept = new Uint8Array(b.length);
  let count = 0;
  for (const c of b) if (!isGoSpace(c)) kept[count++] = c;
  // latin1 makes each byte the character of its value, as byteRune does.
  return count === b.length ? s : Buffer.from(kept.buffer, 0, count).toString('latin1');
}

export function initials(s: string): string {
  if (s === '') return s;
  const b = goBytes(s);
  spend(b.length / UNITS_PER_STEP.looped);
  let out = '';
  let lastWasGap = true;
  for (const c of b) {
    if (isGoSpace(c)) lastWasGap = true;
    else if (lastWasGap) {
      out += byteRune(c);
      lastWasGap = false;
    }
  }
  return out;
}

export function uncapitalize(s: string): string {
  spend(s.length / UNITS_PER_STEP.lookedUp);
  let next = true;
  let out = '';
  for (const ch of runesRewritten(s)) {
    if (isGoSpace(cp(ch))) {
      next = true;
      out += ch;
    } else if (next) {
      out += toLowerRune(ch);
      next = false;
    } else out += ch;
  }
  return out;
}

export function swapCase(s: string): string {
  spend(s.length / UNITS_PER_STEP.lookedUp);
  let whitespace = true;
  let out = '';
  for (const ch of runesRewritten(s)) {
    if (isUpper(ch) || isTitle(ch)) {
      out += toLowerRune(ch);
      whitespace = false;
    } else if (isLower(ch)) {
      out += whitespace ? toTitleRune(ch) : toUpperRune(ch);
      whitespace = false;
    } else {
      out += ch;
      whitespace = isGoSpace(cp(ch));
    }
  }
  return out;
}

/** goutils.AbbreviateFull; null stands for its error (sprig then returns ""). */
export function abbreviateFull(s: string, offset: number, maxWidth: number): string | null {
  if (s === '') return '';
  if (maxWidth < 4) return null;
  const b = goBytes(s);
  return b.length <= maxWidth ? s : abbreviateBytes(b, offset, maxWidth);
}

/**
 * abbreviateFull over the string's bytes. Go abbreviates the rest of the string again as a
 * string; bytes and strings convert both ways without loss here, so the rest stays bytes (a
 * megabyte decoded and encoded again per call was most of its cost).
 */
function abbreviateBytes(b: Uint8Array, offset: number, maxWidth: number): string | null {
  const len = b.length;
  if (len === 0) return '';
  if (maxWidth < 4) return null;
  if (len <= maxWidth) return fromGoBytes(b);
  if (offset > len) offset = len;
  if (len - offset < maxWidth - 3) offset = len - (maxWidth - 3);
  if (offset <= 4) return fromGoBytes(b.subarray(0, maxWidth - 3)) + '...';
  if (maxWidth < 7) return null;
  if (offset + maxWidth - 3 < len) return '...' + (abbreviateBytes(b.subarray(offset), 0, maxWidth - 3) ?? '');
  return '...' + fromGoBytes(b.subarray(len - (maxWidth - 3)));
}

/** Spans of bytes up to this long are handled in a loop rather than by a native call. */
const SHORT_SPAN = 32;

/**
 * goutils.WrapCustom. The lines are copied into one growing buffer: a view and a list entry per
 * line (one byte each, at worst) left the garbage collector most of the work.
 */
export function wrapCustom(s: string, wrapLength: number, newLine: string, wrapLongWords: boolean): string {
  if (s === '') return '';
  if (newLine === '') newLine = '\n';
  if (wrapLength < 1) wrapLength = 1;
  const b = goBytes(s);
  const len = b.length;
  const nl = goBytes(newLine);
  let out = new Uint8Array(Math.min(len + nl.length, MAX_STRING_BYTES));
  let size = 0;
  // short spans byte by byte (a native call costs more than the loop), long ones natively
  const copy = (from: Uint8Array, start: number, end: number): void => {
    if (end - start > SHORT_SPAN) {
      out.set(from.subarray(start, end), size);
      size += end - start;
    } else for (let i = start; i < end; i++) out[size++] = from[i]!;
  };
  // each line adds the separator, which can be long, and costs a step
  const line = (start: number, end: number, separated: boolean): void => {
    spend(1);
    const grown = size + end - start + (separated ? nl.length : 0);
    checkLength(grown);
    if (grown > out.length) {
      const bigger = new Uint8Array(Math.min(Math.max(grown, 2 * out.length), MAX_STRING_BYTES));
      bigger.set(out.subarray(0, size));
      out = bigger;
    }
    copy(b, start, end);
    if (separated) copy(nl, 0, nl.length);
  };
  let offset = 0;
  while (len - offset > wrapLength) {
    if (b[offset] === 0x20) {
      offset++;
      continue;
    }
    // the last space among the next wrapLength + 1 bytes (never looking before them)
    let spaceToWrapAt = wrapLength + offset;
    if (wrapLength > SHORT_SPAN) spaceToWrapAt = b.subarray(offset, wrapLength + offset + 1).lastIndexOf(0x20) + offset;
    else while (spaceToWrapAt >= offset && b[spaceToWrapAt] !== 0x20) spaceToWrapAt--;
    if (spaceToWrapAt >= offset) {
      line(offset, spaceToWrapAt, true);
      offset = spaceToWrapAt + 1;
    } else if (wrapLongWords) {
      line(offset, wrapLength + offset, true);
      offset += wrapLength;
    } else {
      const space = b.indexOf(0x20, wrapLength + offset);
      if (space === -1) {
        line(offset, len, false);
        offset = len;
      } else {
        line(offset, space, true);
        offset = space + 1;
      }
    }
  }
  line(offset, len, false);
  return fromGoBytes(out.subarray(0, size));
}

// ---- xstrings

const isConnector = (ch: string): boolean => ch === '-' || ch === '_' || isGoSpace(cp(ch));
/** xstrings' isAlphabet: a letter outside its CJK ranges. */
function isAlphabet(ch: string): boolean {
  if (!isLetter(ch)) return false;
  const r = cp(ch);
  return !((r >= 0x4e00 && r <= 0x9fcc) || (r >= 0x3400 && r <= 0x4d85) || (r >= 0x20000 && r <= 0x2b81d));
}

export function toCamelCase(s: string): string {
  spend(s.length / UNITS_PER_STEP.lookedUp);
  const chars = [...runesRewritten(s)];
  if (chars.length === 0) return '';
  let out = '';
  let i = 0;
  let r0 = '';
  while (i < chars.length) {
    r0 = chars[i++]!;
    if (!isConnector(r0)) {
      r0 = toUpperRune(r0);
      break;
    }
    out += r0;
  }
  // xstrings writes the last rune again here even when the loop already wrote it ("__" -> "___")
  if (i >= chars.length) return out + r0;
  while (i < chars.length) {
    const r1 = r0;
    r0 = chars[i++]!;
    if (isConnector(r0) && isConnector(r1)) {
      out += r1;
      continue;
    }
    if (isConnector(r1)) r0 = toUpperRune(r0);
    else {
      r0 = toLowerRune(r0);
      out += r1;
    }
  }
  return out + r0;
}

type WordType = 'invalid' | 'punct' | 'other' | 'number' | 'upper' | 'alpha' | 'connector';

/** A rune Go decodes as utf8.RuneError: U+FFFD itself, or a byte that is not valid UTF-8. */
const isRuneError = (ch: string): boolean => ch === '\uFFFD' || isEscapeChar(ch);

// What xstrings asks of a rune, as bits: the case converters ask it of every rune several times,
// and asking the Unicode tables each time (and making a string per rune to ask them with) held the
// event loop for seconds on a long string, most of it the garbage collector's.
const CONNECTOR = 1;
const PUNCT = 2;
const UPPER = 4;
const ALPHA = 8;
const NUMBER = 16;
const RUNE_ERROR = 32;
/** Marks an entry of knownClasses as filled in. */
const KNOWN = 128;

function classOf(ch: string): number {
  return (isConnector(ch) ? CONNECTOR : 0) | (isPunct(ch) ? PUNCT : 0) | (isUpper(ch) ? UPPER : 0) | (isAlphabet(ch) ? ALPHA : 0) | (isNumber(ch) ? NUMBER : 0) | (isRuneError(ch) ? RUNE_ERROR : 0);
}

/**
 * The class of every code point met so far, by code point: 1.06 MiB at most, made on first use,
 * and zeroed pages no code point met has written to need not be resident.
 */
let knownClasses: Uint8Array | undefined;

/** The runes of `s` as `[...s]` splits it: where each starts (one more entry: the end), and its class. */
function runeClasses(s: string): { starts: Uint32Array; classes: Uint8Array; count: number } {
  const starts = new Uint32Array(s.length + 1);
  const classes = new Uint8Array(s.length);
  const known = (knownClasses ??= new Uint8Array(0x110000));
  let count = 0;
  for (let i = 0; i < s.length; count++) {
    starts[count] = i;
    const code = s.codePointAt(i)!;
    if (known[code] === 0) known[code] = KNOWN | classOf(String.fromCodePoint(code));
    classes[count] = known[code]! & ~KNOWN;
    i += code > 0xffff ? 2 : 1;
  }
  starts[count] = s.length;
  return { starts, classes, count };
}

/** The class xstrings' word scan starts from when no valid rune is left: U+FFFD's. */
const REPLACEMENT_CLASS = RUNE_ERROR;

/** xstrings' camelCaseToLowerCase, over rune classes. */
function camelToLower(s: string, connector: string): string {
  spend(s.length / UNITS_PER_STEP.lookedUp);
  const { starts, classes, count } = runeClasses(s);
  if (count === 0) return '';
  let out = '';
  const toLower = (wt: WordType, a: number, b: number): void => {
    if (wt !== 'upper' && wt !== 'connector') {
      out += s.slice(starts[a], starts[b]);
      return;
    }
    for (let k = a; k < b; k++) {
      const c = classes[k]!;
      const ch = s.slice(starts[k], starts[k + 1]);
      out += c & CONNECTOR ? connector : c & UPPER ? toLowerRune(ch) : c & RUNE_ERROR ? '\uFFFD' : ch;
    }
  };

  // xstrings' nextValidRune from rune i: sets r to the next rune that is no RuneError (left as it
  // was when none is left) and returns where the runes taken end.
  let r = REPLACEMENT_CLASS;
  const nextValid = (i: number): number => {
    for (let j = i; j < count; j++) {
      if (!(classes[j]! & RUNE_ERROR)) {
        r = classes[j]!;
        return j + 1;
      }
    }
    return count;
  };
  const is = (c: number, want: number, unwanted: number): boolean => (want === 0 || (c & want) !== 0) && (c & unwanted) === 0;

  // xstrings' nextWord: RuneErrors join the word they stand in (the next valid rune decides).
  // Sets wt and end for the word starting at `from`; i is where its scan is.
  let wt = 'invalid' as WordType;
  let end = 0;
  let i = 0;
  const word = (type: WordType): void => {
    wt = type;
    end = i;
  };
  // Takes runes while they match; r is then the class of the rune that ended the run (or the last taken).
  const run = (want: number, unwanted: number): void => {
    while (i < count) {
      const next = nextValid(i);
      if (!is(r, want, unwanted)) return;
      i = next;
    }
  };
  const nextWord = (from: number): void => {
    i = from;
    if (from >= count) return word('invalid');
    r = REPLACEMENT_CLASS;
    i = nextValid(from);
    if (r & RUNE_ERROR) return word('invalid');
    if (r & CONNECTOR) {
      run(CONNECTOR, 0);
      return word('connector');
    }
    if (r & PUNCT) {
      run(PUNCT, 0);
      return word('punct');
    }
    if (r & UPPER) {
      if (i < count) {
        // nextValid moved r on to the rune after this one: the test is of that rune
        const next = nextValid(i);
        if (r & UPPER) {
          // "HTTPStatus" is "HTTP" and "Status": the last upper-case rune before a letter starts the next word.
          let lastSize = next - i;
          i = next;
          while (i < count) {
            const after = nextValid(i);
            if (!(r & UPPER)) break;
            lastSize = after - i;
            i = after;
          }
          if (i < count && r & ALPHA) i -= lastSize;
        } else if (r & ALPHA) {
          i = next;
          run(ALPHA, UPPER);
        }
      }
      return word('upper');
    }
    if (r & ALPHA) {
      run(ALPHA, UPPER);
      return word('alpha');
    }
    if (r & NUMBER) {
      run(NUMBER, 0);
      return word('number');
    }
    run(0, CONNECTOR | ALPHA | NUMBER | PUNCT);
    return word('other');
  };

  // the current word's type, read again after every advance()
  const cur = (): WordType => wt;
  let start = 0;
  nextWord(0);
  const advance = (): void => {
    start = end;
    nextWord(start);
  };
  while (end < count) {
    if (cur() !== 'connector') toLower(wt, start, end);
    const prev = wt;
    const lastStart = start;
    const lastEnd = end;
    advance();
    switch (prev) {
      case 'number':
        while (cur() === 'alpha' || cur() === 'number') {
          toLower(wt, start, end);
          advance();
        }
        if (cur() !== 'invalid' && cur() !== 'punct') out += connector;
        break;
      case 'connector':
        toLower(prev, lastStart, lastEnd);
        break;
      case 'punct':
        break;
      default: {
        if (cur() !== 'number') {
          if (cur() !== 'connector' && cur() !== 'punct') out += connector;
          break;
        }
        if (end >= count) break;
        const numStart = start;
        const numEnd = end;
        advance();
        if (cur() !== 'alpha') {
          toLower('number', numStart, numEnd);
          if (cur() !== 'connector' && cur() !== 'punct') out += connector;
          break;
        }
        out += connector;
        toLower('number', numStart, numEnd);
        while (cur() === 'alpha' || cur() === 'number') {
          toLower(wt, start, end);
          advance();
        }
        if (cur() !== 'invalid' && cur() !== 'connector' && cur() !== 'punct') out += connector;
      }
    }
  }
  toLower(wt, start, end);
  return out;
}

export const toSnakeCase = (s: string): string => camelToLower(s, '_');
export const toKebabCase = (s: string): string => camelToLower(s, '-');

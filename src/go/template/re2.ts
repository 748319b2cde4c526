// Go's regexp package (RE2 syntax, leftmost-first semantics) on re2js, a JavaScript port of
// RE2/J and Go's regexp whose engines never backtrack: a search takes time linear in the input
// for a given program. On top of it: Go's match iteration, $-expansion and Split (empty-match
// rules included), Go's view of invalid UTF-8, and accounting of the work in execution steps,
// because linear is not cheap when a peer's template controls both sides: a search costs
// program size × input length, iterating repeats it once per match, and compiling expands
// counted repetitions (x{1000}) and case-folds whole Unicode ranges.

import { RE2JS, RE2JSSyntaxException } from 're2js';
import { checkItems, checkLength, LimitError, meter, spend } from './limits.ts';

export class RegexSyntaxError extends Error {}

type Engine = ReturnType<RE2JS['re2']>;

const UNANCHORED = 0;

/** Longest pattern compiled: re2js's parser has quadratic corners (a class full of "[:a"). */
export const MAX_PATTERN_LENGTH = 8192;

// Steps charged for the work (one step is a fraction of a microsecond of ordinary template
// work). Compiling is charged before it starts: a fixed part, each pattern character and each
// instruction of the program, each \p table (twice when case-folded), each rune a case-folded
// class range covers and what the parser scans. A search costs a fixed part and, for each
// character the engine reads, every instruction of the program (the most threads it can run),
// more when it tracks many capture groups; it is stopped as soon as it reads past the steps
// left. Literal patterns are found with indexOf and cost what a string scan does. Expanding a
// replacement template costs its parts at every match.
const COMPILE_STEPS = 64;
const PATTERN_CHAR_STEPS = 4;
const INSTRUCTION_STEPS = 8;
const TABLE_STEPS = 1024;
const FOLD_RUNES_PER_STEP = 4;
const SEARCH_STEPS = 8;
const INSTRUCTION_READS_PER_STEP = 4;
const CAPTURES_PER_EXTRA_COST = 32;
const SCANNED_CHARS_PER_STEP = 64;
const TEMPLATE_PARTS_PER_STEP = 2;

// Case folding only changes runes in this range (Go's minFold and maxFold).
const FOLD_MIN = 0x41;
const FOLD_MAX = 0x1e943;
// Sizes past this are too big to compile anyway; capping keeps the arithmetic finite.
const HUGE = 2 ** 40;

/** A parsed piece: Go's calcSize of it, and the largest product of repeat counts nested in it. */
interface Item {
  size: number;
  reps: number;
}

interface Group {
  /** The finished alternatives: their calcSizes added up, and their largest reps. */
  alts: Item | null;
  items: Item[];
  capture: boolean;
  /** (?i) in force where the group started, restored when it ends. */
  fold: boolean;
}

const LITERAL: Item = { size: 1, reps: 1 };
const newGroup = (capture: boolean, fold: boolean): Group => ({ alts: null, items: [], capture, fold });

function concat(items: Item[]): Item {
  let size = 0;
  let reps = 1;
  for (const it of items) {
    size = Math.min(HUGE, size + it.size);
    reps = Math.max(reps, it.reps);
  }
  return { size: Math.max(1, size), reps };
}

function alternate(a: Item | null, b: Item): Item {
  return a === null ? b : { size: Math.min(HUGE, a.size + b.size + 1), reps: Math.max(a.reps, b.reps) };
}

function groupItem(g: Group): Item {
  const it = alternate(g.alts, concat(g.items));
  return g.capture ? { size: Math.min(HUGE, it.size + 2), reps: it.reps } : it;
}

const PERL_GROUP = /\(\?(?:(P?<)|([imsU]*)(?:-([imsU]*))?([:)]))/y;
const REPEAT = /\{(\d+)(?:(,)(\d*))?\}/y;
const HEX_ESCAPE = /\\x(?:\{([0-9A-Fa-f]{1,8})\}|([0-9A-Fa-f]{2}))/y;
const OCTAL_ESCAPE = /\\[0-7]{1,3}/y;

interface Scan {
  /** The steps compiling takes. */
  steps: number;
  /** Go's SubexpNames: the name of each capture group ('' for none), the whole match first. */
  names: string[];
  /** Where each validly named group's "(?P<name>" or "(?<name>" is, and the group's number. */
  openers: [number, number, number][];
}

/**
 * A light parse of `expr` that follows Go's tokenization: it numbers and names the capture
 * groups, and finds what compiling costs, bounding the program size the way Go's parser does
 * (calcSize: a literal or class is one instruction, a capture or star two more, x{m,n} n
 * copies). A pattern Go's rules on repetitions refuse (a stacked repeat, a count over 1000,
 * nested counts multiplying past 1000) is not charged for its size: re2js refuses it too.
 */
function scan(expr: string): Scan {
  let steps = COMPILE_STEPS + expr.length * PATTERN_CHAR_STEPS;
  const names = [''];
  const openers: [number, number, number][] = [];
  const stack: Group[] = [];
  let cur = newGroup(false, false);
  let fold = false;
  let refused = false;
  let afterRepeat = false;
  let posixClose = expr.indexOf(':]');
  const table = (): void => {
    steps += fold ? 2 * TABLE_STEPS : TABLE_STEPS;
  };
  /** Applies a repetition to the last item: `count` copies (0: no multiplying), `stacked` on another. */
  const repeat = (size: (x: number) => number, count: number, stacked: boolean): void => {
    const it = cur.items.at(-1);
    if (stacked) refused = true;
    if (!it) return;
    const reps = count === 0 ? 1 : count * it.reps;
    if (reps > 1000) refused = true;
    cur.items[cur.items.length - 1] = { size: Math.min(HUGE, size(it.size)), reps };
  };
  const skipLazy = (i: number): number => (expr[i] === '?' ? i + 1 : i);
  /** One class character or escape at i: its rune (or a bound of it) and where it ends. */
  const classChar = (i: number): [number, number] => {
    HEX_ESCAPE.lastIndex = i;
    const hex = HEX_ESCAPE.exec(expr);
    if (hex) return [parseInt(hex[1] ?? hex[2]!, 16), HEX_ESCAPE.lastIndex];
    OCTAL_ESCAPE.lastIndex = i;
    if (OCTAL_ESCAPE.test(expr)) return [0o777, OCTAL_ESCAPE.lastIndex];
    const at = expr[i] === '\\' ? i + 1 : i;
    const c = expr.codePointAt(at) ?? 0;
    return [c, at + (c > 0xffff ? 2 : 1)];
  };
  const unicodeClassEnd = (i: number): number => {
    if (expr[i + 2] !== '{') return i + 3;
    const close = expr.indexOf('}', i + 3);
    return close < 0 ? expr.length : close + 1;
  };
  /** A class at i: where it ends; charges its tables and the runes folding visits. */
  const charClass = (i: number): number => {
    i++;
    if (expr[i] === '^') i++;
    let first = true;
    while (i < expr.length && (expr[i] !== ']' || first)) {
      first = false;
      if (expr.startsWith('[:', i)) {
        // re2js looks through the rest of the pattern for ":]" at each "[:"; this parse searches
        // once per position the ":]" could be at.
        steps += (expr.length - i) / SCANNED_CHARS_PER_STEP;
        if (posixClose >= 0 && posixClose < i + 2) posixClose = expr.indexOf(':]', i + 2);
        if (posixClose >= 0) {
          i = posixClose + 2;
          continue;
        }
      }
      if (expr[i] === '\\' && (expr[i + 1] === 'p' || expr[i + 1] === 'P')) {
        table();
        i = unicodeClassEnd(i);
        continue;
      }
      if (expr[i] === '\\' && 'dDsSwW'.includes(expr[i + 1] ?? '')) {
        i += 2;
        continue;
      }
      let lo: number;
      let hi: number;
      [lo, i] = classChar(i);
      hi = lo;
      if (expr[i] === '-' && i + 1 < expr.length && expr[i + 1] !== ']') [hi, i] = classChar(i + 1);
      if (fold) steps += Math.max(0, Math.min(hi, FOLD_MAX) - Math.max(lo, FOLD_MIN) + 1) / FOLD_RUNES_PER_STEP;
    }
    return i + 1;
  };

  let i = 0;
  while (i < expr.length) {
    const wasRepeat = afterRepeat;
    afterRepeat = false;
    switch (expr[i]) {
      case '(': {
        PERL_GROUP.lastIndex = i;
        const m = PERL_GROUP.exec(expr);
        if (m?.[4] === ')' || m?.[4] === ':') {
          let inner: boolean = fold;
          if (m[2]!.includes('i')) inner = true;
          if (m[3]?.includes('i')) inner = false;
          i = PERL_GROUP.lastIndex;
          if (m[4] === ')') {
            fold = inner;
            break;
          }
          stack.push(cur);
          cur = newGroup(false, fold);
          fold = inner;
          break;
        }
        let name = '';
        if (m?.[1] !== undefined) {
          const close = expr.indexOf('>', i);
          const end = close < 0 ? expr.length : close + 1;
          if (/^[A-Za-z0-9_]+$/.test(expr.slice(PERL_GROUP.lastIndex, close))) {
            name = expr.slice(PERL_GROUP.lastIndex, close);
            openers.push([i, end, names.length]);
          }
          i = end;
        } else i++;
        names.push(name);
        stack.push(cur);
        cur = newGroup(true, fold);
        break;
      }
      case ')': {
        i++;
        const outer = stack.pop();
        if (!outer) break;
        const it = groupItem(cur);
        fold = cur.fold;
        cur = outer;
        cur.items.push(it);
        break;
      }
      case '|':
        i++;
        cur.alts = alternate(cur.alts, concat(cur.items));
        cur.items = [];
        break;
      case '*':
      case '+':
      case '?': {
        const extra = expr[i] === '*' ? 2 : 1;
        repeat((x) => x + extra, 0, wasRepeat);
        afterRepeat = true;
        i = skipLazy(i + 1);
        break;
      }
      case '{': {
        REPEAT.lastIndex = i;
        const m = REPEAT.exec(expr);
        if (!m) {
          cur.items.push(LITERAL);
          i++;
          break;
        }
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? -1 : Number(m[3]);
        if (min > 1000 || max > 1000 || (max >= 0 && min > max)) refused = true;
        repeat((x) => (max === -1 ? (min === 0 ? 2 + x : 1 + min * x) : max * x + Math.max(0, max - min)), max === -1 ? min : max, wasRepeat);
        afterRepeat = true;
        i = skipLazy(REPEAT.lastIndex);
        break;
      }
      case '[':
        cur.items.push(LITERAL);
        i = charClass(i);
        break;
      case '\\': {
        const e = expr[i + 1];
        if (e === 'Q') {
          const end = expr.indexOf('\\E', i + 2);
          const runes = [...expr.slice(i + 2, end < 0 ? expr.length : end)].length;
          if (runes > 1) cur.items.push({ size: runes - 1, reps: 1 });
          if (runes > 0) cur.items.push(LITERAL);
          i = end < 0 ? expr.length : end + 2;
          break;
        }
        cur.items.push(LITERAL);
        if (e === 'p' || e === 'P') {
          table();
          i = unicodeClassEnd(i);
        } else i = classChar(i)[1];
        break;
      }
      default: {
        cur.items.push(LITERAL);
        i += (expr.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
      }
    }
  }
  for (let outer = stack.pop(); outer; outer = stack.pop()) {
    outer.items.push(groupItem(cur));
    cur = outer;
  }
  return { steps: refused ? steps : steps + groupItem(cur).size * INSTRUCTION_STEPS, names, openers };
}

// ------------------------------------------------------------ the regexp

/** A search ran out of the steps it was allowed. */
class Exhausted extends Error {}

/**
 * The subject of searches as re2js reads it: Go's view of the string (Go reads each byte of
 * invalid UTF-8, a lone surrogate here, as U+FFFD: one unit either way), counting the reads that
 * re2js's engines make through charCodeAt, up to an allowance.
 */
class Subject extends String {
  reads = 0;
  allowed = Infinity;

  constructor(s: string) {
    super(s.toWellFormed());
  }

  override charCodeAt(index: number): number {
    if (++this.reads > this.allowed) throw new Exhausted();
    return super.charCodeAt(index);
  }
}

function runeWidth(s: string, pos: number): number {
  return (s.codePointAt(pos) ?? 0) > 0xffff ? 2 : 1;
}

type TemplatePart = string | number | { name: string };

/** A compiled Go regexp. */
export class GoRegexp {
  readonly expr: string;
  private readonly re: Engine;
  private readonly size: number;
  private readonly names: string[];

  constructor(expr: string) {
    if (expr.length > MAX_PATTERN_LENGTH) throw new LimitError(`regular expression exceeds ${MAX_PATTERN_LENGTH} characters`);
    if (!expr.isWellFormed()) {
      const bad = [...expr].findIndex((c) => !c.isWellFormed());
      throw new RegexSyntaxError(`error parsing regexp: invalid UTF-8: \`${[...expr].slice(bad).join('')}\``);
    }
    const { steps, names, openers } = scan(expr);
    spend(steps);
    // Go allows a name on several groups, re2js does not: it then gets them named by number.
    const named = names.filter((n) => n !== '');
    let compiled = expr;
    if (new Set(named).size < named.length) {
      compiled = '';
      let from = 0;
      for (const [start, end, group] of openers) {
        compiled += `${expr.slice(from, start)}(?P<_${group}>`;
        from = end;
      }
      compiled += expr.slice(from);
    }
    try {
      this.re = RE2JS.compile(compiled).re2();
    } catch (e) {
      // Go quotes the offending text even when it is empty
      const input = e instanceof RE2JSSyntaxException && e.input !== compiled ? (e.input ?? '') : expr;
      if (e instanceof RE2JSSyntaxException) throw new RegexSyntaxError(`error parsing regexp: ${e.error}: \`${input}\``);
      throw e;
    }
    this.expr = expr;
    this.names = names;
    this.size = this.re.numberOfInstructions() as number;
  }

  /**
   * Go's doExecute: the leftmost-first match in `s` (Go's view of it) starting the search at
   * `pos` (what precedes counts for ^ and \b), with `ncap` submatch offsets; null if none.
   */
  private search(s: Subject, pos: number, ncap: number): number[] | null {
    spend(SEARCH_STEPS);
    const perRead = (this.size * (1 + ncap / CAPTURES_PER_EXTRA_COST)) / INSTRUCTION_READS_PER_STEP;
    s.reads = 0;
    s.allowed = (meter.limit - meter.units) / perRead;
    let found: [boolean, number[] | null] = [false, null];
    try {
      found = this.re.matchWithGroup(s, pos, s.length, UNANCHORED, ncap / 2) as [boolean, number[] | null];
    } catch (e) {
      if (!(e instanceof Exhausted)) throw e;
    }
    spend(Math.ceil(s.reads * perRead)); // past the limit when the search was stopped
    const [ok, m] = found;
    if (this.re.prefixComplete) spend(Math.ceil(((ok && m!.length > 0 ? m![1]! : s.length) - pos) / SCANNED_CHARS_PER_STEP));
    return ok ? m : null;
  }

  matchString(s: string): boolean {
    return this.search(new Subject(s), 0, 0) !== null;
  }

  findString(s: string): string {
    const m = this.search(new Subject(s), 0, 2);
    return m ? s.slice(m[0], m[1]) : '';
  }

  /** Go's allMatches loop (an empty match right after a previous match is skipped). */
  private allMatches(s: string, n: number): [number, number][] {
    const subject = new Subject(s);
    const out: [number, number][] = [];
    if (n < 0) n = s.length + 1;
    let pos = 0;
    let prevEnd = -1;
    while (out.length < n && pos <= s.length) {
      const m = this.search(subject, pos, 2);
      if (!m) break;
      const [start, end] = [m[0]!, m[1]!];
      const accept = !(end === pos && start === prevEnd);
      pos = end === pos ? pos + runeWidth(s, pos) : end;
      prevEnd = end;
      if (accept) {
        out.push([start, end]);
        checkItems(out.length);
      }
    }
    return out;
  }

  findAllString(s: string, n: number): string[] | null {
    const ms = this.allMatches(s, n);
    return ms.length === 0 ? null : ms.map(([a, b]) => s.slice(a, b));
  }

  /** Go's replaceAll loop; `ncap` offsets reach `repl`. */
  private replaceAll(src: string, ncap: number, repl: (m: number[]) => string): string {
    const subject = new Subject(src);
    let out = '';
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= src.length) {
      const m = this.search(subject, searchPos, ncap);
      if (!m) break;
      const [a0, a1] = [m[0]!, m[1]!];
      out += src.slice(lastMatchEnd, a0);
      if (a1 > lastMatchEnd || a0 === 0) out += repl(m);
      checkLength(out.length);
      lastMatchEnd = a1;
      const width = runeWidth(src, searchPos);
      if (searchPos + width > a1) searchPos += width;
      else if (searchPos + 1 > a1) searchPos++;
      else searchPos = a1;
    }
    return out + src.slice(lastMatchEnd);
  }

  replaceAllString(src: string, template: string): string {
    if (!template.includes('$')) return this.replaceAll(src, 2, () => template);
    const parts = this.parseTemplate(template);
    return this.replaceAll(src, 2 * (this.re.numSubexp + 1), (m) => {
      spend(parts.length / TEMPLATE_PARTS_PER_STEP);
      let out = '';
      for (const p of parts) {
        if (typeof p === 'string') out += p;
        else {
          // by name, the first group of that name that took part in the match
          const g = typeof p === 'number' ? p : this.names.findIndex((n, i) => n === p.name && (m[2 * i] ?? -1) >= 0);
          if (g >= 0 && (m[2 * g] ?? -1) >= 0) out += src.slice(m[2 * g], m[2 * g + 1]);
        }
      }
      return out;
    });
  }

  replaceAllLiteralString(src: string, repl: string): string {
    return this.replaceAll(src, 2, () => repl);
  }

  /**
   * Go's Regexp.Expand template, parsed once into literal text and group references. $$ is a
   * dollar, $name and ${name} name a group by number (no leading zeros) or by name, and a $ that
   * starts neither stays literal; a group that is not there expands to nothing.
   */
  private parseTemplate(template: string): TemplatePart[] {
    const parts: TemplatePart[] = [];
    const ref = /\$(?:(\$)|\{([\p{L}\p{Nd}_]+)\}|([\p{L}\p{Nd}_]+))/uy;
    let text = '';
    let i = 0;
    while (i < template.length) {
      const d = template.indexOf('$', i);
      if (d < 0) break;
      text += template.slice(i, d);
      ref.lastIndex = d;
      const m = ref.exec(template);
      if (!m) {
        text += '$';
        i = d + 1;
        continue;
      }
      i = ref.lastIndex;
      if (m[1]) {
        text += '$';
        continue;
      }
      const name = m[2] ?? m[3]!;
      const num = /^(0|[1-9][0-9]{0,8})$/.test(name) ? Number(name) : -1;
      // a group that is not there never expands: left out
      if (num > this.re.numSubexp || (num < 0 && !this.names.includes(name))) continue;
      if (text !== '') parts.push(text);
      text = '';
      parts.push(num >= 0 ? num : { name });
    }
    text += template.slice(i);
    if (text !== '') parts.push(text);
    return parts;
  }

  split(s: string, n: number): string[] | null {
    if (n === 0) return null;
    if (this.expr.length > 0 && s.length === 0) return [''];
    const out: string[] = [];
    let beg = 0;
    let end = 0;
    for (const [a, b] of this.allMatches(s, n)) {
      if (n > 0 && out.length === n - 1) break;
      end = a;
      if (b !== 0) out.push(s.slice(beg, end));
      beg = b;
    }
    if (end !== s.length) out.push(s.slice(beg));
    return out;
  }
}

/** regexp.MustCompile's panic text for a bad pattern. */
export function compileOrPanicText(expr: string): GoRegexp | string {
  try {
    return new GoRegexp(expr);
  } catch (e) {
    if (e instanceof RegexSyntaxError) return `regexp: Compile(${goBackquote(expr)}): ${e.message}`;
    throw e;
  }
}

function goBackquote(s: string): string {
  return s.includes('`') ? JSON.stringify(s) : '`' + s + '`';
}

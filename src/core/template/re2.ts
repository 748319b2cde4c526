// Go regexp (RE2 syntax) on top of JS RegExp: the pattern is translated token by token so that
// Go's meaning is kept (`.`, `\s`, `\z`, POSIX classes, inline flags, literal braces), and
// constructs RE2 rejects (lookaround, backreferences) are errors here too, which also keeps
// user templates free of catastrophic backtracking features. Match iteration, replacement
// expansion and Split follow Go's algorithms (empty-match rules included).

import { checkLength } from './limits.ts';

export class RegexSyntaxError extends Error {}

const POSIX: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const PERL_CLASS: Readonly<Record<string, string>> = {
  d: '0-9',
  s: '\\t\\n\\f\\r ',
  w: '0-9A-Za-z_',
};

const JS_SYNTAX = new Set('^$\\.*+?()[]{}|/-'.split(''));

function lit(ch: string, inClass: boolean): string {
  if (JS_SYNTAX.has(ch) && (inClass || ch !== '-')) return '\\' + ch;
  const c = ch.codePointAt(0)!;
  if (c < 0x20 || c === 0x7f) return `\\x${c.toString(16).padStart(2, '0')}`;
  return ch;
}

function err(msg: string, what: string): never {
  throw new RegexSyntaxError(`error parsing regexp: ${msg}: \`${what}\``);
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

class Translator {
  src: string;
  pos = 0;
  groups = 0;
  names: string[] = [];

  constructor(src: string) {
    this.src = src;
  }

  peek(off = 0): string {
    return this.src[this.pos + off] ?? '';
  }

  /** Parses a sequence until ')' or end; returns JS source. */
  seq(flags: Flags, depth: number): string {
    let out = '';
    let canRepeat = false;
    while (this.pos < this.src.length) {
      const ch = this.src[this.pos]!;
      if (ch === ')') {
        if (depth === 0) err('unexpected )', this.src);
        return out;
      }
      if (ch === '|') {
        this.pos++;
        out += '|';
        canRepeat = false;
        continue;
      }
      if ('*+?'.includes(ch) || (ch === '{' && this.repeatAt() !== null)) {
        let op: string;
        if (ch === '{') {
          const r = this.repeatAt()!;
          if (r.min > 1000 || r.max > 1000) err('invalid repeat count', r.text);
          op = r.text;
          this.pos += r.text.length;
        } else {
          op = ch;
          this.pos++;
        }
        if (!canRepeat) err('missing argument to repetition operator', op);
        let lazy = false;
        if (this.peek() === '?') {
          lazy = true;
          this.pos++;
        }
        if ((this.peek() !== '' && '*+?'.includes(this.peek())) || (this.peek() === '{' && this.repeatAt() !== null)) {
          err('invalid nested repetition operator', op + this.peek());
        }
        out += op + (lazy !== flags.U ? '?' : '');
        canRepeat = false;
        continue;
      }
      if (ch === '(') {
        const g = this.group(flags, depth);
        if (g.flagsOnly) {
          // (?flags) applies to the rest of the current group; flags act per atom, so no wrapper
          flags = g.flags;
          canRepeat = false;
          continue;
        }
        out += g.js;
        canRepeat = true;
        continue;
      }
      out += this.atom(flags);
      canRepeat = true;
    }
    return out;
  }

  repeatAt(): { text: string; min: number; max: number } | null {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
    if (!m) return null;
    const min = Number(m[1]);
    const max = m[2] ? (m[3] ? Number(m[3]) : -1) : min;
    if (max !== -1 && max < min) err('invalid repeat count', m[0]);
    return { text: m[0], min, max };
  }

  group(flags: Flags, depth: number): { js: string; flagsOnly: boolean; flags: Flags } {
    const start = this.pos;
    this.pos++; // (
    let prefix = '(';
    let inner = flags;
    if (this.peek() === '?') {
      const rest = this.src.slice(this.pos);
      const named = /^\?P?<([A-Za-z0-9_]+)>/.exec(rest);
      if (named) {
        this.pos += named[0].length;
        this.groups++;
        this.names.push(named[1]!);
        prefix = `(?<${named[1]}>`;
      } else {
        const fm = /^\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(rest);
        if (!fm || (fm[2] !== undefined && fm[2] === '' )) {
          const bad = /^\?[=!<]/.test(rest) ? rest.slice(0, rest[1] === '<' ? 3 : 2) : rest.slice(0, 2);
          err('invalid or unsupported Perl syntax', '(' + bad);
        }
        inner = { ...flags };
        for (const f of fm[1]!) inner[f as keyof Flags] = true;
        for (const f of fm[2] ?? '') inner[f as keyof Flags] = false;
        this.pos += fm[0].length;
        if (fm[3] === ')') return { js: '', flagsOnly: true, flags: inner };
        prefix = '(?:';
      }
    } else {
      this.groups++;
      this.names.push('');
    }
    const body = this.seq(inner, depth + 1);
    if (this.peek() !== ')') err('missing closing )', this.src.slice(start));
    this.pos++;
    return { js: prefix + body + ')', flagsOnly: false, flags };
  }

  caseFold(js: string, flags: Flags): string {
    return flags.i ? `(?i:${js})` : js;
  }

  atom(flags: Flags): string {
    const ch = this.src[this.pos]!;
    switch (ch) {
      case '.':
        this.pos++;
        return flags.s ? '[\\s\\S]' : '[^\\n]';
      case '^':
        this.pos++;
        return flags.m ? '(?:^|(?<=\\n))' : '(?<![\\s\\S])';
      case '$':
        this.pos++;
        return flags.m ? '(?:$|(?=\\n))' : '(?![\\s\\S])';
      case '[':
        return this.caseFold(this.charClass(), flags);
      case '\\':
        return this.escape(flags, false);
      default: {
        const c = String.fromCodePoint(this.src.codePointAt(this.pos)!);
        this.pos += c.length;
        return this.caseFold(lit(c, false), flags);
      }
    }
  }

  /** An escape outside or inside a class; returns JS text (class content when inClass). */
  escape(flags: Flags, inClass: boolean): string {
    const e = this.src[this.pos + 1];
    if (e === undefined) err('trailing backslash at end of expression', '');
    this.pos += 2;
    if (e >= '1' && e <= '9') err('invalid escape sequence', '\\' + e);
    const perl = PERL_CLASS[e.toLowerCase()];
    if (perl !== undefined) {
      if (e === e.toLowerCase()) return inClass ? perl : `[${perl}]`;
      if (inClass) err('invalid escape sequence', '\\' + e); // negated Perl class inside a class: rare, refuse
      return `[^${perl}]`;
    }
    if (!inClass) {
      if (e === 'A') return '(?<![\\s\\S])';
      if (e === 'z') return '(?![\\s\\S])';
      if (e === 'b') return '\\b';
      if (e === 'B') return '\\B';
      if (e === 'Q') {
        const end = this.src.indexOf('\\E', this.pos);
        const text = end < 0 ? this.src.slice(this.pos) : this.src.slice(this.pos, end);
        this.pos = end < 0 ? this.src.length : end + 2;
        return this.caseFold([...text].map((c) => lit(c, false)).join(''), flags);
      }
    }
    if (e === 'p' || e === 'P') {
      let name: string;
      if (this.peek() === '{') {
        const close = this.src.indexOf('}', this.pos);
        if (close < 0) err('invalid character class range', '\\' + e + this.src.slice(this.pos));
        name = this.src.slice(this.pos + 1, close);
        this.pos = close + 1;
      } else {
        name = this.peek();
        this.pos++;
      }
      let neg = e === 'P';
      if (name.startsWith('^')) {
        neg = !neg;
        name = name.slice(1);
      }
      const prop = name.length <= 2 ? `\\p{${name}}` : `\\p{Script=${name}}`;
      try {
        new RegExp(prop, 'u');
      } catch {
        err('invalid character class range', `\\${e}{${name}}`);
      }
      return neg ? prop.replace('\\p', '\\P') : prop;
    }
    const simple: Record<string, string> = { a: '\\x07', f: '\\f', t: '\\t', n: '\\n', r: '\\r', v: '\\v' };
    if (simple[e]) return simple[e];
    if (e === 'x') {
      let hex: string;
      if (this.peek() === '{') {
        const close = this.src.indexOf('}', this.pos);
        hex = this.src.slice(this.pos + 1, close);
        this.pos = close + 1;
      } else {
        hex = this.src.slice(this.pos, this.pos + 2);
        this.pos += 2;
      }
      if (!/^[0-9a-fA-F]{1,8}$/.test(hex) || parseInt(hex, 16) > 0x10ffff) err('invalid escape sequence', '\\x' + hex);
      return `\\u{${hex}}`;
    }
    if (e === '0') {
      const oct = /^[0-7]{0,2}/.exec(this.src.slice(this.pos))![0];
      this.pos += oct.length;
      return `\\u{${parseInt('0' + oct, 8).toString(16)}}`;
    }
    if (/[!-/:-@[-`{-~]/.test(e)) return lit(e, inClass);
    err('invalid escape sequence', '\\' + e);
  }

  charClass(): string {
    const start = this.pos;
    this.pos++; // [
    let neg = false;
    if (this.peek() === '^') {
      neg = true;
      this.pos++;
    }
    let body = '';
    let first = true;
    while (this.pos < this.src.length && (this.peek() !== ']' || first)) {
      first = false;
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(this.src.slice(this.pos));
      if (posix) {
        const set = POSIX[posix[2]!];
        if (set === undefined) err('invalid character class range', posix[0]);
        if (posix[1]) err('invalid character class range', posix[0]); // negated POSIX inside a class: refuse
        body += set;
        this.pos += posix[0].length;
        continue;
      }
      const lo = this.classChar();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '') {
        this.pos++;
        const hi = this.classChar();
        body += `${lo}-${hi}`;
      } else body += lo;
    }
    if (this.peek() !== ']') err('missing closing ]', this.src.slice(start));
    this.pos++;
    return `[${neg ? '^' : ''}${neg ? body + '' : body}]`;
  }

  classChar(): string {
    if (this.peek() === '\\') return this.escape({ i: false, m: false, s: false, U: false }, true);
    const c = String.fromCodePoint(this.src.codePointAt(this.pos)!);
    this.pos += c.length;
    return lit(c, true);
  }
}

/** A compiled Go regexp. */
export class GoRegexp {
  readonly expr: string;
  private readonly re: RegExp;
  readonly numSubexp: number;
  readonly names: string[];

  constructor(expr: string) {
    this.expr = expr;
    const t = new Translator(expr);
    const js = t.seq({ i: false, m: false, s: false, U: false }, 0);
    try {
      this.re = new RegExp(js, 'gu');
    } catch (e) {
      throw new RegexSyntaxError(`error parsing regexp: ${(e as Error).message}: \`${expr}\``);
    }
    this.numSubexp = t.groups;
    this.names = t.names;
  }

  private execAt(s: string, pos: number): RegExpExecArray | null {
    this.re.lastIndex = pos;
    return this.re.exec(s);
  }

  matchString(s: string): boolean {
    return this.execAt(s, 0) !== null;
  }

  findString(s: string): string {
    return this.execAt(s, 0)?.[0] ?? '';
  }

  /** Go's allMatches loop (empty matches abutting a previous match are skipped). */
  findAllIndex(s: string, n: number): RegExpExecArray[] {
    const out: RegExpExecArray[] = [];
    if (n < 0) n = s.length + 1;
    let pos = 0;
    let prevEnd = -1;
    while (out.length < n && pos <= s.length) {
      const m = this.execAt(s, pos);
      if (!m) break;
      const end = m.index + m[0].length;
      let accept = true;
      if (end === pos) {
        if (m.index === prevEnd) accept = false;
        pos += runeWidth(s, pos);
      } else pos = end;
      prevEnd = end;
      if (accept) out.push(m);
    }
    return out;
  }

  findAllString(s: string, n: number): string[] | null {
    const ms = this.findAllIndex(s, n);
    return ms.length === 0 ? null : ms.map((m) => m[0]);
  }

  replaceAll(src: string, repl: (m: RegExpExecArray) => string): string {
    let out = '';
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= src.length) {
      const m = this.execAt(src, searchPos);
      if (!m) break;
      const a0 = m.index;
      const a1 = a0 + m[0].length;
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
    return this.replaceAll(src, (m) => this.expand(template, m));
  }

  replaceAllLiteralString(src: string, repl: string): string {
    return this.replaceAll(src, () => repl);
  }

  /** Go's Regexp.Expand: $1, ${1}, $name, ${name}; $$ is a dollar; a bad $ stays literal. */
  expand(template: string, m: RegExpExecArray): string {
    let out = '';
    let i = 0;
    while (i < template.length) {
      const d = template.indexOf('$', i);
      if (d < 0) {
        out += template.slice(i);
        break;
      }
      out += template.slice(i, d);
      i = d + 1;
      if (template[i] === '$') {
        out += '$';
        i++;
        continue;
      }
      let name: string | null = null;
      const braced = /^\{([A-Za-z0-9_]+)\}/.exec(template.slice(i));
      if (braced) {
        name = braced[1]!;
        i += braced[0].length;
      } else {
        const bare = /^[A-Za-z0-9_]+/.exec(template.slice(i));
        if (bare) {
          name = bare[0];
          i += bare[0].length;
        }
      }
      if (name === null) {
        out += '$';
        continue;
      }
      if (/^[0-9]+$/.test(name)) {
        const num = Number(name);
        if (num <= this.numSubexp) out += m[num] ?? '';
      } else {
        const idx = this.names.indexOf(name);
        if (idx >= 0) out += m[idx + 1] ?? '';
      }
    }
    return out;
  }

  split(s: string, n: number): string[] | null {
    if (n === 0) return null;
    if (this.expr.length > 0 && s.length === 0) return [''];
    const matches = this.findAllIndex(s, n);
    const out: string[] = [];
    let beg = 0;
    let end = 0;
    for (const m of matches) {
      if (n > 0 && out.length === n - 1) break;
      end = m.index;
      if (m.index + m[0].length !== 0) out.push(s.slice(beg, end));
      beg = m.index + m[0].length;
    }
    if (end !== s.length) out.push(s.slice(beg));
    return out;
  }
}

function runeWidth(s: string, pos: number): number {
  if (pos >= s.length) return 1;
  const c = s.codePointAt(pos)!;
  return c > 0xffff ? 2 : 1;
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

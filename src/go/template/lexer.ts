// The lexer of Go's text/template/parse, as a state machine over code points. Positions are
// JS string indices; errors convert them to Go's byte-based columns where they are reported.
import { goQuote } from './gofmt.ts';

export type ItemType =
  | 'error'
  | 'bool'
  | 'char'
  | 'charConstant'
  | 'comment'
  | 'complex'
  | 'assign'
  | 'declare'
  | 'EOF'
  | 'field'
  | 'identifier'
  | 'leftDelim'
  | 'leftParen'
  | 'number'
  | 'pipe'
  | 'rawString'
  | 'rightDelim'
  | 'rightParen'
  | 'space'
  | 'string'
  | 'text'
  | 'variable'
  // keywords
  | 'block'
  | 'break'
  | 'continue'
  | 'dot'
  | 'define'
  | 'else'
  | 'end'
  | 'if'
  | 'nil'
  | 'range'
  | 'template'
  | 'with';

export interface Item {
  typ: ItemType;
  pos: number;
  val: string;
  line: number;
}

const KEYWORDS: ReadonlyMap<string, ItemType> = new Map<string, ItemType>([
  ['.', 'dot'],
  ['block', 'block'],
  ['break', 'break'],
  ['continue', 'continue'],
  ['define', 'define'],
  ['else', 'else'],
  ['end', 'end'],
  ['if', 'if'],
  ['range', 'range'],
  ['nil', 'nil'],
  ['template', 'template'],
  ['with', 'with'],
]);

const EOF = -1;
const LEFT_DELIM = '{{';
const RIGHT_DELIM = '}}';
const LEFT_COMMENT = '/*';
const RIGHT_COMMENT = '*/';
const TRIM_MARKER_LEN = 2; // marker plus the space before or after it

export function isSpace(r: number): boolean {
  return r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
}

const LETTER = /^\p{L}$/u;
const DIGIT = /^\p{Nd}$/u;

export function isAlphaNumeric(r: number): boolean {
  if (r < 0) return false;
  if (r < 0x80) {
    return r === 0x5f || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  }
  const s = String.fromCodePoint(r);
  return LETTER.test(s) || DIGIT.test(s);
}

function hasLeftTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && s[at] === '-' && isSpace(s.charCodeAt(at + 1));
}

function hasRightTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && isSpace(s.charCodeAt(at)) && s[at + 1] === '-';
}

const SPACE_RUN_END = /[ \t\r\n]*$/;
const SPACE_RUN_START = /^[ \t\r\n]*/;

/** Formats a rune the way Go's %#U does: U+0041 'A'. */
export function formatRuneU(r: number): string {
  const hex = r.toString(16).toUpperCase().padStart(4, '0');
  return r >= 0x20 && r !== 0x7f ? `U+${hex} '${String.fromCodePoint(r)}'` : `U+${hex}`;
}

type StateFn = ((l: Lexer) => StateFn) | null;

export class Lexer {
  readonly name: string;
  input: string;
  pos = 0;
  start = 0;
  atEOF = false;
  parenDepth = 0;
  line = 1;
  startLine = 1;
  item: Item = { typ: 'EOF', pos: 0, val: 'EOF', line: 1 };
  insideAction = false;
  breakOK = true;
  continueOK = true;
  private lastWidth = 0;

  constructor(name: string, input: string) {
    this.name = name;
    this.input = input;
  }

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      this.lastWidth = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos) ?? EOF;
    this.lastWidth = r > 0xffff ? 2 : 1;
    this.pos += this.lastWidth;
    if (r === 0x0a) this.line++;
    return r;
  }

  peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  backup(): void {
    if (!this.atEOF && this.pos > 0) {
      const lo = this.input.charCodeAt(this.pos - 1);
      const w = lo >= 0xdc00 && lo <= 0xdfff && this.pos >= 2 ? 2 : 1;
      this.pos -= w;
      if (lo === 0x0a) this.line--;
    }
  }

  thisItem(typ: ItemType): Item {
    const i: Item = { typ, pos: this.start, val: this.input.slice(this.start, this.pos), line: this.startLine };
    this.start = this.pos;
    this.startLine = this.line;
    return i;
  }

  emit(typ: ItemType): StateFn {
    return this.emitItem(this.thisItem(typ));
  }

  emitItem(i: Item): StateFn {
    this.item = i;
    return null;
  }

  ignore(): void {
    this.line += countNewlines(this.input.slice(this.start, this.pos));
    this.start = this.pos;
    this.startLine = this.line;
  }

  accept(valid: string): boolean {
    const r = this.next();
    if (r !== EOF && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }

  acceptRun(valid: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || !valid.includes(String.fromCodePoint(r))) break;
    }
    this.backup();
  }

  errorf(msg: string): StateFn {
    this.item = { typ: 'error', pos: this.start, val: msg, line: this.startLine };
    this.start = 0;
    this.pos = 0;
    this.input = '';
    return null;
  }

  nextItem(): Item {
    this.item = { typ: 'EOF', pos: this.pos, val: 'EOF', line: this.startLine };
    let state: StateFn = this.insideAction ? lexInsideAction : lexText;
    while (state) state = state(this);
    return this.item;
  }

  atRightDelim(): { delim: boolean; trimSpaces: boolean } {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(RIGHT_DELIM, this.pos + TRIM_MARKER_LEN)) {
      return { delim: true, trimSpaces: true };
    }
    return { delim: this.input.startsWith(RIGHT_DELIM, this.pos), trimSpaces: false };
  }

  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    // eof . , | : ) (
    if (r === EOF || r === 0x2e || r === 0x2c || r === 0x7c || r === 0x3a || r === 0x29 || r === 0x28) return true;
    return this.input.startsWith(RIGHT_DELIM, this.pos);
  }

  scanNumber(): boolean {
    this.accept('+-');
    let digits = '0123456789_';
    if (this.accept('0')) {
      if (this.accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (this.accept('oO')) digits = '01234567_';
      else if (this.accept('bB')) digits = '01_';
    }
    this.acceptRun(digits);
    if (this.accept('.')) this.acceptRun(digits);
    if (digits.length === 11 && this.accept('eE')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    if (digits.length === 23 && this.accept('pP')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    this.accept('i');
    if (isAlphaNumeric(this.peek())) {
      this.next();
      return false;
    }
    return true;
  }
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

function lexText(l: Lexer): StateFn {
  const x = l.input.indexOf(LEFT_DELIM, l.pos);
  if (x >= 0) {
    if (x > l.pos) {
      l.pos = x;
      let trimLength = 0;
      const delimEnd = l.pos + LEFT_DELIM.length;
      if (hasLeftTrimMarker(l.input, delimEnd)) {
        trimLength = SPACE_RUN_END.exec(l.input.slice(l.start, l.pos))?.[0].length ?? 0;
      }
      l.pos -= trimLength;
      l.line += countNewlines(l.input.slice(l.start, l.pos));
      const i = l.thisItem('text');
      l.pos += trimLength;
      l.ignore();
      if (i.val.length > 0) return l.emitItem(i);
    }
    return lexLeftDelim;
  }
  l.pos = l.input.length;
  if (l.pos > l.start) {
    l.line += countNewlines(l.input.slice(l.start, l.pos));
    return l.emit('text');
  }
  return l.emit('EOF');
}

function lexLeftDelim(l: Lexer): StateFn {
  l.pos += LEFT_DELIM.length;
  const trimSpace = hasLeftTrimMarker(l.input, l.pos);
  const afterMarker = trimSpace ? TRIM_MARKER_LEN : 0;
  if (l.input.startsWith(LEFT_COMMENT, l.pos + afterMarker)) {
    l.pos += afterMarker;
    l.ignore();
    return lexComment;
  }
  const i = l.thisItem('leftDelim');
  l.insideAction = true;
  l.pos += afterMarker;
  l.ignore();
  l.parenDepth = 0;
  return l.emitItem(i);
}

function lexComment(l: Lexer): StateFn {
  l.pos += LEFT_COMMENT.length;
  const x = l.input.indexOf(RIGHT_COMMENT, l.pos);
  if (x < 0) return l.errorf('unclosed comment');
  l.pos = x + RIGHT_COMMENT.length;
  const { delim, trimSpaces } = l.atRightDelim();
  if (!delim) return l.errorf('comment ends before closing delimiter');
  l.line += countNewlines(l.input.slice(l.start, l.pos));
  l.thisItem('comment');
  if (trimSpaces) l.pos += TRIM_MARKER_LEN;
  l.pos += RIGHT_DELIM.length;
  if (trimSpaces) l.pos += SPACE_RUN_START.exec(l.input.slice(l.pos))?.[0].length ?? 0;
  l.ignore();
  return lexText;
}

function lexRightDelim(l: Lexer): StateFn {
  const { trimSpaces } = l.atRightDelim();
  if (trimSpaces) {
    l.pos += TRIM_MARKER_LEN;
    l.ignore();
  }
  l.pos += RIGHT_DELIM.length;
  const i = l.thisItem('rightDelim');
  if (trimSpaces) {
    l.pos += SPACE_RUN_START.exec(l.input.slice(l.pos))?.[0].length ?? 0;
    l.ignore();
  }
  l.insideAction = false;
  return l.emitItem(i);
}

function lexInsideAction(l: Lexer): StateFn {
  if (l.atRightDelim().delim) {
    if (l.parenDepth === 0) return lexRightDelim;
    return l.errorf('unclosed left paren');
  }
  const r = l.next();
  if (r === EOF) return l.errorf('unclosed action');
  if (isSpace(r)) {
    l.backup(); // put the space back in case we have " -}}"
    return lexSpace;
  }
  switch (r) {
    case 0x3d: // =
      return l.emit('assign');
    case 0x3a: // :
      if (l.next() !== 0x3d) return l.errorf('expected :=');
      return l.emit('declare');
    case 0x7c: // |
      return l.emit('pipe');
    case 0x22: // "
      return lexQuote;
    case 0x60: // `
      return lexRawQuote;
    case 0x24: // $
      return lexVariable;
    case 0x27: // '
      return lexChar;
    case 0x28: // (
      l.parenDepth++;
      return l.emit('leftParen');
    case 0x29: // )
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf('unexpected right paren');
      return l.emit('rightParen');
    default:
  }
  if (r === 0x2e) {
    // '.' starts a field unless a digit follows (then it starts a number)
    if (l.pos < l.input.length) {
      const c = l.input.charCodeAt(l.pos);
      if (c < 0x30 || c > 0x39) return lexField;
    }
    l.backup();
    return lexNumber;
  }
  if (r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r < 0x7f && r > 0x20) return l.emit('char');
  return l.errorf(`unrecognized character in action: ${formatRuneU(r)}`);
}

function lexSpace(l: Lexer): StateFn {
  let numSpaces = 0;
  while (isSpace(l.peek())) {
    l.next();
    numSpaces++;
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(RIGHT_DELIM, l.pos - 1 + TRIM_MARKER_LEN)) {
    l.backup(); // before the space
    if (numSpaces === 1) return lexRightDelim;
  }
  return l.emit('space');
}

function lexIdentifier(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.errorf(`bad character ${formatRuneU(r)}`);
    const kw = KEYWORDS.get(word);
    if (kw !== undefined && kw !== 'dot') {
      if ((kw === 'break' && !l.breakOK) || (kw === 'continue' && !l.continueOK)) return l.emit('identifier');
      return l.emit(kw);
    }
    if (word[0] === '.') return l.emit('field');
    if (word === 'true' || word === 'false') return l.emit('bool');
    return l.emit('identifier');
  }
}

function lexField(l: Lexer): StateFn {
  return lexFieldOrVariable(l, 'field');
}

function lexVariable(l: Lexer): StateFn {
  if (l.atTerminator()) return l.emit('variable');
  return lexFieldOrVariable(l, 'variable');
}

function lexFieldOrVariable(l: Lexer, typ: 'field' | 'variable'): StateFn {
  if (l.atTerminator()) return l.emit(typ === 'variable' ? 'variable' : 'dot');
  let r: number;
  for (;;) {
    r = l.next();
    if (!isAlphaNumeric(r)) {
      l.backup();
      break;
    }
  }
  if (!l.atTerminator()) return l.errorf(`bad character ${formatRuneU(r)}`);
  return l.emit(typ);
}

function lexQuoted(l: Lexer, close: number, what: string, typ: ItemType): StateFn {
  for (;;) {
    let r = l.next();
    if (r === 0x5c) {
      r = l.next();
      if (r !== EOF && r !== 0x0a) continue;
    }
    if (r === EOF || r === 0x0a) return l.errorf(`unterminated ${what}`);
    if (r === close) break;
  }
  return l.emit(typ);
}

function lexChar(l: Lexer): StateFn {
  return lexQuoted(l, 0x27, 'character constant', 'charConstant');
}

function lexQuote(l: Lexer): StateFn {
  return lexQuoted(l, 0x22, 'quoted string', 'string');
}

function lexRawQuote(l: Lexer): StateFn {
  for (;;) {
    const r = l.next();
    if (r === EOF) return l.errorf('unterminated raw quoted string');
    if (r === 0x60) break;
  }
  return l.emit('rawString');
}

function lexNumber(l: Lexer): StateFn {
  if (!l.scanNumber()) return l.errorf(`bad number syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 0x2b || sign === 0x2d) {
    if (!l.scanNumber() || l.input[l.pos - 1] !== 'i') {
      return l.errorf(`bad number syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
    }
    return l.emit('complex');
  }
  return l.emit('number');
}

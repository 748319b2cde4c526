// The label selector string grammar, ported from apimachinery v0.21.3 labels.Parse: a lexer that
// scans the whole input first, then a recursive-descent parser with one token of lookahead.
import { compareGo, fromJSON } from '../strings.ts';
import { newRequirement, selectorOf, SelectorError, validateLabelKey, type Operator, type Requirement, type Selector } from './selector.ts';

type Tok = 'eos' | ')' | ',' | '!' | '==' | '=' | '>' | 'id' | 'in' | '<' | '!=' | 'notin' | '(';

const literalTokens: Record<string, Tok> = {
  ')': ')', ',': ',', '!': '!', '==': '==', '=': '=', '>': '>', in: 'in', '<': '<', '!=': '!=', notin: 'notin', '(': '(',
};

function literalToken(s: string): Tok | undefined {
  return Object.hasOwn(literalTokens, s) ? literalTokens[s] : undefined;
}

const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string): boolean => ch.length === 1 && '=!(),><'.includes(ch);

interface Item {
  tok: Tok;
  lit: string;
}

// Go's lexer reads a 0 byte both at the end and for a NUL in the input (consuming it), and
// stops scanning at the first end-of-string token; '' stands for that 0 here.
function lex(s: string): Item[] {
  let pos = 0;
  const read = (): string => {
    if (pos >= s.length) return '';
    const ch = s[pos++] ?? '';
    return ch === '\0' ? '' : ch;
  };
  const items: Item[] = [];
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '') {
      items.push({ tok: 'eos', lit: '' });
      return items;
    }
    if (isSpecial(ch)) {
      // The longest run of special symbols that is still a token ("!=" but "=" then "(").
      let tok = literalToken(ch) ?? 'eos';
      let buffer = ch;
      for (;;) {
        const next = read();
        if (next === '') break;
        const longer = isSpecial(next) ? literalToken(buffer + next) : undefined;
        if (longer === undefined) {
          pos--;
          break;
        }
        buffer += next;
        tok = longer;
      }
      items.push({ tok, lit: buffer });
    } else {
      let buffer = ch;
      for (;;) {
        const next = read();
        if (next === '') break;
        if (isSpecial(next) || isWhitespace(next)) {
          pos--;
          break;
        }
        buffer += next;
      }
      items.push({ tok: literalToken(buffer) ?? 'id', lit: buffer });
    }
  }
}

const binaryOperators: Partial<Record<Tok, Operator>> = {
  in: 'in', '=': '=', '==': '==', '>': 'gt', '<': 'lt', notin: 'notin', '!=': '!=',
};

class Parser {
  private position = 0;
  private readonly items: Item[];

  constructor(items: Item[]) {
    this.items = items;
  }

  // Where values are expected, 'in' and 'notin' are plain identifiers ("x in (in)").
  lookahead(values = true): Item {
    const item = this.items[this.position] ?? { tok: 'eos', lit: '' };
    return values && (item.tok === 'in' || item.tok === 'notin') ? { tok: 'id', lit: item.lit } : item;
  }

  consume(values = true): Item {
    const item = this.lookahead(values);
    this.position++;
    return item;
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead();
      if (tok === 'eos') return requirements;
      if (tok !== 'id' && tok !== '!') throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        requirements.push(this.parseRequirement());
      } catch (e) {
        throw e instanceof SelectorError ? new SelectorError(`unable to parse requirement: ${e.message}`) : e;
      }
      const next = this.consume();
      if (next.tok === 'eos') return requirements;
      if (next.tok !== ',') throw new SelectorError(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead();
      if (after.tok !== 'id' && after.tok !== '!') throw new SelectorError(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  private parseRequirement(): Requirement {
    let unary: Operator | undefined;
    let { tok, lit } = this.consume();
    if (tok === '!') {
      unary = '!';
      ({ tok, lit } = this.consume());
    }
    if (tok !== 'id') throw new SelectorError(`found '${lit}', expected: identifier`);
    const keyErr = validateLabelKey(lit, '<nil>');
    if (keyErr !== undefined) throw new SelectorError(keyErr);
    const key = lit;
    const next = this.lookahead().tok;
    if (next === 'eos' || next === ',') unary ??= 'exists';
    if (unary !== undefined) return newRequirement(key, unary, []);
    const opItem = this.consume(false);
    const op = binaryOperators[opItem.tok];
    if (op === undefined) throw new SelectorError(`found '${opItem.lit}', expected: '=', '!=', '==', 'in', notin'`);
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    return newRequirement(key, op, [...values].sort(compareGo));
  }

  private parseValues(): Set<string> {
    const open = this.consume();
    if (open.tok !== '(') throw new SelectorError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead();
    if (tok === ')') {
      this.consume();
      return new Set(['']);
    }
    if (tok !== 'id' && tok !== ',') throw new SelectorError(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.parseIdentifiersList();
    this.consume(); // the ')' that ended the list
    return values;
  }

  // A possibly empty, comma separated list of possibly empty identifiers: "(,a,,b,)".
  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume();
      if (tok === 'id') {
        s.add(lit);
        const next = this.lookahead();
        if (next.tok === ')') return s;
        if (next.tok !== ',') throw new SelectorError(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === ',') {
        if (s.size === 0) s.add('');
        const next = this.lookahead().tok;
        if (next === ')') {
          s.add('');
          return s;
        }
        if (next === ',') {
          this.consume();
          s.add('');
        }
      } else {
        throw new SelectorError(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const { tok } = this.lookahead();
    if (tok === 'eos' || tok === ',') return new Set(['']);
    const item = this.consume();
    if (item.tok !== 'id') throw new SelectorError(`found '${item.lit}', expected: identifier`);
    return new Set([item.lit]);
  }
}

/** labels.Parse: the selector string grammar (`a=b,c in (x,y),!d`). Throws SelectorError. */
export function parseSelector(s: string): Selector {
  return selectorOf(new Parser(lex(fromJSON(s))).parse());
}

// The parser of Go's text/template/parse: the node tree, the recursive-descent parser with its
// three-token lookahead, variable scoping, define/block/template and Go's parse error texts.
import { Lexer, type Item, type ItemType } from './lexer.ts';
import { TemplateError } from './errors.ts';
import { goQuote } from './gofmt.ts';
import { parseGoFloat, parseGoInt, unquoteChar, unquoteGoString } from './literals.ts';

interface Base {
  pos: number;
}
export interface TextNode extends Base {
  type: 'text';
  text: string;
}
export interface CommentNode extends Base {
  type: 'comment';
}
export interface ListNode extends Base {
  type: 'list';
  nodes: Node[];
}
export interface PipeNode extends Base {
  type: 'pipe';
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
export interface ActionNode extends Base {
  type: 'action';
  line: number;
  pipe: PipeNode;
}
export interface CommandNode extends Base {
  type: 'command';
  args: ArgNode[];
}
export interface IdentifierNode extends Base {
  type: 'identifier';
  ident: string;
}
export interface VariableNode extends Base {
  type: 'variable';
  ident: string[];
}
export interface DotNode extends Base {
  type: 'dot';
}
export interface NilNode extends Base {
  type: 'nil';
}
export interface FieldNode extends Base {
  type: 'field';
  ident: string[];
}
export interface ChainNode extends Base {
  type: 'chain';
  node: ArgNode;
  field: string[];
}
export interface BoolNode extends Base {
  type: 'bool';
  value: boolean;
}
export interface NumberNode extends Base {
  type: 'number';
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  complex: [number, number];
  int64: bigint;
  uint64: bigint;
  float64: number;
  text: string;
}
export interface StringNode extends Base {
  type: 'string';
  quoted: string;
  text: string;
}
export interface BranchNode extends Base {
  type: 'if' | 'range' | 'with';
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
export interface BreakNode extends Base {
  type: 'break';
  line: number;
}
export interface ContinueNode extends Base {
  type: 'continue';
  line: number;
}
export interface TemplateNode extends Base {
  type: 'template';
  line: number;
  name: string;
  pipe: PipeNode | null;
}
interface EndNode extends Base {
  type: 'end';
}
interface ElseNode extends Base {
  type: 'else';
  line: number;
}

/** Operands of a command. */
export type ArgNode =
  | IdentifierNode
  | VariableNode
  | DotNode
  | NilNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode
  | PipeNode;

export type Node =
  | TextNode
  | CommentNode
  | ListNode
  | ActionNode
  | CommandNode
  | ArgNode
  | BranchNode
  | BreakNode
  | ContinueNode
  | TemplateNode
  | EndNode
  | ElseNode;

/** A parsed template body, with the text it came from for error positions. */
export interface Tree {
  name: string;
  parseName: string;
  root: ListNode;
  text: string;
}

/** The Go source form of a node, as Go's Node.String() writes it (used in error messages). */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'text':
      return n.text;
    case 'comment':
      return '{{/* */}}';
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'pipe': {
      let s = '';
      if (n.decl.length > 0) s = n.decl.map(nodeString).join(', ') + (n.isAssign ? ' = ' : ' := ');
      return s + n.cmds.map(nodeString).join(' | ');
    }
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'identifier':
      return n.ident;
    case 'variable':
      return n.ident.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'field':
      return n.ident.map((i) => '.' + i).join('');
    case 'chain': {
      const head = n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node);
      return head + n.field.map((f) => '.' + f).join('');
    }
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'if':
    case 'range':
    case 'with': {
      const els = n.elseList ? `{{else}}${nodeString(n.elseList)}` : '';
      return `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}${els}{{end}}`;
    }
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
    case 'template':
      return `{{template ${JSON.stringify(n.name)}${n.pipe ? ' ' + nodeString(n.pipe) : ''}}}`;
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
  }
}

/** How Go's parser prints a token in "unexpected X in Y". */
function itemString(i: Item): string {
  if (i.typ === 'EOF') return 'EOF';
  if (i.typ === 'error') return i.val;
  if (KEYWORD_ITEMS.has(i.typ)) return `<${i.val}>`;
  const chars = [...i.val];
  if (chars.length > 10) return `${goQuote(chars.slice(0, 10).join(''))}...`;
  return goQuote(i.val);
}

const KEYWORD_ITEMS: ReadonlySet<ItemType> = new Set<ItemType>([
  'block',
  'break',
  'continue',
  'dot',
  'define',
  'else',
  'end',
  'if',
  'nil',
  'range',
  'template',
  'with',
]);

/** The function names a template may call, and those refused with a reason. */
export interface FunctionNames {
  has(name: string): boolean;
  refusal(name: string): string | undefined;
}

/** Thrown inside the parser; converted to TemplateError by parseTrees. */
class ParseAbort extends Error {}

class Parser {
  tree: Tree;
  lex: Lexer;
  token: Item[] = [];
  peekCount = 0;
  vars: string[] = ['$'];
  treeSet: Map<string, Tree>;
  actionLine = 0;
  rangeDepth = 0;
  stackDepth = 0;
  funcs: FunctionNames;

  constructor(tree: Tree, lex: Lexer, treeSet: Map<string, Tree>, funcs: FunctionNames) {
    this.tree = tree;
    this.lex = lex;
    this.treeSet = treeSet;
    this.funcs = funcs;
  }

  errorf(msg: string): never {
    const line = this.token[0]?.line ?? 1;
    throw new ParseAbort(`template: ${this.tree.parseName}:${line}: ${msg}`);
  }

  next(): Item {
    if (this.peekCount > 0) this.peekCount--;
    else this.token[0] = this.lex.nextItem();
    return this.token[this.peekCount]!;
  }
  backup(): void {
    this.peekCount++;
  }
  backup2(t1: Item): void {
    this.token[1] = t1;
    this.peekCount = 2;
  }
  backup3(t2: Item, t1: Item): void {
    this.token[1] = t1;
    this.token[2] = t2;
    this.peekCount = 3;
  }
  peek(): Item {
    if (this.peekCount > 0) return this.token[this.peekCount - 1]!;
    this.peekCount = 1;
    this.token[0] = this.lex.nextItem();
    return this.token[0];
  }
  nextNonSpace(): Item {
    for (;;) {
      const t = this.next();
      if (t.typ !== 'space') return t;
    }
  }
  peekNonSpace(): Item {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }
  expect(expected: ItemType, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== expected) this.unexpected(t, context);
    return t;
  }
  unexpected(token: Item, context: string): never {
    if (token.typ === 'error') {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.tree.parseName}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${itemString(token)}${extra}`);
    }
    this.errorf(`unexpected ${itemString(token)} in ${context}`);
  }

  /** Sub-parser for a define/block body sharing this lexer and tree set. */
  child(name: string): Parser {
    const t: Tree = { name, parseName: this.tree.parseName, root: newList(0), text: this.tree.text };
    const p = new Parser(t, this.lex, this.treeSet, this.funcs);
    p.token = this.token;
    p.peekCount = this.peekCount;
    return p;
  }
  /** Hands the lookahead back after a child parser consumed tokens. */
  resume(p: Parser): void {
    this.token = p.token;
    this.peekCount = p.peekCount;
  }

  add(): void {
    const existing = this.treeSet.get(this.tree.name);
    if (!existing || isEmptyTree(existing.root)) {
      this.treeSet.set(this.tree.name, this.tree);
      return;
    }
    if (!isEmptyTree(this.tree.root)) {
      this.errorf(`template: multiple definition of template ${goQuote(this.tree.name)}`);
    }
  }

  parse(): void {
    this.tree.root = newList(this.peek().pos);
    while (this.peek().typ !== 'EOF') {
      if (this.peek().typ === 'leftDelim') {
        const delim = this.next();
        if (this.nextNonSpace().typ === 'define') {
          const p = this.child('definition');
          p.parseDefinition();
          this.resume(p);
          continue;
        }
        this.backup2(delim);
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      this.tree.root.nodes.push(n);
    }
  }

  parseDefinition(): void {
    const context = 'define clause';
    const t = this.nextNonSpace();
    if (t.typ !== 'string' && t.typ !== 'rawString') this.unexpected(t, context);
    this.tree.name = this.unquote(t.val);
    this.expect('rightDelim', context);
    const [list, end] = this.itemList();
    this.tree.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    this.add();
  }

  unquote(s: string): string {
    const r = unquoteGoString(s);
    if (r === null) this.errorf('invalid syntax');
    return r;
  }

  itemList(): [ListNode, Node] {
    const list = newList(this.peekNonSpace().pos);
    while (this.peekNonSpace().typ !== 'EOF') {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return [list, n];
      list.nodes.push(n);
    }
    this.errorf('unexpected EOF');
  }

  textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case 'text':
        return { type: 'text', pos: token.pos, text: token.val };
      case 'leftDelim': {
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      case 'comment':
        return { type: 'comment', pos: token.pos };
      default:
        this.unexpected(token, 'input');
    }
  }

  action(): Node {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case 'block':
        return this.blockControl();
      case 'break':
      case 'continue': {
        const t = this.nextNonSpace();
        if (t.typ !== 'rightDelim') this.unexpected(t, `{{${token.typ}}}`);
        if (this.rangeDepth === 0) this.errorf(`{{${token.typ}}} outside {{range}}`);
        return { type: token.typ, pos: token.pos, line: token.line };
      }
      case 'else':
        return this.elseControl();
      case 'end':
        return { type: 'end', pos: this.expect('rightDelim', 'end').pos };
      case 'if':
      case 'range':
      case 'with':
        return this.branch(token.typ);
      case 'template':
        return this.templateControl();
      default:
    }
    this.backup();
    const t = this.peek();
    return { type: 'action', pos: t.pos, line: t.line, pipe: this.pipeline('command', 'rightDelim') };
  }

  pipeline(context: string, end: ItemType): PipeNode {
    const token = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: token.pos, line: token.line, isAssign: false, decl: [], cmds: [] };
    decls: for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== 'variable') break;
      this.next();
      const tokenAfterVariable = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === 'assign' || next.typ === 'declare') {
        pipe.isAssign = next.typ === 'assign';
        this.nextNonSpace();
        pipe.decl.push(newVariable(v.pos, v.val));
        this.vars.push(v.val);
      } else if (next.typ === 'char' && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(newVariable(v.pos, v.val));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === 'variable' || p === 'rightDelim' || p === 'rightParen') continue decls;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      } else if (tokenAfterVariable.typ === 'space') {
        this.backup3(v, tokenAfterVariable);
      } else {
        this.backup2(v);
      }
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      if (token.typ === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (token.typ) {
        case 'bool':
        case 'charConstant':
        case 'complex':
        case 'dot':
        case 'field':
        case 'identifier':
        case 'number':
        case 'nil':
        case 'rawString':
        case 'string':
        case 'variable':
        case 'leftParen':
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(token, context);
      }
    }
  }

  checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]!.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  branch(context: 'if' | 'range' | 'with'): BranchNode {
    const nvars = this.vars.length;
    try {
      const pipe = this.pipeline(context, 'rightDelim');
      if (context === 'range') this.rangeDepth++;
      const [list, next] = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        if ((context === 'if' || context === 'with') && this.peek().typ === context) {
          this.next();
          elseList = newList(next.pos);
          elseList.nodes.push(this.branch(context));
        } else {
          const [l, n] = this.itemList();
          elseList = l;
          if (n.type !== 'end') this.errorf(`expected end; found ${nodeString(n)}`);
        }
      }
      return { type: context, pos: pipe.pos, line: pipe.line, pipe, list, elseList };
    } finally {
      this.vars.length = nvars;
    }
  }

  elseControl(): Node {
    const peek = this.peekNonSpace();
    if (peek.typ === 'if' || peek.typ === 'with') return { type: 'else', pos: peek.pos, line: peek.line };
    const token = this.expect('rightDelim', 'else');
    return { type: 'else', pos: token.pos, line: token.line };
  }

  templateName(token: Item, context: string): string {
    if (token.typ !== 'string' && token.typ !== 'rawString') this.unexpected(token, context);
    return this.unquote(token.val);
  }

  blockControl(): Node {
    const context = 'block clause';
    const token = this.nextNonSpace();
    const name = this.templateName(token, context);
    const pipe = this.pipeline(context, 'rightDelim');
    const p = this.child(name);
    const [list, end] = p.itemList();
    p.tree.root = list;
    if (end.type !== 'end') this.errorf(`unexpected ${nodeString(end)} in ${context}`);
    p.add();
    this.resume(p);
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  templateControl(): Node {
    const context = 'template clause';
    const token = this.nextNonSpace();
    const name = this.templateName(token, context);
    let pipe: PipeNode | null = null;
    if (this.nextNonSpace().typ !== 'rightDelim') {
      this.backup();
      pipe = this.pipeline(context, 'rightDelim');
    }
    return { type: 'template', pos: token.pos, line: token.line, name, pipe };
  }

  command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.typ === 'space') continue;
      if (token.typ === 'rightDelim' || token.typ === 'rightParen') this.backup();
      else if (token.typ !== 'pipe') this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  operand(): ArgNode | null {
    let node = this.term();
    if (!node) return null;
    if (this.peek().typ === 'field') {
      const pos = this.peek().pos;
      const fields: string[] = [];
      while (this.peek().typ === 'field') fields.push(this.next().val.slice(1));
      switch (node.type) {
        case 'field':
          node = { type: 'field', pos, ident: [...node.ident, ...fields] };
          break;
        case 'variable':
          node = { type: 'variable', pos, ident: [...node.ident, ...fields] };
          break;
        case 'bool':
        case 'string':
        case 'number':
        case 'nil':
        case 'dot':
          this.errorf(`unexpected . after term ${goQuote(nodeString(node))}`);
          break;
        default:
          node = { type: 'chain', pos, node, field: fields };
      }
    }
    return node;
  }

  term(): ArgNode | null {
    const token = this.nextNonSpace();
    switch (token.typ) {
      case 'identifier': {
        const refusal = this.funcs.refusal(token.val);
        if (refusal !== undefined) this.errorf(`function ${goQuote(token.val)} is not available: ${refusal}`);
        if (!this.funcs.has(token.val)) this.errorf(`function ${goQuote(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, ident: token.val };
      }
      case 'dot':
        return { type: 'dot', pos: token.pos };
      case 'nil':
        return { type: 'nil', pos: token.pos };
      case 'variable':
        return this.useVar(token.pos, token.val);
      case 'field':
        return { type: 'field', pos: token.pos, ident: token.val.slice(1).split('.') };
      case 'bool':
        return { type: 'bool', pos: token.pos, value: token.val === 'true' };
      case 'charConstant':
      case 'complex':
      case 'number':
        return this.newNumber(token);
      case 'leftParen': {
        if (this.stackDepth >= 10000) this.errorf('max expression depth exceeded');
        this.stackDepth++;
        try {
          return this.pipeline('parenthesized pipeline', 'rightParen');
        } finally {
          this.stackDepth--;
        }
      }
      case 'string':
      case 'rawString':
        return { type: 'string', pos: token.pos, quoted: token.val, text: this.unquote(token.val) };
      default:
    }
    this.backup();
    return null;
  }

  useVar(pos: number, name: string): VariableNode {
    const v = newVariable(pos, name);
    if (!this.vars.includes(v.ident[0]!)) this.errorf(`undefined variable ${goQuote(v.ident[0]!)}`);
    return v;
  }

  newNumber(token: Item): NumberNode {
    const text = token.val;
    const n: NumberNode = {
      type: 'number',
      pos: token.pos,
      isInt: false,
      isUint: false,
      isFloat: false,
      isComplex: false,
      complex: [0, 0],
      int64: 0n,
      uint64: 0n,
      float64: 0,
      text,
    };
    if (token.typ === 'charConstant') {
      const r = unquoteChar(text);
      if (r === null) this.errorf('invalid syntax');
      if (r.tail !== "'") this.errorf(`malformed character constant: ${text}`);
      n.isInt = n.isUint = n.isFloat = true;
      n.int64 = n.uint64 = BigInt(r.rune);
      n.float64 = r.rune;
      return n;
    }
    if (token.typ === 'complex' || text.endsWith('i')) {
      const c = parseComplex(text, token.typ === 'complex');
      if (c) {
        n.isComplex = true;
        n.complex = c;
        simplifyComplex(n);
        return n;
      }
      if (token.typ === 'complex') this.errorf(`expected integer`);
    }
    const u = parseGoInt(text, false);
    if (typeof u === 'bigint') {
      n.isUint = true;
      n.uint64 = u;
    }
    const i = parseGoInt(text, true);
    if (typeof i === 'bigint') {
      n.isInt = true;
      n.int64 = i;
      if (i === 0n) {
        n.isUint = true;
        n.uint64 = 0n;
      }
    }
    if (n.isInt) {
      n.isFloat = true;
      n.float64 = Number(n.int64);
    } else if (n.isUint) {
      n.isFloat = true;
      n.float64 = Number(n.uint64);
    } else {
      const f = parseGoFloat(text);
      if (f !== null) {
        if (!/[.eEpP]/.test(text)) this.errorf(`integer overflow: ${goQuote(text)}`);
        n.isFloat = true;
        n.float64 = f;
        if (Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
          n.isInt = true;
          n.int64 = BigInt(f);
        }
        if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
          n.isUint = true;
          n.uint64 = BigInt(f);
        }
      }
    }
    if (!n.isInt && !n.isUint && !n.isFloat) this.errorf(`illegal number syntax: ${goQuote(text)}`);
    return n;
  }
}

/** "1+2i" (fmt.Sscan of a complex128) or an imaginary literal "1.5i". */
function parseComplex(text: string, withReal: boolean): [number, number] | null {
  if (!withReal) {
    const im = parseGoFloat(text.slice(0, -1));
    return im === null ? null : [0, im];
  }
  const m = /^([+-]?[^+-]*(?:[eEpP][+-]?[^+-]*)?)([+-].*)i$/.exec(text);
  const re = m ? parseGoFloat(m[1]!) : null;
  const im = m ? parseGoFloat(m[2]!) : null;
  return re === null || im === null ? null : [re, im];
}

function simplifyComplex(n: NumberNode): void {
  n.isFloat = n.complex[1] === 0;
  if (n.isFloat) {
    n.float64 = n.complex[0];
    n.isInt = Number.isInteger(n.float64) && Math.abs(n.float64) < 2 ** 63;
    if (n.isInt) n.int64 = BigInt(n.float64);
    n.isUint = Number.isInteger(n.float64) && n.float64 >= 0 && n.float64 < 2 ** 64;
    if (n.isUint) n.uint64 = BigInt(n.float64);
  }
}

function newList(pos: number): ListNode {
  return { type: 'list', pos, nodes: [] };
}

function newVariable(pos: number, ident: string): VariableNode {
  return { type: 'variable', pos, ident: ident.split('.') };
}

function isEmptyTree(n: Node | null): boolean {
  if (!n) return true;
  switch (n.type) {
    case 'comment':
      return true;
    case 'list':
      return n.nodes.every(isEmptyTree);
    case 'text':
      return n.text.trim() === '';
    default:
      return false;
  }
}

/**
 * Parses a template and its define/block definitions into a tree set keyed by name, the way
 * template.New(name).Funcs(...).Parse(text) does.
 */
export function parseTrees(name: string, text: string, funcs: FunctionNames): Map<string, Tree> {
  const treeSet = new Map<string, Tree>();
  const lex = new Lexer(name, text);
  lex.breakOK = !funcs.has('break');
  lex.continueOK = !funcs.has('continue');
  const tree: Tree = { name, parseName: name, root: newList(0), text };
  const p = new Parser(tree, lex, treeSet, funcs);
  try {
    p.parse();
    p.add();
  } catch (e) {
    if (e instanceof ParseAbort) throw new TemplateError(e.message);
    throw e;
  }
  return treeSet;
}

// Execution of a parsed template, ported from Go's text/template exec.go: pipelines, field and
// method evaluation, argument conversion (evalArg/validateType), control flow and Go's error texts.
import { goByteLen } from './bytes.ts';
import { TemplateError } from './errors.ts';
import { formatV } from './gofmt.ts';
import { Budget, checkItems, checkString, LimitError, MAX_BUILT_BYTES, MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES_PER_OBJECT, MAX_STEPS, MAX_STEPS_PER_OBJECT, MAX_TEMPLATE_DEPTH, meter, MIB, OutOfSteps, UNITS_PER_STEP } from './limits.ts';
import {
  nodeString,
  type ArgNode,
  type ChainNode,
  type CommandNode,
  type FieldNode,
  type IdentifierNode,
  type Node,
  type NumberNode,
  type PipeNode,
  type Tree,
  type VariableNode,
  type BranchNode,
} from './parse.ts';
import {
  INVALID,
  NIL_ANY,
  T,
  asList,
  asMap,
  assignableTo,
  deref,
  fieldByName,
  indirect,
  int,
  isExported,
  isIntKind,
  isTrue,
  isUintKind,
  isValid,
  lenOf,
  mapKey,
  methodByName,
  ptrTo,
  sortedEntries,
  asBig,
  type FuncSig,
  type GoType,
  type Value,
  float64,
  str,
  bool,
  mkInt,
} from './values.ts';

/** An error a Go function returns (its second result); `error calling NAME: <message>`. */
export class GoError extends Error {}

export interface FuncDef {
  sig: FuncSig;
  fn: (args: Value[]) => Value;
}

export type FuncTable = ReadonlyMap<string, FuncDef>;

/** Builtins that exec special-cases (lazy and/or, call). */
const SPECIAL = new Set(['and', 'or', 'call']);

class ExecAbort extends Error {}
/** {{break}} and {{continue}} unwind to their range as these two exceptions. */
class LoopControl extends Error {}
const BREAK = new LoopControl('break');
const CONTINUE = new LoopControl('continue');

interface Variable {
  name: string;
  value: Value;
}

/** Marks a value read from an interface{}-typed slot: Go's field errors then name that type. */
function fromSlot(container: GoType, v: Value): Value {
  return container.elem?.kind === 'interface' && isValid(v) ? { ...v, iface: true } : v;
}

function staticTypeName(v: Value): string {
  return v.iface ? 'interface {}' : v.t.name;
}

/** The work a value stands for: 64 bytes of a string or []byte, one list item or map entry. */
function cost(v: Value): number {
  if (v.t.kind === 'string') return (v.v as string).length >> 6;
  if (v.t.kind === 'slice' && v.t.elem?.kind === 'uint8') return lenOf(v) >> 6;
  if (v.t.kind === 'slice' || v.t.kind === 'map') return lenOf(v);
  return 0;
}

export class State {
  private node: Node | null = null;
  private vars: Variable[];
  private depth = 0;
  private out: string[] = [];
  private outBytes = 0;
  /** Shared with the executions before it (one object's overrides), or its own. */
  private readonly budget: Budget;
  private readonly maxSteps: number;
  private readonly maxOutBytes: number;
  /** What this execution's calls returned so far (see MAX_BUILT_BYTES). */
  private builtBytes = 0;
  private tmplName: string;
  private readonly trees: ReadonlyMap<string, Tree>;
  private readonly funcs: FuncTable;
  private readonly builtinNames: ReadonlySet<string>;

  constructor(
    trees: ReadonlyMap<string, Tree>,
    funcs: FuncTable,
    builtinNames: ReadonlySet<string>,
    name: string,
    data: Value,
    budget: Budget,
  ) {
    this.budget = budget;
    this.maxSteps = Math.min(MAX_STEPS, budget.steps);
    this.maxOutBytes = Math.min(MAX_OUTPUT_BYTES, budget.outputBytes);
    this.trees = trees;
    this.funcs = funcs;
    this.builtinNames = builtinNames;
    this.tmplName = name;
    this.vars = [{ name: '$', value: data }];
  }

  run(tree: Tree, dot: Value): string {
    meter.units = 0;
    meter.limit = this.maxSteps;
    meter.exceeded = this.stepsExceeded();
    try {
      this.walk(dot, tree.root);
      return this.out.join('');
    } catch (e) {
      // steps run out outside a call: sorting a map's keys to range over it, printing a value
      if (e instanceof OutOfSteps) this.errorf(e.message);
      throw e;
    } finally {
      meter.limit = Infinity;
      this.budget.steps -= Math.min(meter.units, this.maxSteps);
      this.budget.outputBytes -= Math.min(this.outBytes, this.maxOutBytes);
    }
  }

  /** Counts execution steps against the limit; `at` is the node to blame, else the current one. */
  private charge(n: number, at?: Node): void {
    meter.units += n;
    if (meter.units <= meter.limit) return;
    if (at) this.at(at);
    this.errorf(meter.exceeded);
  }

  /** Counts a string a call returned against what one execution may build. */
  private built(bytes: number): void {
    this.builtBytes += bytes;
    if (this.builtBytes > MAX_BUILT_BYTES) throw new LimitError(`the execution's calls return more than ${MAX_BUILT_BYTES >> 20} MiB together`);
  }

  /** Which limit running out of steps hits: this execution's, or the object's shared budget. */
  private stepsExceeded(): string {
    return this.maxSteps < MAX_STEPS ? `the templates for one object exceed ${MAX_STEPS_PER_OBJECT} steps together` : `execution exceeds ${MAX_STEPS} steps`;
  }

  private emit(s: string): void {
    this.outBytes += Buffer.byteLength(s, 'utf8');
    if (this.outBytes > this.maxOutBytes) this.errorf(this.maxOutBytes < MAX_OUTPUT_BYTES ? `the templates for one object output more than ${MAX_OUTPUT_BYTES_PER_OBJECT >> 20} MiB together` : `output exceeds ${MIB}`);
    this.charge(s.length >> 6);
    this.out.push(s);
  }

  private tree(): Tree {
    return this.trees.get(this.tmplName)!;
  }

  errorf(msg: string): never {
    const name = this.tmplName;
    if (!this.node) throw new ExecAbort(`template: ${name}: ${msg}`);
    const text = this.tree().text;
    const before = text.slice(0, this.node.pos);
    const nl = before.lastIndexOf('\n');
    const col = goByteLen(nl < 0 ? before : before.slice(nl + 1));
    const line = 1 + (before.match(/\n/g)?.length ?? 0);
    const where = `${this.tree().parseName}:${line}:${col}`;
    throw new ExecAbort(`template: ${where}: executing ${JSON.stringify(name)} at <${nodeString(this.node)}>: ${msg}`);
  }

  private at(n: Node): void {
    this.node = n;
  }

  private mark(): number {
    return this.vars.length;
  }
  private pop(mark: number): void {
    this.vars.length = mark;
  }
  /** The innermost variable of that name; a template may declare thousands to look past. */
  private variable(name: string): Variable {
    let i = this.vars.length - 1;
    while (i >= 0 && this.vars[i]!.name !== name) i--;
    this.charge((this.vars.length - i) / UNITS_PER_STEP.looped);
    if (i < 0) this.errorf(`undefined variable: ${name}`);
    return this.vars[i]!;
  }
  private setVar(name: string, value: Value): void {
    this.variable(name).value = value;
  }
  private setTopVar(n: number, value: Value): void {
    this.vars[this.vars.length - n]!.value = value;
  }
  private varValue(name: string): Value {
    return this.variable(name).value;
  }

  walk(dot: Value, node: Node): void {
    this.at(node);
    this.charge(1);
    switch (node.type) {
      case 'action': {
        const val = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, val);
        return;
      }
      case 'break':
        throw BREAK;
      case 'continue':
        throw CONTINUE;
      case 'comment':
        return;
      case 'if':
      case 'with':
        this.walkIfOrWith(node, dot);
        return;
      case 'list':
        for (const n of node.nodes) this.walk(dot, n);
        return;
      case 'range':
        this.walkRange(dot, node);
        return;
      case 'template':
        this.walkTemplate(dot, node.name, node.pipe);
        return;
      case 'text':
        this.emit(node.text);
        return;
      default:
        this.errorf(`unknown node: ${nodeString(node)}`);
    }
  }

  private walkIfOrWith(node: BranchNode, dot: Value): void {
    const mark = this.mark();
    try {
      const val = this.evalPipeline(dot, node.pipe);
      const truth = isTrue(val);
      if (truth) this.walk(node.type === 'with' ? val : dot, node.list);
      else if (node.elseList) this.walk(dot, node.elseList);
    } finally {
      this.pop(mark);
    }
  }

  private walkRange(dot: Value, r: BranchNode): void {
    this.at(r);
    const outer = this.mark();
    try {
      const val = indirect(this.evalPipeline(dot, r.pipe)).v;
      const mark = this.mark();
      const decl = r.pipe.decl;
      const oneIteration = (index: Value, elem: Value): void => {
        if (decl.length > 0) {
          if (r.pipe.isAssign) this.setVar(decl[0]!.ident[0]!, decl.length > 1 ? index : elem);
          else this.setTopVar(1, elem);
        }
        if (decl.length > 1) {
          if (r.pipe.isAssign) this.setVar(decl[1]!.ident[0]!, elem);
          else this.setTopVar(2, index);
        }
        this.at(r);
        this.charge(1);
        try {
          this.walk(elem, r.list);
        } catch (e) {
          if (e !== CONTINUE) throw e;
        } finally {
          this.pop(mark);
        }
      };
      let ran = false;
      const k = val.t.kind;
      if (isIntKind(k) || isUintKind(k)) {
        if (decl.length > 1) this.errorf(`can't use ${formatV(val)} to iterate over more than one variable`);
        const n = asBig(val);
        for (let i = 0n; i < n; i++) {
          ran = true;
          oneIteration(INVALID, mkInt(val.t, i));
        }
      } else if (k === 'slice') {
        asList(val).forEach((e, i) => {
          ran = true;
          oneIteration(int(i), fromSlot(val.t, { ...e, addr: true }));
        });
      } else if (k === 'map') {
        for (const [key, e] of sortedEntries(asMap(val))) {
          ran = true;
          oneIteration({ t: val.t.key!, v: key }, fromSlot(val.t, e));
        }
      } else if (k !== 'invalid') {
        this.errorf(`range can't iterate over ${formatV(val)}`);
      }
      if (!ran && r.elseList) this.walk(dot, r.elseList);
    } catch (e) {
      if (e !== BREAK) throw e;
    } finally {
      this.pop(outer);
    }
  }

  private walkTemplate(dot: Value, name: string, pipe: PipeNode | null): void {
    const tree = this.trees.get(name);
    if (!tree) this.errorf(`template ${JSON.stringify(name)} not defined`);
    if (this.depth === MAX_TEMPLATE_DEPTH) this.errorf(`exceeded maximum template depth (${MAX_TEMPLATE_DEPTH})`);
    const newDot = pipe ? this.evalPipeline(dot, pipe) : INVALID;
    const saved = { vars: this.vars, name: this.tmplName };
    this.depth++;
    this.tmplName = name;
    this.vars = [{ name: '$', value: newDot }];
    try {
      this.walk(newDot, tree.root);
    } finally {
      this.depth--;
      this.vars = saved.vars;
      this.tmplName = saved.name;
    }
  }

  evalPipeline(dot: Value, pipe: PipeNode): Value {
    this.at(pipe);
    let value: Value | null = null;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // An empty-interface result is unwrapped: a nil one becomes "no value".
      if (value.t.kind === 'interface' && value.v === null) value = INVALID;
      else if (value.iface) value = { ...value, iface: false };
    }
    const result = value ?? INVALID;
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0]!, result);
      else this.vars.push({ name: v.ident[0]!, value: result });
    }
    return result;
  }

  private notAFunction(args: ArgNode[], final: Value | null): void {
    if (args.length > 1 || final !== null) this.errorf(`can't give argument to non-function ${nodeString(args[0]!)}`);
  }

  private evalCommand(dot: Value, cmd: CommandNode, final: Value | null): Value {
    const args = cmd.args;
    const first = args[0]!;
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, args, final);
      case 'chain':
        return this.evalChainNode(dot, first, args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, args, final);
      case 'pipe':
        this.notAFunction(args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(dot, first, args, final);
      default:
    }
    this.at(first);
    this.notAFunction(args, final);
    switch (first.type) {
      case 'bool':
        return bool(first.value);
      case 'dot':
        return dot;
      case 'nil':
        this.errorf('nil is not a command');
        break;
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return str(first.text);
    }
    this.errorf(`can't evaluate command ${JSON.stringify(nodeString(first))}`);
  }

  private idealConstant(c: NumberNode): Value {
    this.at(c);
    if (c.isComplex) return { t: T.complex128, v: c.complex };
    const isHexInt = /^0[xX]/.test(c.text) && !/[pP]/.test(c.text);
    if (c.isFloat && !isHexInt && c.text[0] !== "'" && /[.eEpP]/.test(c.text)) return float64(c.float64);
    if (c.isInt) return int(c.int64);
    if (c.isUint) this.errorf(`${c.text} overflows int`);
    return INVALID;
  }

  private evalFieldNode(dot: Value, field: FieldNode, args: ArgNode[], final: Value | null): Value {
    this.at(field);
    return this.evalFieldChain(dot, dot, field, field.ident, args, final);
  }

  private evalChainNode(dot: Value, chain: ChainNode, args: ArgNode[], final: Value | null): Value {
    this.at(chain);
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const pipe = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(dot, pipe, chain, chain.field, args, final);
  }

  private evalVariableNode(dot: Value, v: VariableNode, args: ArgNode[], final: Value | null): Value {
    this.at(v);
    const value = this.varValue(v.ident[0]!);
    if (v.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(dot, value, v, v.ident.slice(1), args, final);
  }

  private evalFieldChain(
    dot: Value,
    receiver: Value,
    node: Node,
    ident: string[],
    args: ArgNode[],
    final: Value | null,
  ): Value {
    const n = ident.length;
    for (let i = 0; i < n - 1; i++) receiver = this.evalField(dot, ident[i]!, node, [], null, receiver);
    return this.evalField(dot, ident[n - 1]!, node, args, final, receiver);
  }

  private evalFunction(dot: Value, node: IdentifierNode, cmd: Node, args: ArgNode[], final: Value | null): Value {
    this.at(node);
    const name = node.ident;
    const fn = this.funcs.get(name);
    if (!fn) this.errorf(`${JSON.stringify(name)} is not a defined function`);
    return this.evalCall(dot, fn, this.builtinNames.has(name) && SPECIAL.has(name), cmd, name, args, final);
  }

  private evalField(
    dot: Value,
    fieldName: string,
    node: Node,
    args: ArgNode[],
    final: Value | null,
    receiver: Value,
  ): Value {
    this.charge(1);
    if (!isValid(receiver)) return INVALID;
    const typ = staticTypeName(receiver);
    const { v: rcv, isNil } = indirect(receiver);
    if (rcv.t.kind === 'interface' && isNil) this.errorf(`nil pointer evaluating ${typ}.${fieldName}`);
    const method = methodByName(rcv, fieldName);
    if (method) {
      const { m, recv } = method;
      return this.evalCall(
        dot,
        { sig: m.sig, fn: (a) => m.fn(recv, a) },
        false,
        node,
        fieldName,
        args,
        final,
      );
    }
    const hasArgs = args.length > 1 || final !== null;
    switch (rcv.t.kind) {
      case 'struct': {
        const f = fieldByName(rcv, fieldName);
        if (f) {
          if (!isExported(fieldName)) this.errorf(`${fieldName} is an unexported field of struct type ${typ}`);
          if (hasArgs) this.errorf(`${fieldName} has arguments but cannot be invoked as function`);
          return f;
        }
        break;
      }
      case 'map': {
        // a field name is a string, which a named key type (v1.ResourceName) does not accept
        if (rcv.t.key === T.string) {
          if (hasArgs) this.errorf(`${fieldName} is not a method but has arguments`);
          const m = asMap(rcv);
          const e = m.get(mapKey(m, fieldName));
          return e === undefined ? INVALID : fromSlot(rcv.t, e);
        }
        break;
      }
      case 'ptr': {
        const et = rcv.t.elem!;
        if (et.kind === 'struct' && !(et.fields ?? []).some((f) => f.name === fieldName) && !promoted(et, fieldName)) {
          break;
        }
        if (isNil) this.errorf(`nil pointer evaluating ${typ}.${fieldName}`);
        break;
      }
      default:
    }
    this.errorf(`can't evaluate field ${fieldName} in type ${typ}`);
  }

  private evalCall(
    dot: Value,
    fn: FuncDef,
    special: boolean,
    node: Node,
    name: string,
    allArgs: ArgNode[],
    final: Value | null,
  ): Value {
    const args = allArgs.slice(1);
    const { sig } = fn;
    const numIn = args.length + (final !== null ? 1 : 0);
    const numFixed = sig.variadic ? sig.params.length : args.length;
    if (sig.variadic) {
      if (numIn < sig.params.length) {
        this.errorf(`wrong number of args for ${name}: want at least ${sig.params.length} got ${args.length}`);
      }
    } else if (numIn !== sig.params.length) {
      this.errorf(`wrong number of args for ${name}: want ${sig.params.length} got ${numIn}`);
    }
    if (special && (name === 'and' || name === 'or')) {
      this.charge(1 + args.length, node);
      let v: Value = INVALID;
      for (const arg of args) {
        v = this.evalArg(dot, T.reflectValue, arg);
        if (isTrue(indirectIface(v)) === (name === 'or')) return v;
      }
      if (final !== null) v = final;
      return v;
    }
    const argv: Value[] = [];
    let i = 0;
    for (; i < numFixed && i < args.length; i++) argv.push(this.evalArg(dot, sig.params[i]!, args[i]!));
    if (sig.variadic) for (; i < args.length; i++) argv.push(this.evalArg(dot, sig.variadic, args[i]!));
    if (final !== null) {
      let t: GoType = sig.params[sig.params.length - 1] ?? sig.variadic!;
      if (sig.variadic) t = numIn - 1 < numFixed ? sig.params[numIn - 1]! : sig.variadic;
      argv.push(this.validateType(final, t));
    }
    if (special && name === 'call') {
      const callee = args.length === 0 ? reflectValueString(final!) : nodeString(args[0]!);
      this.at(node);
      this.errorf(`error calling call: ${callError(callee, argv[0]!)}`);
    }
    this.charge(1 + argv.length + argv.reduce((n, a) => n + cost(a), 0), node);
    try {
      const result = fn.fn(argv);
      if (result.t.kind === 'string') this.built(checkString(result.v as string).length);
      else if (result.t.kind === 'slice' || result.t.kind === 'map') checkItems(lenOf(result));
      this.charge(cost(result), node);
      // A call returns a new value, not addressable, unless it hands back a reflect.Value (index).
      return result.addr && sig.result !== T.reflectValue ? { ...result, addr: false } : result;
    } catch (e) {
      if (e instanceof GoError || e instanceof LimitError) {
        this.at(node);
        this.errorf(`error calling ${name}: ${e.message}`);
      }
      throw e;
    }
  }

  private validateType(value: Value, typ: GoType | null): Value {
    if (!isValid(value)) {
      if (typ === null) return INVALID;
      if (typ === T.reflectValue) return INVALID;
      if (canBeNil(typ)) return typ.kind === 'interface' ? NIL_ANY : { t: typ, v: null };
      this.errorf(`invalid value; expected ${typ.name}`);
    }
    if (typ === null || typ === T.reflectValue) return value;
    if (!assignableTo(value.t, typ)) {
      if (value.t.kind === 'ptr' && value.t.elem && assignableTo(value.t.elem, typ)) {
        if (value.v === null) this.errorf(`dereference of nil pointer of type ${typ.name}`);
        return deref(value);
      }
      this.errorf(`wrong type for value; expected ${typ.name}; got ${value.t.name}`);
    }
    return value;
  }

  private evalArg(dot: Value, typ: GoType | null, n: ArgNode): Value {
    this.at(n);
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        if (typ && canBeNil(typ)) return typ === T.reflectValue ? INVALID : typ.kind === 'interface' ? NIL_ANY : { t: typ, v: null };
        this.errorf(`cannot assign nil to ${typ?.name ?? '<nil>'}`);
        break;
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], null), typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(dot, n, [], null), typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, [n], null), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, [], null), typ);
      default:
    }
    if (typ === null || typ.kind === 'interface' || typ === T.reflectValue) return this.evalEmptyInterface(dot, n);
    const k = typ.kind;
    if (k === 'bool') {
      if (n.type === 'bool') return { t: typ, v: n.value };
      this.errorf(`expected bool; found ${nodeString(n)}`);
    }
    if (k === 'float32' || k === 'float64') {
      if (n.type === 'number' && n.isFloat) return { t: typ, v: n.float64 };
      this.errorf(`expected float; found ${nodeString(n)}`);
    }
    if (isIntKind(k)) {
      if (n.type === 'number' && n.isInt) return mkInt(typ, n.int64);
      this.errorf(`expected integer; found ${nodeString(n)}`);
    }
    if (isUintKind(k)) {
      if (n.type === 'number' && n.isUint) return mkInt(typ, n.uint64);
      this.errorf(`expected unsigned integer; found ${nodeString(n)}`);
    }
    if (k === 'string') {
      if (n.type === 'string') return { t: typ, v: n.text };
      this.errorf(`expected string; found ${nodeString(n)}`);
    }
    this.errorf(`can't handle ${nodeString(n)} for arg of type ${typ.name}`);
  }

  private evalEmptyInterface(dot: Value, n: ArgNode): Value {
    this.at(n);
    switch (n.type) {
      case 'bool':
        return bool(n.value);
      case 'number':
        return this.idealConstant(n);
      case 'string':
        return str(n.text);
      default:
        this.errorf(`can't handle assignment of ${nodeString(n)} to empty interface argument`);
    }
  }

  private printValue(n: Node, v: Value): void {
    this.at(n);
    if (v.t.kind === 'ptr') v = indirect(v).v;
    if (!isValid(v)) {
      this.emit('<no value>');
      return;
    }
    if (v.t.kind === 'func') this.errorf(`can't print ${nodeString(n)} of type ${v.t.name}`);
    // An addressable value whose pointer has String() prints through it (printableValue).
    if (v.addr && v.t.kind !== 'ptr' && v.t.ptrStringer && !v.t.stringer) v = { t: ptrTo(v.t), v };
    let text: string;
    try {
      text = formatV(v);
    } catch (e) {
      if (e instanceof LimitError && !(e instanceof OutOfSteps)) this.errorf(`output exceeds ${MIB}`);
      throw e;
    }
    this.emit(text);
  }
}

function promoted(t: GoType, name: string): boolean {
  return (t.fields ?? []).some((f) => f.embedded && f.type.kind === 'struct' && ((f.type.fields ?? []).some((g) => g.name === name) || promoted(f.type, name)));
}

/** reflect.Value.String(): the string itself, else "<T Value>". */
function reflectValueString(v: Value): string {
  if (v.t.kind === 'string') return v.v as string;
  return isValid(v) ? `<${v.t.name} Value>` : '<invalid Value>';
}

function canBeNil(t: GoType): boolean {
  return ['func', 'interface', 'map', 'ptr', 'slice'].includes(t.kind) || t === T.reflectValue;
}

function indirectIface(v: Value): Value {
  return v.t.kind === 'interface' && v.v === null ? INVALID : v;
}

// Our data holds no function values, so `call` always fails the way Go's call() does on them.
function callError(callee: string, fn: Value): string {
  const v = indirectIface(fn);
  if (!isValid(v)) return 'call of nil';
  return `non-function ${callee} of type ${v.t.name}`;
}

/** Renders a list as the root of a template (used by Template.execute). */
export function execute(
  trees: ReadonlyMap<string, Tree>,
  funcs: FuncTable,
  builtinNames: ReadonlySet<string>,
  name: string,
  data: Value,
  budget: Budget = new Budget(),
): string {
  const tree = trees.get(name);
  const state = new State(trees, funcs, builtinNames, name, data, budget);
  try {
    if (!tree) state.errorf(`${JSON.stringify(name)} is an incomplete or empty template`);
    return state.run(tree!, data);
  } catch (e) {
    if (e instanceof ExecAbort) throw new TemplateError(e.message);
    throw e;
  }
}


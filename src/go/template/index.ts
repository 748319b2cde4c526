// Public API of the Go text/template engine: parse once, execute on Go-compatible data.
import { fromJSON as goString } from '../strings.ts';
import { BUILTINS } from './builtins.ts';
import { displayString } from './bytes.ts';
import { templateData, type TemplateDataInput } from './data.ts';
import { TemplateError } from './errors.ts';
import { execute, type FuncDef } from './exec.ts';
import type { Budget } from './limits.ts';
import { parseTrees, type FunctionNames, type Tree } from './parse.ts';
import { REFUSED, SPRIG } from './sprig.ts';
import { fromJSON, type Value } from './values.ts';

/** builtins, then sprig on top (sprig's slice replaces the builtin, as Funcs() does in Go). */
const FUNCS: ReadonlyMap<string, FuncDef> = new Map([...BUILTINS, ...SPRIG]);
const BUILTIN_NAMES: ReadonlySet<string> = new Set([...BUILTINS.keys()].filter((n) => !SPRIG.has(n)));

const FUNCTION_NAMES: FunctionNames = { has: (n) => FUNCS.has(n), refusal: (n) => REFUSED.get(n) };

/**
 * V8's stack overflow. Parsing and execution recurse once per level of nesting (blocks,
 * parenthesized pipelines, template calls); Go's growing stacks take nesting that exhausts a
 * JavaScript stack at a few thousand levels, whatever the limits above it allow. Rules arrive from
 * peers, so that is bad input like any other: a template error, never a RangeError from inside.
 */
function stackExhausted(err: unknown): boolean {
  return err instanceof RangeError && err.message.includes('Maximum call stack size exceeded');
}

function tooDeep(name: string, what: string): TemplateError {
  return new TemplateError(`template: ${name}: nested too deeply to ${what}`);
}

function isGoValue(x: unknown): x is Value {
  return typeof x === 'object' && x !== null && 't' in x && 'v' in x && typeof (x as { t: unknown }).t === 'object';
}

export class Template {
  readonly name: string;
  private readonly trees: ReadonlyMap<string, Tree>;

  constructor(name: string, trees: ReadonlyMap<string, Tree>) {
    this.name = name;
    this.trees = trees;
  }

  /**
   * Renders with `data`: a Go value (from templateData) or plain JSON, which is converted the
   * way unstructured decodes it (integers int64, other numbers float64).
   */
  execute(data: unknown, budget?: Budget): string {
    try {
      return displayString(execute(this.trees, FUNCS, BUILTIN_NAMES, this.name, isGoValue(data) ? data : fromJSON(data), budget));
    } catch (err) {
      if (stackExhausted(err)) throw tooDeep(this.name, 'execute');
      throw err;
    }
  }
}

/** Parses like template.New(name).Funcs(sprig.TxtFuncMap()).Parse(src); throws TemplateError. */
export function parseTemplate(src: string, name = ''): Template {
  try {
    // The source arrives from JSON (a rule): lone surrogates are U+FFFD, as Go's decoder leaves them.
    return new Template(name, parseTrees(name, goString(src), FUNCTION_NAMES));
  } catch (err) {
    if (stackExhausted(err)) throw tooDeep(name, 'parse');
    throw err;
  }
}

// Rules render the same few templates for every object they sync: parse each once. Bounded,
// oldest out first, since template sources come from user rules.
const PARSED_CACHE_SIZE = 512;
const parsed = new Map<string, Template>();

/** Renders `src`; executions given one budget share its limits (one object's overrides). */
export function renderTemplate(src: string, data: unknown, name = '', budget?: Budget): string {
  const key = `${name}\0${src}`;
  let t = parsed.get(key);
  if (!t) {
    t = parseTemplate(src, name);
    if (parsed.size >= PARSED_CACHE_SIZE) parsed.delete(parsed.keys().next().value ?? '');
    parsed.set(key, t);
  }
  return t.execute(data, budget);
}

export { Budget } from './limits.ts';
export { TemplateError, templateData, type TemplateDataInput };
export { DecodeError, typedJSON } from './typed.ts';
export type { Value as GoValue };

// Resource limits of one template execution. Rules (and so templates) arrive from other
// clusters of the group, so a template must not be able to exhaust the controller's memory or
// CPU. Go's text/template has no such limits; hitting one fails the execution with a template
// error instead.

/** The rendered output of one execution (one override value). */
export const MAX_OUTPUT_BYTES = 1 << 20;
/** Any string a function builds. */
export const MAX_STRING_BYTES = 1 << 20;
/** Any list or map a function builds. */
export const MAX_ITEMS = 100_000;
/**
 * The strings the calls of one execution return together: each is capped on its own, but an
 * execution holding its results in variables or lists could otherwise keep hundreds of them
 * alive at once (lists are bounded by the steps their items cost). An execution is synchronous,
 * so this bounds what it holds at any moment; what an object's finished executions rendered,
 * held while its other templates wait their turn, is bounded by MAX_OUTPUT_BYTES_PER_OBJECT.
 */
export const MAX_BUILT_BYTES = 16 << 20;
/**
 * Execution steps: every node walked, range iteration, function call, argument and field, plus
 * the work a call does in proportion to its data, charged as it is done: characters of a string
 * (UNITS_PER_STEP), one list item or map entry, one value a deep comparison, copy or printing
 * visits, one comparison a sort makes. A step is a fraction of a microsecond of work, so the
 * limit holds an execution to well under a second.
 */
export const MAX_STEPS = 1_000_000;
/**
 * The characters (or other units) a step pays for: handled natively (a string copied, searched,
 * hashed), by a JavaScript loop, or by one that looks each up in Unicode tables (case mapping,
 * classes, escaping), each some ten times dearer than the one before.
 */
export const UNITS_PER_STEP = { native: 64, looped: 8, lookedUp: 1 } as const;
/**
 * All the templates one rule renders for one object together: a rule holds up to 64 overrides,
 * and 64 full executions per object would let one rule hold a worker for minutes.
 */
export const MAX_STEPS_PER_OBJECT = 4 * MAX_STEPS;
export const MAX_OUTPUT_BYTES_PER_OBJECT = 4 * MAX_OUTPUT_BYTES;

/** What executions drawing on it may still use; each takes what it used from it. */
export class Budget {
  steps = MAX_STEPS_PER_OBJECT;
  outputBytes = MAX_OUTPUT_BYTES_PER_OBJECT;
}

/** Nested {{template}} calls; Go allows 100000, more than a JS stack holds. */
export const MAX_TEMPLATE_DEPTH = 1000;

export const MIB = '1 MiB';

/** A limit was hit; exec reports it at the node being executed. */
export class LimitError extends Error {}

/**
 * The steps an execution has taken. Execution is synchronous, so one shared meter is exact: exec
 * sets `limit` when an execution starts (it is infinite outside executions) and every step, its
 * own or a function's, is counted here as it is taken.
 */
export const meter = { units: 0, limit: Infinity, exceeded: `execution exceeds ${MAX_STEPS} steps` };

/** The execution ran out of steps. */
export class OutOfSteps extends LimitError {}

/**
 * Charges work about to be done, or being done in a loop whose length is not known up front, so
 * that an execution out of steps stops there, before the work or during it, never after.
 */
export function spend(units: number): void {
  meter.units += units;
  if (meter.units > meter.limit) throw new OutOfSteps(meter.exceeded);
}

/** Fails when a string of `length` UTF-16 units (at most its UTF-8 size) would be too big. */
export function checkLength(length: number): void {
  if (length > MAX_STRING_BYTES) throw new LimitError(`result exceeds ${MIB}`);
}

/** Fails when `s` is bigger than MAX_STRING_BYTES bytes of UTF-8. */
export function checkString(s: string): string {
  checkLength(s.length);
  if (s.length * 3 > MAX_STRING_BYTES) checkLength(Buffer.byteLength(s, 'utf8'));
  return s;
}

export function checkItems(n: number): void {
  if (n > MAX_ITEMS) throw new LimitError(`result exceeds ${MAX_ITEMS} items`);
}

/** A string built piece by piece that fails as soon as it outgrows MAX_STRING_BYTES. */
export class Builder {
  private parts: string[] = [];
  private size = 0;

  add(s: string): void {
    this.size += s.length;
    checkLength(this.size);
    this.parts.push(s);
  }

  toString(): string {
    return checkString(this.parts.join(''));
  }
}

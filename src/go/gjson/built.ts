// What the modifiers and selectors of one gjson.Get build together. Each `@reverse`, `@pretty`
// or `{a:@this,b:@this}` makes a new document from the one it is given, and a path may chain or
// nest them, so a short path could make a large object copied hundreds of times over (nested
// selectors double it at each level). Go's gjson has no such limit; past it a Get fails with
// GjsonLimitError, which the rule reports for the object it was evaluated on.

/** JSON (UTF-16 units) that one Get's modifiers and selectors may build together. */
export const GJSON_BUILT_UNITS = 16 << 20;
let left = GJSON_BUILT_UNITS;

export class GjsonLimitError extends Error {}

/** Starts the budget of one gjson.Get. */
export function resetBuiltBudget(): void {
  left = GJSON_BUILT_UNITS;
}

/** Charges `units` of work memory a modifier is about to fill. */
export function spend(units: number): void {
  left -= units;
  if (left < 0) throw new GjsonLimitError(`the path builds more than ${GJSON_BUILT_UNITS >> 20} MiB of JSON from this object (modifiers and selectors together)`);
}

/** Charges a document a modifier or selector built, and hands it back. */
export function built(json: string): string {
  spend(json.length);
  return json;
}

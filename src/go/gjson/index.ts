// The gjson v1.9.3 path language, as upstream's `content` matchers use it.
import { fromJSON } from '../strings.ts';
import { resetBuiltBudget } from './built.ts';
import { get } from './get.ts';
import { resetMatchBudget } from './match.ts';
import { GjsonResult } from './result.ts';

export { GjsonLimitError } from './built.ts';
export { jsonMarshalForMatch } from './marshal.ts';
export { GjsonResult, type GjsonType } from './result.ts';

/**
 * gjson.Get(json, path). An invalid path is not an error: the result just does not exist. Throws
 * GjsonLimitError when the path builds more from this document than one Get may.
 */
export function gjsonGet(json: string, path: string): GjsonResult {
  resetMatchBudget();
  resetBuiltBudget();
  // The path arrives from JSON (a rule): lone surrogates are U+FFFD, as Go's decoder leaves them.
  // The document is ours (jsonMarshalForMatch or the typed model), made of strings decoded so.
  return new GjsonResult(get(json, fromJSON(path)));
}

// The gjson v1.9.3 path language, as upstream's `content` matchers use it.
import { get } from './get.ts';
import { resetMatchBudget } from './match.ts';
import { GjsonResult } from './result.ts';

export { jsonMarshalForMatch } from './marshal.ts';
export { GjsonResult, type GjsonType } from './result.ts';

/** gjson.Get(json, path). An invalid path is not an error: the result just does not exist. */
export function gjsonGet(json: string, path: string): GjsonResult {
  resetMatchBudget();
  return new GjsonResult(get(json, path));
}

// gjson v1.9.3's Result: the value found, with its Int() and String() coercions.
import { float64ToInt64, formatGoFloat, parseGjsonInt } from './numbers.ts';

export type GjsonType = 'Null' | 'False' | 'Number' | 'String' | 'True' | 'JSON';

/** The mutable record gjson's parser fills in (gjson's Result fields minus the indexes). */
export interface RawResult {
  type: GjsonType;
  /** The raw JSON text of the value; empty when nothing was found. */
  raw: string;
  /** The unescaped string, for String values. */
  str: string;
  num: number;
}

export const emptyRaw = (): RawResult => ({ type: 'Null', raw: '', str: '', num: 0 });

export const rawExists = (r: RawResult): boolean => r.type !== 'Null' || r.raw.length !== 0;

/** Result.String(). */
export function rawString(r: RawResult): string {
  switch (r.type) {
    case 'False': return 'false';
    case 'True': return 'true';
    case 'String': return r.str;
    case 'JSON': return r.raw;
    case 'Null': return '';
    case 'Number':
      // Integers keep their literal text; everything else is re-rendered from the float.
      return r.raw.length > 0 && /^-?[0-9]*$/.test(r.raw) ? r.raw : formatGoFloat(r.num);
  }
}

/** Result.Int(). */
export function rawInt(r: RawResult): bigint {
  switch (r.type) {
    case 'True': return 1n;
    case 'String': return parseGjsonInt(r.str) ?? 0n;
    case 'Number':
      if (Math.abs(r.num) <= Number.MAX_SAFE_INTEGER) return BigInt(Math.trunc(r.num));
      return parseGjsonInt(r.raw) ?? float64ToInt64(r.num);
    case 'False': case 'Null': case 'JSON':
      return 0n;
  }
}

/** Result.Bool(). */
export function rawBool(r: RawResult): boolean {
  switch (r.type) {
    case 'True': return true;
    case 'Number': return r.num !== 0;
    case 'String': return ['1', 't', 'true'].includes(r.str.toLowerCase());
    case 'False': case 'Null': case 'JSON':
      return false;
  }
}

/** What gjsonGet returns: gjson's Result, read-only. */
export class GjsonResult {
  readonly type: GjsonType;
  readonly raw: string;
  readonly #value: RawResult;

  constructor(value: RawResult) {
    this.#value = { ...value };
    this.type = value.type;
    this.raw = value.raw;
  }

  /** Result.Exists(): a value was found (JSON null counts). */
  get exists(): boolean {
    return rawExists(this.#value);
  }

  /** Result.Int(): numbers truncated to int64, integer strings parsed, true is 1, else 0. */
  int(): bigint {
    return rawInt(this.#value);
  }

  /** Result.String(): strings as is, numbers as text, raw JSON for objects and arrays, '' for null. */
  str(): string {
    return rawString(this.#value);
  }
}

// Copies of objects as the API server sends them (JSON: plain objects, arrays, strings, numbers,
// booleans, null): deep ones, several times faster than structuredClone for objects this small
// (every synced object is copied at least once), and shallow ones without some keys.

/** A deep, unfrozen copy of a JSON value. */
export function cloneJSON<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJSON) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneJSON((value as Record<string, unknown>)[key]));
  return out as T;
}

/**
 * A shallow copy of `record` without `keys`. Deleting them instead would leave the object in V8's
 * slow dictionary form, and every later read of it several times slower once it is frozen in a cache.
 */
export function without<T extends object>(record: T, keys: readonly string[]): T {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record)) if (!keys.includes(key)) setOwn(out, key, (record as Record<string, unknown>)[key]);
  return out as T;
}

function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  // JSON.parse makes "__proto__" an own key; assigning it would set the prototype instead.
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

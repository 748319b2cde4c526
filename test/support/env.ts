// Settings of the long runs (make chaos, make fuzz) from the environment, checked.

/** `$name` as a seed (a decimal integer in [0, 2^bits)) when set, a fresh random one otherwise. */
export function seedFromEnv(name: string, bits: number, env: NodeJS.ProcessEnv = process.env): number {
  const given = env[name];
  const limit = 2 ** bits;
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n) || n < 0 || n >= limit) throw new Error(`${name} must be an integer in [0, 2^${bits}): ${given}`);
    return n;
  }
  return Math.floor(Math.random() * (limit - 1));
}

/** `$name` as a positive integer, `fallback` when unset or empty. */
export function positiveFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer: ${raw ?? ''}`);
  return n;
}

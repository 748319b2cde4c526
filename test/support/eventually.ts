// Polling for a condition that a real cluster reaches asynchronously.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it returns something other than false/undefined (returned), failing the
 * test after `timeoutMs` with what it waited for and the last error `check` threw.
 */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    await sleep(200);
  }
  const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  return assert.fail(`timed out after ${timeoutMs / 1000}s waiting for ${what}${why}`);
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Backoff, sleep } from './backoff.ts';

describe('Backoff', () => {
  it('stays within [base, base*(1+jitter)] and never above max', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 120_000 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 40 }), (initial, max, r, steps) => {
        const b = new Backoff({ initialMs: initial, maxMs: max, random: () => r });
        for (let i = 0; i < steps; i++) {
          const base = Math.min(max, initial * 2 ** i);
          const d = b.next();
          assert.ok(d >= base - 1e-9 && d <= Math.min(max, base * 2) + 1e-9, `step ${i}: ${d} outside [${base}, ${base * 2}]`);
        }
      }),
    );
  });

  it('follows the reflector schedule 0.8 s to 30 s and restarts after reset', () => {
    const b = new Backoff({ initialMs: 800, maxMs: 30_000, random: () => 0 });
    assert.deepEqual(Array.from({ length: 8 }, () => b.next()), [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    b.reset();
    assert.equal(b.next(), 800);
  });

  it('sleep ends early when the signal aborts and never rejects', async (t) => {
    // Timers are mocked and never advanced: only the abort can end the sleep.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const ac = new AbortController();
    const p = sleep(10_000, ac.signal).then(() => 'ended');
    ac.abort();
    const pending = new Promise((resolve) => setImmediate(resolve, 'still sleeping'));
    assert.equal(await Promise.race([p, pending]), 'ended');
    assert.equal(await Promise.race([sleep(10_000, ac.signal).then(() => 'ended'), new Promise((resolve) => setImmediate(resolve, 'still sleeping'))]), 'ended');
  });
});

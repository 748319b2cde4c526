import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GcraRateLimiter } from './gcra.ts';

function limiter(now: { t: number }, maxKeys = 1024): GcraRateLimiter {
  return new GcraRateLimiter({ ratePerSecond: 5, burst: 10, maxKeys, now: () => now.t });
}

describe('GcraRateLimiter', () => {
  it('allows burst + 1 at once (upstream: 11), then one per emission interval', () => {
    const now = { t: 0 };
    const l = limiter(now);
    for (let i = 0; i < 11; i++) assert.equal(l.take('k'), 0, `request ${i}`);
    const wait = l.take('k');
    assert.ok(wait > 0 && wait <= 200, `waits ${wait} ms`);
    now.t += wait;
    assert.equal(l.take('k'), 0);
    assert.ok(l.take('k') > 0);
  });
  it('sustains the configured rate over time', () => {
    const now = { t: 0 };
    const l = limiter(now);
    let allowed = 0;
    for (let ms = 0; ms < 10_000; ms += 10) {
      now.t = ms;
      if (l.take('k') === 0) allowed++;
    }
    // 11 at once, then 5 per second for 10 s.
    assert.ok(allowed >= 59 && allowed <= 61, `allowed ${allowed}`);
  });
  it('limits keys independently', () => {
    const now = { t: 0 };
    const l = limiter(now);
    for (let i = 0; i < 11; i++) l.take('a');
    assert.ok(l.take('a') > 0);
    assert.equal(l.take('b'), 0);
  });
  it('remembers at most maxKeys keys, dropping the least recently used', () => {
    const now = { t: 0 };
    const l = limiter(now, 2);
    for (let i = 0; i < 11; i++) l.take('a');
    l.take('b');
    l.take('c');
    assert.equal(l.size, 2);
    // a was evicted: a full burst again.
    assert.equal(l.take('a'), 0);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaderElector, defaultIdentity, microTime } from './leader-election.ts';
import { RestClient } from './rest.ts';

const rest = new RestClient({ server: new URL('http://127.0.0.1:1'), tls: {}, authHeaders: async () => ({}), invalidate: () => undefined });
const callbacks = { onStartedLeading: () => undefined };

describe('leader election', () => {
  it('formats MicroTime with exactly six fractional digits', () => {
    assert.equal(microTime(Date.parse('2026-11-21T18:00:00.123Z')), '2026-11-21T18:00:00.123000Z');
    assert.match(microTime(Date.now()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('uses hostname plus a random suffix as identity', () => {
    const a = defaultIdentity();
    assert.match(a, /^.+_[0-9a-f]{16}$/);
    assert.notEqual(a, defaultIdentity());
  });

  it('rejects timings client-go rejects', () => {
    assert.throws(() => new LeaderElector({ rest, namespace: 'n', name: 'l', leaseDurationMs: 5_000, renewDeadlineMs: 5_000, callbacks }), /renewDeadline/);
    assert.throws(() => new LeaderElector({ rest, namespace: 'n', name: 'l', leaseDurationMs: 5_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000, callbacks }), /retryPeriod/);
    assert.doesNotThrow(() => new LeaderElector({ rest, namespace: 'n', name: 'l', leaseDurationMs: 5_000, renewDeadlineMs: 2_500, retryPeriodMs: 2_000, callbacks }));
  });
});

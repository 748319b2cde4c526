import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from './errors.ts';
import { LeaderElector, defaultIdentity, microTime, type Lease, type LeaseClient } from './leader-election.ts';
import { RestClient } from './rest.ts';
import type { KubeObject } from './types.ts';

const rest = new RestClient({ server: new URL('http://127.0.0.1:1'), tls: {}, authHeaders: async () => ({}), invalidate: () => undefined });
const callbacks = { onStartedLeading: () => undefined };

/** How a GET of the lease behaves: answers, fails at once, answers after a delay, or never answers. */
type Behaviour = 'ok' | 'fail' | 'hang' | { slowMs: number };

/**
 * An in-memory Lease API with resourceVersion preconditions. Each acquire/renew attempt starts
 * with a GET, which behaves as scripted: `plan` for the first attempts, then `afterPlan`. It records
 * when the attempt of the last successful write started, and arms a reference timer due
 * renewDeadline after it: how late that one fires is how late timers run right now.
 */
class FakeLeases implements LeaseClient {
  lease: Lease | undefined;
  private rv = 0;
  private attemptAt = 0;
  /** Start of the attempt whose write last succeeded. */
  lastRenewAt = 0;
  /** GETs after the last successful write. */
  attemptsSinceRenewal = 0;
  /** When a hung GET saw its signal abort. */
  hungCutAt: number | undefined;
  private reference: NodeJS.Timeout | undefined;
  private referenceDue = 0;
  private referenceFired = Promise.withResolvers<number>();
  readonly writes: string[] = [];
  private readonly renewDeadlineMs: number;
  private readonly plan: Behaviour[];
  private readonly afterPlan: Behaviour;

  constructor(renewDeadlineMs: number, plan: Behaviour[], afterPlan: Behaviour) {
    this.renewDeadlineMs = renewDeadlineMs;
    this.plan = plan;
    this.afterPlan = afterPlan;
  }

  async get<T extends KubeObject = KubeObject>(_ref: unknown, _ns: string | undefined, _name: string, opts: { signal?: AbortSignal } = {}): Promise<T> {
    this.attemptAt = performance.now();
    this.attemptsSinceRenewal++;
    const behaviour = this.plan.shift() ?? this.afterPlan;
    if (behaviour === 'fail') throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    if (behaviour !== 'ok') await this.wait(behaviour === 'hang' ? Infinity : behaviour.slowMs, opts.signal);
    if (!this.lease) throw new ApiError({ code: 404, method: 'GET', path: 'lease' });
    return structuredClone(this.lease) as unknown as T;
  }

  async create<T extends KubeObject>(_ref: unknown, _ns: string | undefined, obj: T): Promise<T> {
    if (this.lease) throw new ApiError({ code: 409, reason: 'AlreadyExists', method: 'POST', path: 'lease' });
    return this.write(obj);
  }

  async update<T extends KubeObject>(_ref: unknown, _ns: string | undefined, obj: T): Promise<T> {
    if (obj.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) throw new ApiError({ code: 409, method: 'PUT', path: 'lease' });
    return this.write(obj);
  }

  /** The reference timer's lateness, once it fired. */
  async timerLateness(): Promise<number> {
    return (await this.referenceFired.promise) - this.referenceDue;
  }

  private write<T extends KubeObject>(obj: T): T {
    this.lease = structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } });
    this.writes.push(this.lease.spec?.holderIdentity ?? '<released>');
    this.lastRenewAt = this.attemptAt;
    this.attemptsSinceRenewal = 0;
    clearTimeout(this.reference);
    this.referenceDue = this.attemptAt + this.renewDeadlineMs;
    this.reference = setTimeout(() => this.referenceFired.resolve(performance.now()), Math.max(0, this.referenceDue - performance.now()));
    return structuredClone(this.lease) as unknown as T;
  }

  private wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = ms === Infinity ? undefined : setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        if (ms === Infinity) this.hungCutAt = performance.now();
        reject(signal.reason as Error);
      });
    });
  }
}

/** Leader work that records when it was told to stop, and takes `stopMs` to wind down. */
function leaderWork(log: string[], stopMs = 0): { run: (signal: AbortSignal) => Promise<void>; abortedAt: () => number } {
  let abortedAt = 0;
  return {
    abortedAt: () => abortedAt,
    run: async (signal) => {
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      abortedAt = performance.now();
      log.push('work told to stop');
      await new Promise((resolve) => setTimeout(resolve, stopMs));
      log.push('work stopped');
    },
  };
}

// The elector's deadline timer and the reference timer are due together, but on a loaded machine
// the abort that follows the elector's may run a few event-loop turns after the reference fired.
// The slack stays far below what the old step-down overshot by (1.4 s on a 5 s lease).
const TICK_MS = 50;

// Renew deadline 600 ms, retry period 450 ms: a renewal attempt comes 450 ms after the last one
// started, so one that fails leaves 150 ms to retry before the deadline.
const TIMING = { leaseDurationMs: 2_000, renewDeadlineMs: 600, retryPeriodMs: 450 };

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

  it('stops leader work within renewDeadline of the last renewal when renewals fail at once, retrying meanwhile', async (t) => {
    // Acquire, two renewals, then every attempt is refused.
    const fake = new FakeLeases(TIMING.renewDeadlineMs, ['ok', 'ok', 'ok'], 'fail');
    const log: string[] = [];
    const work = leaderWork(log);
    await new LeaderElector({ rest: fake, namespace: 'n', name: 'l', identity: 'me', ...TIMING, callbacks: { onStartedLeading: work.run, onStoppedLeading: () => log.push('stopped') } }).start(new AbortController().signal);

    const late = await fake.timerLateness();
    const stepDown = work.abortedAt() - fake.lastRenewAt;
    t.diagnostic(`work told to stop ${stepDown.toFixed(1)} ms after the last renewal started (deadline ${TIMING.renewDeadlineMs} ms, timers ${late.toFixed(1)} ms late)`);
    assert.ok(stepDown <= TIMING.renewDeadlineMs + Math.max(0, late) + TICK_MS, `told to stop ${stepDown} ms after the last renewal`);
    assert.ok(fake.attemptsSinceRenewal >= 2, `a failed renewal is retried before the deadline (${fake.attemptsSinceRenewal} attempts)`);
    assert.deepEqual(log, ['work told to stop', 'work stopped', 'stopped']);
    assert.deepEqual(fake.writes, ['me', 'me', 'me'], 'a lost lease is not released');
  });

  it('counts from the start of a slow acquisition and cuts a hanging renewal at the deadline', async (t) => {
    // The lease is acquired by a slow exchange (others time it from our write, somewhere inside
    // it), then the renewal never answers.
    const fake = new FakeLeases(TIMING.renewDeadlineMs, [{ slowMs: TIMING.renewDeadlineMs / 2 }], 'hang');
    const log: string[] = [];
    const work = leaderWork(log);
    await new LeaderElector({ rest: fake, namespace: 'n', name: 'l', identity: 'me', ...TIMING, callbacks: { onStartedLeading: work.run } }).start(new AbortController().signal);

    const late = await fake.timerLateness();
    const stepDown = work.abortedAt() - fake.lastRenewAt;
    const cut = fake.hungCutAt! - fake.lastRenewAt;
    t.diagnostic(`hanging renewal cut ${cut.toFixed(1)} ms, work told to stop ${stepDown.toFixed(1)} ms after the last renewal started (timers ${late.toFixed(1)} ms late)`);
    assert.deepEqual(fake.writes, ['me'], 'the slow acquisition succeeded');
    assert.ok(stepDown <= TIMING.renewDeadlineMs + Math.max(0, late) + TICK_MS, `told to stop ${stepDown} ms after the last renewal`);
    assert.ok(cut <= TIMING.renewDeadlineMs + Math.max(0, late) + TICK_MS, `the hanging request was cut ${cut} ms after the last renewal`);
  });

  it('reports the end of the term and releases only once leader work has stopped, however long that takes', async () => {
    const fake = new FakeLeases(TIMING.renewDeadlineMs, [], 'ok');
    const log: string[] = [];
    // Winding down takes longer than a lease: the elector still waits for it.
    const work = leaderWork(log, TIMING.leaseDurationMs + 200);
    const ac = new AbortController();
    const elector = new LeaderElector({
      rest: fake,
      namespace: 'n',
      name: 'l',
      identity: 'me',
      ...TIMING,
      callbacks: {
        onStartedLeading: (signal) => {
          ac.abort();
          return work.run(signal);
        },
        onStoppedLeading: () => log.push(`stopped, lease holder ${fake.lease?.spec?.holderIdentity ?? 'none'}`),
      },
    });
    await elector.start(ac.signal);
    assert.deepEqual(log, ['work told to stop', 'work stopped', 'stopped, lease holder none']);
    assert.deepEqual(fake.writes, ['me', '<released>']);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, WorkQueue } from './workqueue.ts';

// The reference model: a FIFO of distinct keys, a dirty set and a processing set.
class Model {
  queue: string[] = [];
  dirty = new Set<string>();
  processing = new Set<string>();
  shutting = false;
  add(k: string): void {
    if (this.shutting || this.dirty.has(k)) return;
    this.dirty.add(k);
    if (!this.processing.has(k)) this.queue.push(k);
  }
  get(): string | undefined {
    const k = this.queue.shift();
    if (k === undefined) return undefined;
    this.processing.add(k);
    this.dirty.delete(k);
    return k;
  }
  done(k: string): void {
    this.processing.delete(k);
    if (this.dirty.has(k)) this.queue.push(k);
  }
}

type Op = { t: 'add'; k: string } | { t: 'get' } | { t: 'done'; i: number } | { t: 'shutdown' };
const key = fc.constantFrom('a', 'b', 'c', 'd', 'ns/e');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: key.map((k) => ({ t: 'add' as const, k })) },
  { weight: 3, arbitrary: fc.constant({ t: 'get' as const }) },
  { weight: 3, arbitrary: fc.nat(10).map((i) => ({ t: 'done' as const, i })) },
  { weight: 1, arbitrary: fc.constant({ t: 'shutdown' as const }) },
);

describe('WorkQueue', () => {
  it('matches the dirty/processing model: dedup, no key handed out twice, re-add while processing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 80 }), async (ops) => {
        const q = new WorkQueue<string>();
        const m = new Model();
        const inFlight: string[] = [];
        for (const o of ops) {
          switch (o.t) {
            case 'add':
              q.add(o.k);
              m.add(o.k);
              break;
            case 'get': {
              if (q.length === 0) break; // an empty get would wait
              const got = await q.get();
              assert.equal(got, m.get());
              assert.ok(!inFlight.includes(got!), `key ${got} handed out while in flight`);
              inFlight.push(got!);
              break;
            }
            case 'done': {
              if (inFlight.length === 0) break;
              const [k] = inFlight.splice(o.i % inFlight.length, 1);
              q.done(k!);
              m.done(k!);
              break;
            }
            case 'shutdown':
              q.shutDown();
              m.shutting = true;
              break;
          }
          assert.equal(q.length, m.queue.length);
          assert.equal(new Set(m.queue).size, m.queue.length);
        }
      }),
    );
  });

  it('with concurrent workers, never processes a key twice at once and processes every key after its last add', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(key, fc.nat(3)), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 4 }), async (adds, workers) => {
        const q = new WorkQueue<string>();
        const active = new Set<string>();
        const lastAdd = new Map<string, number>();
        const lastStart = new Map<string, number>();
        let clock = 0;
        const worker = async (): Promise<void> => {
          for (;;) {
            const k = await q.get();
            if (k === undefined) return;
            assert.ok(!active.has(k), `key ${k} processed concurrently`);
            active.add(k);
            lastStart.set(k, ++clock);
            await new Promise((r) => setImmediate(r));
            active.delete(k);
            q.done(k);
          }
        };
        const running = Array.from({ length: workers }, worker);
        for (const [k, pause] of adds) {
          q.add(k);
          lastAdd.set(k, ++clock);
          for (let i = 0; i < pause; i++) await new Promise((r) => setImmediate(r));
        }
        await q.shutDownWithDrain();
        await Promise.all(running);
        for (const [k, added] of lastAdd) assert.ok((lastStart.get(k) ?? 0) > added, `key ${k} not processed after its last add`);
      }),
      { numRuns: 50 },
    );
  });

  it('hands out queued keys after shutDown, then resolves get with undefined', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.shutDown();
    q.add('c');
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(await q.get(), undefined);
  });

  it('shutDownWithDrain waits for keys in flight', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const k = await q.get();
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false);
    q.done(k!);
    await drain;
    assert.equal(drained, true);
  });

  it('wakes a waiting get on add and on shutdown', async () => {
    const q = new WorkQueue<string>();
    const first = q.get();
    const second = q.get();
    q.add('x');
    assert.equal(await first, 'x');
    q.shutDown();
    assert.equal(await second, undefined);
  });

  it('addAfter delays, keeps the earliest time for a key, and is cancelled by shutdown', async (t) => {
    // A mocked clock: each step is exact, however busy the machine.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    let now = 0;
    const advance = (ms: number): void => {
      now += ms;
      t.mock.timers.tick(ms);
    };
    const q = new WorkQueue<string>({ now: () => now });
    q.addAfter('late', 10_000);
    q.addAfter('late', 20);
    q.addAfter('late', 5_000);
    advance(19);
    assert.equal(q.length, 0);
    advance(1);
    assert.equal(await q.get(), 'late');
    q.done('late');
    advance(10_000);
    assert.equal(q.length, 0, 'the later times were dropped');
    q.addAfter('never', 10);
    q.shutDown();
    advance(10);
    assert.equal(q.length, 0);
  });

  it('addRateLimited backs off per key and forget resets it', () => {
    const q = new WorkQueue<string>({ rateLimiter: new ItemExponentialFailureRateLimiter(1000, 60_000) });
    q.addRateLimited('k');
    q.addRateLimited('k');
    assert.equal(q.numRequeues('k'), 2);
    q.forget('k');
    assert.equal(q.numRequeues('k'), 0);
    q.shutDown();
  });
});

describe('rate limiters', () => {
  it('per-item exponential: base * 2^n, capped, per key', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 100 }), fc.integer({ min: 100, max: 100_000 }), (n, base, max) => {
        const rl = new ItemExponentialFailureRateLimiter<string>(base, max);
        let prev = 0;
        for (let i = 0; i < n; i++) {
          const d = rl.when('k');
          assert.equal(d, Math.min(max, base * 2 ** i));
          assert.ok(d >= prev && d <= max);
          prev = d;
        }
        assert.equal(rl.when('other'), base);
        assert.equal(rl.numRequeues('k'), n);
      }),
    );
  });

  it('token bucket: burst immediate, then 1/qps apart, refilled over time', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 300 }), (qps, burst, extra) => {
        let now = 0;
        const rl = new BucketRateLimiter<string>(qps, burst, () => now);
        for (let i = 0; i < burst; i++) assert.equal(rl.when('x'), 0);
        for (let i = 1; i <= extra; i++) assert.ok(Math.abs(rl.when('x') - (i * 1000) / qps) < 1e-6);
        // After enough time the bucket is full again, never fuller than burst.
        now += ((extra + burst * 2) * 1000) / qps;
        for (let i = 0; i < burst; i++) assert.equal(rl.when('x'), 0);
        assert.ok(rl.when('x') > 0);
      }),
    );
  });

  it('max-of takes the larger delay of its limiters', () => {
    let now = 0;
    const rl = new MaxOfRateLimiter<string>(new ItemExponentialFailureRateLimiter(5, 1_000_000), new BucketRateLimiter(10, 100, () => now));
    // Within the burst the per-item backoff decides.
    assert.equal(rl.when('a'), 5);
    assert.equal(rl.when('a'), 10);
    for (let i = 0; i < 98; i++) rl.when(`k${i}`);
    // The bucket is empty: the 101st reservation waits 100 ms even for a fresh key.
    assert.equal(Math.round(rl.when('fresh')), 100);
    now += 10_000;
    rl.forget('a');
    assert.equal(rl.when('a'), 5);
  });
});

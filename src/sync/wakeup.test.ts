import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { Wakeup } from './wakeup.ts';

/** Whether the promise has settled, once pending callbacks have run. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise<void>((r) => setImmediate(r));
  return done;
}

/** A clock the test moves (setTimeout only, so setImmediate still runs). */
function clock(t: TestContext): { tick(ms: number): void } {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  return { tick: (ms) => t.mock.timers.tick(ms) };
}

describe('Wakeup', () => {
  it('ends a wait once its delay has passed, not before', async (t) => {
    const time = clock(t);
    const wait = new Wakeup().wait(1_000, new AbortController().signal);
    time.tick(999);
    assert.equal(await settled(wait), false);
    time.tick(1);
    assert.equal(await settled(wait), true);
  });

  it('ends a wait at once when kicked', async (t) => {
    clock(t);
    const w = new Wakeup();
    const wait = w.wait(60_000, new AbortController().signal);
    w.kick();
    assert.equal(await settled(wait), true);
  });

  it('wakes every waiter with one kick', async (t) => {
    clock(t);
    const w = new Wakeup();
    const signal = new AbortController().signal;
    const waits = [w.wait(60_000, signal), w.wait(60_000, signal)];
    w.kick();
    assert.deepEqual(await Promise.all(waits.map(settled)), [true, true]);
  });

  it('remembers a kick made while nobody waits, for the next wait only', async (t) => {
    clock(t);
    const w = new Wakeup();
    const signal = new AbortController().signal;
    w.kick();
    w.kick();
    assert.equal(await settled(w.wait(60_000, signal)), true);
    assert.equal(await settled(w.wait(60_000, signal)), false);
  });

  it('does not remember a kick that woke a waiter', async (t) => {
    clock(t);
    const w = new Wakeup();
    const signal = new AbortController().signal;
    const first = w.wait(60_000, signal);
    w.kick();
    await first;
    assert.equal(await settled(w.wait(60_000, signal)), false);
  });

  it('ends a wait when its signal aborts', async (t) => {
    clock(t);
    const stop = new AbortController();
    const wait = new Wakeup().wait(60_000, stop.signal);
    stop.abort();
    assert.equal(await settled(wait), true);
  });

  it('does not wait at all on a signal already aborted', async (t) => {
    clock(t);
    const stop = new AbortController();
    stop.abort();
    assert.equal(await settled(new Wakeup().wait(60_000, stop.signal)), true);
  });
});

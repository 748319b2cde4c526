import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTurns } from '../../test/support/loop-turns.ts';
import { holding, SliceDriver, TimeSlice } from './time-slice.ts';

/** Holds the event loop for `ms`. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Steps as a rendering takes them: each pause comes before a step of `ms`, which is logged with the turns counted so far. */
function* steps(name: string, n: number, ms: number, log: { step: string; turn: number }[], count: () => number): Generator<void, string, void> {
  for (let i = 1; i <= n; i++) {
    yield;
    busy(ms);
    log.push({ step: `${name}${i}`, turn: count() });
  }
  return name;
}

/** Steps that never end, and whether they were closed. */
function endlessSteps(): { steps: Generator<void, never, void>; closed: () => boolean } {
  let closed = false;
  function* endless(): Generator<void, never, void> {
    try {
      for (;;) yield;
    } finally {
      closed = true;
    }
  }
  return { steps: endless(), closed: () => closed };
}

describe('SliceDriver', () => {
  it('takes steps of the computations in turn, the newest first, one turn of the loop each once a step outlasts the slice', async () => {
    const t = countTurns();
    const log: { step: string; turn: number }[] = [];
    try {
      const driver = new SliceDriver(20);
      assert.deepEqual(await Promise.all([driver.run(steps('a', 3, 30, log, t.count)), driver.run(steps('b', 3, 30, log, t.count))]), ['a', 'b']);
    } finally {
      t.stop();
    }
    assert.deepEqual(
      log.map((l) => l.step),
      ['b1', 'a1', 'b2', 'a2', 'b3', 'a3'],
    );
    for (let i = 1; i < log.length; i++) assert.ok(log[i]!.turn > log[i - 1]!.turn, `the loop turned before ${log[i]!.step}`);
  });

  it('takes the steps that fit in a slice in one turn', async () => {
    const t = countTurns();
    const log: { step: string; turn: number }[] = [];
    try {
      const driver = new SliceDriver(60_000);
      await Promise.all([driver.run(steps('a', 3, 0, log, t.count)), driver.run(steps('b', 3, 0, log, t.count))]);
    } finally {
      t.stop();
    }
    assert.equal(new Set(log.map((l) => l.turn)).size, 1, JSON.stringify(log));
  });

  it("runs a computation's first step at once, and answers without a turn of the loop when that is all", async () => {
    let ran = false;
    function* flagged(): Generator<void, string, void> {
      ran = true;
      yield;
      return 'done';
    }
    const driver = new SliceDriver();
    const result = driver.run(flagged());
    assert.ok(ran, 'the first step ran before run returned');
    assert.equal(await result, 'done');
    const t = countTurns();
    try {
      assert.equal(await driver.run(steps('a', 0, 0, [], t.count)), 'a');
      assert.equal(t.count(), 0);
    } finally {
      t.stop();
    }
  });

  it('passes on what a step throws, first or later, and goes on with the others', async () => {
    function* failing(after: number): Generator<void, never, void> {
      for (let i = 0; i < after; i++) yield;
      throw new Error(`boom after ${after}`);
    }
    const driver = new SliceDriver(0);
    const log: { step: string; turn: number }[] = [];
    const [first, later, other] = await Promise.allSettled([driver.run(failing(0)), driver.run(failing(2)), driver.run(steps('c', 3, 0, log, () => 0))]);
    assert.match(String((first as PromiseRejectedResult).reason), /boom after 0/);
    assert.match(String((later as PromiseRejectedResult).reason), /boom after 2/);
    assert.deepEqual(other, { status: 'fulfilled', value: 'c' });
  });
  it('drops a computation whose signal aborts, rejecting with its reason, and goes on with the others', async () => {
    const driver = new SliceDriver(0);
    const log: { step: string; turn: number }[] = [];
    const abort = new AbortController();
    const endless = endlessSteps();
    const dropped = driver.run(endless.steps, abort.signal);
    const other = driver.run(steps('c', 3, 0, log, () => 0));
    setImmediate(() => abort.abort(new Error('stopped')));
    await assert.rejects(dropped, /stopped/);
    assert.ok(endless.closed(), 'the computation was closed');
    assert.equal(await other, 'c');
    await assert.rejects(driver.run(steps('d', 1, 0, log, () => 0), abort.signal), /stopped/);
    assert.ok(!log.some((l) => l.step.startsWith('d')), 'nothing runs for a signal aborted already');
  });
  it('lets computations past their first step run together while what they hold fits, and the others wait their turn', async () => {
    const driver = new SliceDriver(0, 10);
    const log: { step: string; turn: number }[] = [];
    const count = (): number => 0;
    const [small, big, second, alone] = [driver.run(holding(() => 4, steps('s', 2, 0, log, count))), driver.run(holding(() => 6, steps('b', 2, 0, log, count))), driver.run(holding(() => 6, steps('x', 2, 0, log, count))), driver.run(holding(() => 100, steps('h', 2, 0, log, count)))];
    assert.deepEqual(await Promise.all([small, big, second, alone]), ['s', 'b', 'x', 'h']);
    const order = log.map((l) => l.step);
    // s and b (4 + 6) fit together; x waits for one of them, h (larger than the room) for all.
    assert.ok(order.indexOf('x1') > Math.min(order.indexOf('s2'), order.indexOf('b2')), order.join(' '));
    assert.ok(order.indexOf('h1') > Math.max(order.indexOf('s2'), order.indexOf('b2'), order.indexOf('x2')), order.join(' '));
  });
  it('lets none past one that waits for room, so a large one is not kept waiting by smaller ones for ever', async () => {
    const driver = new SliceDriver(0, 10);
    const log: { step: string; turn: number }[] = [];
    const count = (): number => 0;
    const runs = [driver.run(holding(() => 6, steps('a', 2, 0, log, count))), driver.run(holding(() => 20, steps('big', 2, 0, log, count))), driver.run(holding(() => 2, steps('c', 2, 0, log, count)))];
    assert.deepEqual(await Promise.all(runs), ['a', 'big', 'c']);
    assert.deepEqual(
      log.map((l) => l.step),
      ['a1', 'a2', 'big1', 'big2', 'c1', 'c2'],
    );
  });
});

describe('holding', () => {
  it('says what the computation holds at its first pause only, and asks it only then', () => {
    let asked = 0;
    const bytes = (): number => ++asked * 100;
    const said = [...holding(bytes, steps('a', 3, 0, [], () => 0))];
    assert.deepEqual(said, [100, undefined, undefined]);
    assert.equal(asked, 1);
    const done = holding(bytes, steps('b', 0, 0, [], () => 0));
    assert.deepEqual(done.next(), { done: true, value: 'b' });
    assert.equal(asked, 1, 'a computation done in its first step holds nothing past it');
  });

  it('closes the computation it wraps when it is dropped', () => {
    const endless = endlessSteps();
    const wrapped = holding(() => 1, endless.steps);
    wrapped.next();
    wrapped.next();
    wrapped.return(undefined as never);
    assert.ok(endless.closed());
  });
});

/** Steps that say, at each pause, what they hold from there on; each step is logged as it runs. */
function* declaring(name: string, sizes: number[], log: string[]): Generator<number, string, void> {
  for (let i = 1; i <= sizes.length; i++) {
    yield sizes[i - 1]!;
    log.push(`${name}${i}`);
  }
  return name;
}

describe('SliceDriver, when a computation says again what it holds', () => {
  it('lets one that holds more wait for room again', async () => {
    const driver = new SliceDriver(0, 10);
    const log: string[] = [];
    // a and b fit together (4 + 6) until a says it holds 10: then it waits for b to end.
    assert.deepEqual(await Promise.all([driver.run(declaring('a', [4, 10], log)), driver.run(declaring('b', [6, 6, 6], log))]), ['a', 'b']);
    assert.ok(log.indexOf('a2') > log.indexOf('b3'), log.join(' '));
  });

  // Charged, the job after it would wait for ever: the timeout says so.
  it('charges nothing a computation says after it was dropped during its own step', { timeout: 10_000 }, async () => {
    const driver = new SliceDriver(0, 10);
    const abort = new AbortController();
    function* selfAborting(): Generator<number, string, void> {
      yield 1;
      abort.abort(new Error('dropped'));
      yield 7;
      return 'never';
    }
    await assert.rejects(driver.run(selfAborting(), abort.signal), /dropped/);
    // Were the 7 charged, nothing of 5 would fit beside it again.
    assert.equal(await driver.run(declaring('after', [5, 5], [])), 'after');
  });

  it('lets those waiting in once one holds less', async () => {
    const driver = new SliceDriver(0, 10);
    const log: string[] = [];
    // c waits while a holds all the room, and runs beside a once a holds 2.
    assert.deepEqual(await Promise.all([driver.run(declaring('a', [10, 2, 2, 2, 2], log)), driver.run(declaring('c', [8], log))]), ['a', 'c']);
    assert.ok(log.indexOf('c1') < log.indexOf('a5'), log.join(' '));
    assert.ok(log.indexOf('c1') > log.indexOf('a1'), log.join(' '));
  });
});

describe('TimeSlice', () => {
  it('hands the loop back once the slice is over, and not before', async () => {
    const t = countTurns();
    try {
      const slice = new TimeSlice(20);
      const before = t.count();
      await slice.pause();
      assert.equal(t.count(), before, 'within the slice');
      busy(25);
      await slice.pause();
      assert.ok(t.count() > before, 'past the slice');
      const after = t.count();
      await slice.pause();
      assert.equal(t.count(), after, 'a new slice started');
    } finally {
      t.stop();
    }
  });
});

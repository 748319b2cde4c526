import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SyncKey } from './keys.ts';
import { WAIT, Waiters } from './waiters.ts';
import { Wakeup } from './wakeup.ts';

describe('Waiters', () => {
  it('enqueues the keys waiting for an event once, and forgets a key that was reconciled meanwhile', () => {
    const enqueued: SyncKey[] = [];
    const w = new Waiters((k) => enqueued.push(k));
    const a: SyncKey = ['r', 'p', 'ns', 'a'];
    const b: SyncKey = ['r', 'p', 'ns', 'b'];
    w.wait(WAIT.namespace('ns'), a);
    w.wait(WAIT.namespace('ns'), b);
    w.wait(WAIT.death('x'), a);
    w.forget(b);
    w.release(WAIT.namespace('ns'));
    assert.deepEqual(enqueued, [a]);
    w.release(WAIT.namespace('ns'));
    assert.equal(enqueued.length, 1, 'released once');
    w.forget(a);
    assert.equal(w.size, 0, 'nothing left behind');
    w.release(WAIT.death('x'));
    assert.equal(enqueued.length, 1);
  });
  it('releases by a predicate', () => {
    const enqueued: SyncKey[] = [];
    const w = new Waiters((k) => enqueued.push(k));
    w.wait(WAIT.reach('p1', 'o'), ['r', 'p1', '', 'x']);
    w.wait(WAIT.reach('p2', 'o'), ['r', 'p2', '', 'x']);
    w.releaseWhere((e) => e.startsWith('reach|p1|'));
    assert.deepEqual(enqueued, [['r', 'p1', '', 'x']]);
  });
});

describe('Wakeup', () => {
  it('wakes every waiter, remembers a kick nobody waited for, and never lets an old timer drop a new waiter', async () => {
    const w = new Wakeup();
    const ac = new AbortController();
    w.kick();
    await w.wait(60_000, ac.signal); // the remembered kick
    const short = w.wait(1, ac.signal);
    const long = w.wait(60_000, ac.signal);
    await short;
    let woke = false;
    void long.then(() => (woke = true));
    w.kick();
    await long;
    assert.ok(woke);
    ac.abort();
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../core/api/types.ts';
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

/** Waiters over a list of the keys they enqueue. */
function waiters(): { w: Waiters; enqueued: SyncKey[] } {
  const enqueued: SyncKey[] = [];
  return { w: new Waiters((k) => enqueued.push(k)), enqueued };
}

const key = (name: string): SyncKey => ['r', 'p', 'ns', name];

describe('Waiters: releasing', () => {
  it('releases at most as many keys as it is told, oldest first, and the others wait on', () => {
    const { w, enqueued } = waiters();
    for (const name of ['a', 'b', 'c']) w.wait(WAIT.ruleCopies('r', 'p1'), key(name));
    w.release(WAIT.ruleCopies('r', 'p1'), 2);
    assert.deepEqual(enqueued, [key('a'), key('b')]);
    assert.ok(w.waitsFor(key('c'), WAIT.ruleCopies('r', 'p1')));
    w.release(WAIT.ruleCopies('r', 'p1'), 2);
    assert.deepEqual(enqueued, [key('a'), key('b'), key('c')]);
    assert.equal(w.waiting(WAIT.ruleCopies('r', 'p1')), false, 'no one waits any more');
  });

  it('releases nothing when told to release none', () => {
    const { w, enqueued } = waiters();
    w.wait(WAIT.peerCopies('p1'), key('a'));
    w.release(WAIT.peerCopies('p1'), 0);
    assert.deepEqual(enqueued, []);
    assert.ok(w.waiting(WAIT.peerCopies('p1')));
  });

  it('does nothing for an event no key waits for', () => {
    const { w, enqueued } = waiters();
    w.wait(WAIT.namespace('ns'), key('a'));
    w.release(WAIT.namespace('other'));
    assert.deepEqual(enqueued, []);
    assert.equal(w.size, 1);
  });

  it('enqueues a key that waits twice for one event once', () => {
    const { w, enqueued } = waiters();
    w.wait(WAIT.alive('c1'), key('a'));
    w.wait(WAIT.alive('c1'), key('a'));
    w.release(WAIT.alive('c1'));
    assert.deepEqual(enqueued, [key('a')]);
  });

  it('leaves a released key waiting for the other events it waits for, until it is reconciled', () => {
    const { w, enqueued } = waiters();
    w.wait(WAIT.namespace('ns'), key('a'));
    w.wait(WAIT.registered('c1'), key('a'));
    w.release(WAIT.namespace('ns'));
    assert.ok(w.waitsFor(key('a'), WAIT.registered('c1')));
    assert.equal(w.waitsFor(key('a'), WAIT.namespace('ns')), false);
    w.release(WAIT.registered('c1'));
    assert.deepEqual(enqueued, [key('a'), key('a')]);
    assert.equal(w.size, 0, 'nothing left behind');
  });

  it('releases a key again that waits again after it was released', () => {
    const { w, enqueued } = waiters();
    w.wait(WAIT.clusters, key('a'));
    w.release(WAIT.clusters);
    w.wait(WAIT.clusters, key('a'));
    w.release(WAIT.clusters);
    assert.deepEqual(enqueued, [key('a'), key('a')]);
  });

  it('releases through a predicate only the events it selects', () => {
    const { w, enqueued } = waiters();
    w.wait(WAIT.reach('p1', 'c1'), key('a'));
    w.wait(WAIT.reach('p1', 'c2'), key('b'));
    w.wait(WAIT.reach('p10', 'c1'), key('c'));
    w.releaseWhere((e) => e.startsWith(WAIT.reach('p1', '')));
    assert.deepEqual(enqueued, [key('a'), key('b')]);
    assert.ok(w.waiting(WAIT.reach('p10', 'c1')), 'a peer whose name merely starts the same is not selected');
  });
});

describe('Waiters: what it holds', () => {
  it('counts each waiting key once, however many events it waits for', () => {
    const { w } = waiters();
    w.wait(WAIT.namespace('ns'), key('a'));
    w.wait(WAIT.death('c1'), key('a'));
    w.wait(WAIT.death('c1'), key('b'));
    assert.equal(w.size, 2);
  });

  it('tells whether any key waits for an event, and whether a given one does', () => {
    const { w } = waiters();
    w.wait(WAIT.death('c1'), key('a'));
    assert.ok(w.waiting(WAIT.death('c1')));
    assert.equal(w.waiting(WAIT.death('c2')), false);
    assert.ok(w.waitsFor(key('a'), WAIT.death('c1')));
    assert.equal(w.waitsFor(key('b'), WAIT.death('c1')), false);
    assert.equal(w.waitsFor(key('a'), WAIT.alive('c1')), false);
  });

  it('forgets everything a reconciled key waited for, and no other key', () => {
    const { w } = waiters();
    w.wait(WAIT.namespace('ns'), key('a'));
    w.wait(WAIT.death('c1'), key('a'));
    w.wait(WAIT.death('c1'), key('b'));
    w.forget(key('a'));
    assert.equal(w.waiting(WAIT.namespace('ns')), false);
    assert.ok(w.waitsFor(key('b'), WAIT.death('c1')));
    assert.equal(w.size, 1);
    w.forget(key('never-waited'));
    assert.equal(w.size, 1);
  });
});

describe('WAIT', () => {
  const at = (apiVersion: string, kind: string, namespace: string, name: string): KubeObject => ({ apiVersion, kind, metadata: { namespace, name } });

  it('names a change at a copy’s place alike for every version of its kind', () => {
    assert.equal(WAIT.target(at('example.com/v1', 'Widget', 'ns', 'a')), WAIT.target(at('example.com/v2', 'Widget', 'ns', 'a')));
  });

  it('names changes at other places apart: another group, kind, namespace or name', () => {
    const places = [at('example.com/v1', 'Widget', 'ns', 'a'), at('other.com/v1', 'Widget', 'ns', 'a'), at('example.com/v1', 'Gadget', 'ns', 'a'), at('example.com/v1', 'Widget', 'ns2', 'a'), at('example.com/v1', 'Widget', 'ns', 'b')];
    assert.equal(new Set(places.map(WAIT.target)).size, places.length);
  });

  it('names apart what may happen to one cluster, and the room of one rule and of all its peer’s copies', () => {
    const events = [WAIT.death('c1'), WAIT.alive('c1'), WAIT.registered('c1'), WAIT.namespace('c1'), WAIT.reach('p1', 'c1'), WAIT.reach('c1', 'p1'), WAIT.ruleCopies('r', 'c1'), WAIT.peerCopies('c1'), WAIT.clusters];
    assert.equal(new Set(events).size, events.length);
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

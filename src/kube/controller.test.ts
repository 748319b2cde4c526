import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller, jsonKeyCodec } from './controller.ts';
import { Informer } from './informer.ts';
import type { RestClient } from './rest.ts';
import type { KubeObject } from './types.ts';
import { registry } from './metrics.ts';
import { ItemExponentialFailureRateLimiter } from './workqueue.ts';

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const m = await registry.getSingleMetric(name)?.get();
  return m?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;
}

describe('Controller', () => {
  it('retries failures with backoff, honours requeueAfter, and survives anything a reconcile throws', async () => {
    const calls: string[] = [];
    const ac = new AbortController();
    const c = new Controller({
      name: 'test-retries',
      workers: 3,
      rateLimiter: new ItemExponentialFailureRateLimiter(1, 50),
      reconcile: async (key) => {
        calls.push(key);
        const n = calls.filter((k) => k === key).length;
        if (key === 'fails-twice' && n <= 2) throw new Error('transient');
        if (key === 'throws-non-error' && n === 1) throw 'a string'; // eslint-disable-line @typescript-eslint/only-throw-error
        if (key === 'periodic' && n < 3) return { requeueAfter: 10 };
        return undefined;
      },
    });
    const running = c.start(ac.signal);
    for (const k of ['fails-twice', 'throws-non-error', 'periodic', 'plain']) c.enqueue(k);
    await until(() => calls.filter((k) => k === 'fails-twice').length === 3 && calls.filter((k) => k === 'periodic').length === 3 && calls.filter((k) => k === 'throws-non-error').length === 2);
    assert.equal(calls.filter((k) => k === 'plain').length, 1);
    assert.equal(c.queue.numRequeues('fails-twice'), 0, 'success forgets the failures');
    assert.equal(await metric('controller_runtime_reconcile_errors_total', { controller: 'test-retries' }), 3);
    assert.equal(await metric('controller_runtime_reconcile_total', { controller: 'test-retries', result: 'requeue_after' }), 2);
    assert.equal(await metric('controller_runtime_max_concurrent_reconciles', { controller: 'test-retries' }), 3);
    ac.abort();
    await running;
  });

  it('never reconciles one key in two workers, and drains in-flight work on stop', async () => {
    const ac = new AbortController();
    const active = new Set<string>();
    let overlaps = 0;
    let finished = 0;
    const c = new Controller({
      name: 'test-exclusive',
      workers: 4,
      reconcile: async (key) => {
        if (active.has(key)) overlaps++;
        active.add(key);
        await new Promise((r) => setTimeout(r, 2));
        active.delete(key);
        finished++;
      },
    });
    const running = c.start(ac.signal);
    for (let i = 0; i < 200; i++) {
      c.enqueue(`k${i % 5}`);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    await until(() => finished >= 5);
    ac.abort();
    await running;
    assert.equal(overlaps, 0);
    assert.equal(active.size, 0, 'stop waited for reconciles in flight');
  });

  it('does not start workers before the caches sync, nor at all if stopped first', async () => {
    /** A cache that syncs when told to (or never), and says when the controller started waiting on it. */
    const cache = () => {
      const sync = Promise.withResolvers<boolean>();
      const c = {
        waiting: false,
        sync: sync.resolve,
        waitForSync: (signal?: AbortSignal): Promise<boolean> => {
          c.waiting = true;
          signal?.addEventListener('abort', () => sync.resolve(false));
          return sync.promise;
        },
      };
      return c;
    };
    const run = (name: string, waitFor: ReturnType<typeof cache>) => {
      const ac = new AbortController();
      const calls: string[] = [];
      const c = new Controller({ name, reconcile: async (key) => void calls.push(key) });
      c.enqueue('a');
      return { ac, calls, running: c.start(ac.signal, [waitFor]) };
    };

    const late = cache();
    const synced = run('test-sync', late);
    await until(() => late.waiting);
    assert.deepEqual(synced.calls, [], 'a reconcile before the cache synced');
    late.sync(true);
    await until(() => synced.calls.length === 1);
    synced.ac.abort();
    await synced.running;

    const never = cache();
    const stopped = run('test-sync-stopped', never);
    await until(() => never.waiting);
    stopped.ac.abort();
    await stopped.running;
    assert.deepEqual(stopped.calls, []);
  });

  it('lets timers and sockets run between keys whose reconciles do no I/O', async () => {
    const ac = new AbortController();
    const keys = 5_000;
    let reconciled = 0;
    const c = new Controller({ name: 'test-turns', workers: 4, reconcile: async () => void reconciled++ });
    for (let i = 0; i < keys; i++) c.enqueue(`k${i}`);
    const running = c.start(ac.signal);
    // A timer stands for a lease renewal or a probe: it must not wait for the whole backlog.
    const atTimer = await new Promise<number>((resolve) => setTimeout(() => resolve(reconciled), 0));
    assert.ok(atTimer < keys, `the timer waited for all ${keys} keys`);
    await until(() => reconciled === keys);
    ac.abort();
    await running;
  });

  it('reconciles typed keys and maps only the events its predicates pass', async () => {
    type Key = readonly [rule: string, name: string];
    const seen: Key[] = [];
    const ac = new AbortController();
    const c = new Controller<Key>({ name: 'test-typed', codec: jsonKeyCodec<Key>(), reconcile: async (k) => void seen.push(k) });
    // An informer that never runs: handlers are fed through its cache-replay and by hand.
    const inf = new Informer<KubeObject>({ rest: {} as RestClient, resource: { group: '', version: 'v1', resource: 'configmaps' } });
    const handlers: { onUpdate?(a: KubeObject, b: KubeObject): void; onAdd?(o: KubeObject): void; onDelete?(o: KubeObject, u: boolean): void }[] = [];
    const add = inf.addEventHandler.bind(inf);
    inf.addEventHandler = (h) => {
      handlers.push(h);
      return add(h);
    };
    const unsubscribe = c.watch(inf, (o) => [['r', o.metadata.name ?? ''] as const], { update: (a, b) => a.metadata.labels?.['x'] !== b.metadata.labels?.['x'], delete: () => false });
    const running = c.start(ac.signal);
    const obj = (name: string, x: string): KubeObject => ({ metadata: { name, labels: { x } } });
    handlers[0]?.onUpdate?.(obj('same', '1'), obj('same', '1'));
    handlers[0]?.onDelete?.(obj('gone', '1'), false);
    handlers[0]?.onUpdate?.(obj('old', '1'), obj('new', '2'));
    c.enqueue(['r', 'direct']);
    await until(() => seen.length >= 3);
    assert.deepEqual(seen.map((k) => k[1]).sort(), ['direct', 'new', 'old']);
    assert.ok(Array.isArray(seen[0]), 'keys come back typed');
    unsubscribe();
    ac.abort();
    await running;
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HealthServer } from './health.ts';
import { counter } from './metrics.ts';

describe('HealthServer', () => {
  it('serves /metrics, /healthz and /readyz with named checks, and closes on abort', async () => {
    const ac = new AbortController();
    const srv = new HealthServer({ address: '127.0.0.1:0' });
    let ready = false;
    srv.addReadyCheck('informers-synced', () => {
      if (!ready) throw new Error('not yet');
    });
    const port = await srv.start(ac.signal);
    const get = async (path: string): Promise<{ status: number; body: string }> => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, body: await res.text() };
    };
    try {
      counter({ name: 'health_test_total', help: 'test' }).inc();
      const metrics = await get('/metrics');
      assert.equal(metrics.status, 200);
      assert.match(metrics.body, /^health_test_total 1$/m);

      assert.deepEqual(await get('/healthz'), { status: 200, body: 'ok' });
      const notReady = await get('/readyz');
      assert.equal(notReady.status, 500);
      assert.match(notReady.body, /\[\+\]ping ok\n\[-\]informers-synced failed: reason withheld/);
      assert.equal((await get('/readyz?exclude=informers-synced')).status, 200);
      ready = true;
      const verbose = await get('/readyz?verbose');
      assert.equal(verbose.status, 200);
      assert.match(verbose.body, /\[\+\]informers-synced ok/);
      assert.equal((await get('/nope')).status, 404);
    } finally {
      ac.abort();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { SECRET_MARKER, exchange, garbageFor, garbageRequest, stall, tcp } from '../../test/support/raw-http.ts';
import { HealthServer } from './health.ts';
import { createLogger } from './log.ts';
import { counter, registry } from './metrics.ts';

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

describe('HealthServer under hostile clients', () => {
  // Short enough that waiting out a slow client takes a moment.
  const limits = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 300 };
  // How much later than its timeout a slow client may be cut off on a busy machine.
  const slackMs = 2_000;
  const stop = new AbortController();
  const lines: string[] = [];
  let port: number;

  before(async () => {
    const srv = new HealthServer({ address: '127.0.0.1:0', limits, logger: createLogger({ verbosity: 1, destination: { write: (l: string) => lines.push(l) } }) });
    port = await srv.start(stop.signal);
  });
  after(() => stop.abort());

  async function stillServes(): Promise<void> {
    const healthz = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.deepEqual([healthz.status, await healthz.text()], [200, 'ok']);
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    assert.deepEqual([metrics.status, metrics.headers.get('content-type')], [200, registry.contentType]);
    await metrics.text();
  }

  it('answers the request that used to end the process with 400', async () => {
    assert.equal((await exchange(tcp(port), 'POST http://[ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n')).status, 400);
    assert.equal((await exchange(tcp(port), 'POST http://[ HTTP/1.1\r\n\r\n')).status, 400);
    await stillServes();
  });

  it('answers known garbage with a 4xx or a closed connection', async () => {
    for (const path of ['/', '/healthz', '/readyz', '/metrics']) {
      for (const request of garbageFor(path)) {
        const { status } = await exchange(tcp(port), request);
        const what = `${JSON.stringify(request.slice(0, 80))} answered ${status}`;
        // An Upgrade header on a probe path is still a plain GET: it may be served.
        if (path === '/') assert.ok(status === undefined || (status >= 400 && status < 500), what);
        else assert.ok(status === undefined || status < 500, what);
      }
      await stillServes();
    }
  });

  it('only serves GET and HEAD', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: '{}' });
      assert.deepEqual([res.status, res.headers.get('allow')], [405, 'GET, HEAD']);
      const head = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'HEAD' });
      assert.deepEqual([head.status, await head.text()], [200, '']);
    }
  });

  it('survives random requests, never answering 5xx', async (t) => {
    let cases = 0;
    for (let batch = 0; batch < 5; batch++) {
      await fc.assert(
        fc.asyncProperty(garbageRequest(['/healthz', '/readyz', '/metrics']), async (request) => {
          cases++;
          const { status } = await exchange(tcp(port), request);
          assert.ok(status === undefined || status < 500, `answered ${status}`);
        }),
        { numRuns: 60 },
      );
      await stillServes();
    }
    t.diagnostic(`${cases} random requests`);
  });

  it('cuts off clients that stall before or within their headers', async () => {
    const bound = limits.headersTimeoutMs + slackMs;
    const [silent, trickle] = await Promise.all([stall(tcp(port), bound), stall(tcp(port), bound, 'GET /healthz HTTP/1.1\r\n', { text: 'X-Slow: abcdefgh', everyMs: 20 })]);
    assert.equal(trickle.status, 408);
    for (const s of [silent, trickle]) assert.ok(s.closedAfterMs >= limits.headersTimeoutMs * 0.9, `closed after ${s.closedAfterMs} ms`);
    await stillServes();
  });

  it('cuts off a request whose body trickles in', async () => {
    const slow = await stall(tcp(port), limits.requestTimeoutMs + slackMs, 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n', { text: 'x', everyMs: 20 });
    // The probe is answered at once; the body it never reads still may not hold the connection.
    assert.equal(slow.status, 200);
    assert.ok(slow.closedAfterMs >= limits.requestTimeoutMs * 0.9, `closed after ${slow.closedAfterMs} ms`);
    await stillServes();
  });

  it('never logs request headers or bodies, and logs client garbage at debug only', () => {
    assert.ok(lines.length > 0);
    for (const line of lines) {
      assert.ok(!line.includes(SECRET_MARKER), `a log line holds request content: ${line.slice(0, 200)}`);
      assert.equal((JSON.parse(line) as { level: string }).level, 'debug', line.slice(0, 200));
    }
  });
});

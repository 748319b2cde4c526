import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { exchange, holdOpen, tcp, type Held } from '../../test/support/raw-http.ts';
import { BodyBudget, DEFAULT_SERVER_LIMITS, HttpError, guard, serverOptions, type BodyAccount, type ServerLimits } from './http-server.ts';
import { createLogger } from './log.ts';
import { registry } from './metrics.ts';

describe('guard', () => {
  it('answers a throwing or rejecting handler with 500, an HttpError with its status, and keeps serving', async () => {
    const lines: string[] = [];
    const server = http.createServer(serverOptions(DEFAULT_SERVER_LIMITS));
    guard(
      server,
      (_req, res, url) => {
        if (url.pathname === '/throw') throw new TypeError('a bug');
        if (url.pathname === '/reject') return Promise.reject(new Error('a late bug'));
        if (url.pathname === '/teapot') throw new HttpError(418, 'short and stout', { 'X-Kind': 'teapot' });
        if (url.pathname === '/no-such-status') throw new HttpError(42, 'Node refuses to send this');
        if (url.pathname === '/half') {
          res.writeHead(200, { 'Content-Length': 10 });
          res.write('12345');
          return Promise.reject(new Error('died mid-answer'));
        }
        res.end('fine');
      },
      { name: 'guard-test', limits: DEFAULT_SERVER_LIMITS, log: createLogger({ verbosity: 1, destination: { write: (l: string) => lines.push(l) } }) },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      for (const path of ['/throw', '/reject']) {
        const res = await fetch(`http://127.0.0.1:${port}${path}`);
        assert.deepEqual([res.status, await res.text(), res.headers.get('connection')], [500, 'internal error\n', 'close']);
      }
      const teapot = await fetch(`http://127.0.0.1:${port}/teapot`);
      assert.deepEqual([teapot.status, await teapot.text(), teapot.headers.get('x-kind')], [418, 'short and stout\n', 'teapot']);
      // The status is out already: the only honest signal left is a broken connection.
      await assert.rejects(async () => (await fetch(`http://127.0.0.1:${port}/half`)).text());
      // Not even the error answer could go out: the connection ends instead.
      await assert.rejects(fetch(`http://127.0.0.1:${port}/no-such-status`));
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'fine');
      const logged = lines.map((l) => JSON.parse(l) as { level: string; msg: string });
      assert.equal(logged.filter((l) => l.level === 'error').length, 4);
      assert.deepEqual(
        logged.filter((l) => l.level === 'debug').map((l) => l.msg),
        ['request rejected', 'request rejected'],
      );
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
});

describe('BodyBudget', () => {
  const KiB = 1024;
  const limits = { maxBodyBytes: 100 * KiB, ownBodyBytes: 10 * KiB, maxBufferedBytes: 50 * KiB };

  it('charges the shared budget only past each request\'s own allowance, and refuses what does not fit without taking it', () => {
    const budget = new BodyBudget(limits);
    const a = budget.open();
    // [account, bytes, refusal, shared bytes in use afterwards]
    const steps: [BodyAccount, number, string | undefined, number][] = [
      [a, 10 * KiB, undefined, 0],
      [a, 1, undefined, 1],
      [a, 40 * KiB - 1, undefined, 40 * KiB],
      [a, 61 * KiB, 'too_large', 40 * KiB],
      [budget.open(), 10 * KiB, undefined, 40 * KiB],
      [budget.open(), 30 * KiB, 'busy', 40 * KiB],
      [budget.open(), 20 * KiB, undefined, 50 * KiB],
      [budget.open(), 10 * KiB + 1, 'busy', 50 * KiB],
      [budget.open(), 10 * KiB, undefined, 50 * KiB],
    ];
    for (const [i, [account, bytes, refusal, shared]] of steps.entries()) {
      assert.equal(account.take(bytes), refusal, `step ${i}`);
      assert.equal(budget.shared, shared, `step ${i}`);
    }
    a.release();
    assert.equal(budget.shared, 10 * KiB);
    // Released twice, it gives back nothing more; used again, it starts from nothing.
    a.release();
    assert.equal(budget.shared, 10 * KiB);
    assert.equal(a.take(50 * KiB), undefined);
    assert.equal(budget.shared, 50 * KiB);
  });

  it('with no shared budget, takes each request\'s own allowance only', () => {
    const budget = new BodyBudget({ ...limits, maxBufferedBytes: 0 });
    const accounts = Array.from({ length: 100 }, () => budget.open());
    for (const account of accounts) assert.equal(account.take(10 * KiB), undefined);
    assert.equal(accounts[0]!.take(1), 'busy');
    assert.equal(budget.shared, 0);
  });
});

describe('guard within a listener budget', () => {
  const KiB = 1024;
  const limits: ServerLimits = { ...DEFAULT_SERVER_LIMITS, idleTimeoutMs: 500, maxConnections: 8, maxBodyBytes: 512 * KiB, ownBodyBytes: 16 * KiB, maxBufferedBytes: 256 * KiB };
  const lines: string[] = [];
  const held: Held[] = [];
  let server: http.Server;
  let port: number;

  before(async () => {
    server = http.createServer(serverOptions(limits));
    guard(
      server,
      async (_req, res, url, readBody) => {
        // A large answer, for a client that never reads it.
        if (url.pathname === '/large') return void res.end(Buffer.alloc(16 * 1024 * 1024));
        res.end(String((await readBody()).length));
      },
      { name: 'budget-test', limits, log: createLogger({ verbosity: 0, destination: { write: (l: string) => lines.push(l) } }) },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    for (const h of held) h.drop();
    server.close();
    server.closeAllConnections();
  });

  const head = (framing: string): string => `POST / HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\n`;
  const hold = (bytes: number, chunked = false): Held => {
    const h = holdOpen(tcp(port), head(chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes + 1}`), bytes, chunked);
    held.push(h);
    return h;
  };
  async function refusals(): Promise<Record<string, number>> {
    const values = (await registry.getSingleMetric('cluster_registry_http_refusals_total')?.get())?.values ?? [];
    return Object.fromEntries(values.filter((v) => v.labels['listener'] === 'budget-test').map((v) => [String(v.labels['reason']), v.value]));
  }
  async function small(): Promise<{ status: number; text: string }> {
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x'.repeat(8 * KiB) });
    return { status: res.status, text: await res.text() };
  }

  it('refuses a body past the budget unread with 503, while small requests are still answered', async () => {
    const first = hold(200 * KiB);
    await first.sent;
    // Declared, the second cannot fit beside the first: refused before a byte of it is read.
    assert.equal((await hold(200 * KiB).closed).status, 503);
    // Undeclared, the third is charged as it arrives, and refused once it does not fit.
    assert.equal((await hold(200 * KiB, true).closed).status, 503);
    assert.deepEqual(await small(), { status: 200, text: String(8 * KiB) });
    // Past the cap, whatever the budget.
    assert.equal((await exchange(tcp(port), head(`Content-Length: ${600 * KiB}`))).status, 413);
    first.drop();
    // What the first held is given back once it is gone: a body as large fits again.
    await eventuallyOk(async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'x'.repeat(200 * KiB) })).status === 200);
    const counted = await refusals();
    assert.ok((counted['busy'] ?? 0) >= 2 && counted['too_large'] === 1, JSON.stringify(counted));
  });

  it('closes connections past its cap before reading them, and serves again once they are gone', async () => {
    const before = (await refusals())['connections'] ?? 0;
    const idle = Array.from({ length: limits.maxConnections }, () => hold(1));
    await Promise.all(idle.map((h) => h.sent));
    // Past the cap: closed unanswered.
    assert.equal((await exchange(tcp(port), 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')).status, undefined);
    assert.ok(((await refusals())['connections'] ?? 0) > before);
    for (const h of idle) h.drop();
    await eventuallyOk(async () => (await small().catch(() => ({ status: 0 }))).status === 200);
  });

  it('cuts off a client that stops reading its answer', async () => {
    const open = (): Promise<number> => new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await eventuallyOk(async () => (await open()) === 0);
    const reader = tcp(port)();
    reader.on('error', () => undefined);
    // Never read: the answer fills the socket's buffers and stops.
    reader.pause();
    reader.write('GET /large HTTP/1.1\r\nHost: x\r\n\r\n');
    const started = performance.now();
    await eventuallyOk(async () => (await open()) === 1);
    await eventuallyOk(async () => (await open()) === 0, limits.idleTimeoutMs + 5_000);
    reader.destroy();
    const closedAfterMs = performance.now() - started;
    assert.ok(closedAfterMs >= limits.idleTimeoutMs * 0.9, `closed after ${closedAfterMs} ms`);
  });

  it('says it is over budget in the log at a bounded rate', async () => {
    const warnings = (): number => lines.filter((l) => (JSON.parse(l) as { msg: string }).msg === 'listener over budget').length;
    const before = warnings();
    // Several refusals within one interval: said once (or not again, if said lately).
    const first = hold(200 * KiB);
    await first.sent;
    for (let i = 0; i < 3; i++) assert.equal((await hold(200 * KiB).closed).status, 503);
    first.drop();
    assert.ok(warnings() >= 1, 'said at all');
    assert.ok(warnings() - before <= 1, `said ${warnings() - before} times`);
  });
});

/** Polls `check` until it is true, failing after a few seconds. */
async function eventuallyOk(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(performance.now() < deadline, 'timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

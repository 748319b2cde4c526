// The REST client over HTTP/2 against scripted local HTTP/2 servers: one connection per server,
// stream limits, GOAWAY, reset streams, a connection that goes silent or dies under many streams,
// large bodies across flow-control windows, and the HTTP/1.1 fallback. The same behaviours are
// run against real API servers in test/integration/kube-http2.test.ts.
import assert from 'node:assert/strict';
import http2, { type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { TcpProxy } from '../../test/support/tcp-proxy.ts';
import { eventually } from '../../test/support/eventually.ts';
import { generateCertificates, type CertificatePair } from './certificates.ts';
import type { ConnectionSettings } from './config.ts';
import { isNetworkError, isNotProcessed } from './errors.ts';
import { ResponseTooLargeError, RestClient, type RestClientOptions, type WatchStream } from './rest.ts';
import { liveSecureContexts } from './tls-contexts.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const { NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_PROTOCOL_ERROR, NGHTTP2_REFUSED_STREAM } = http2.constants;

type StreamHandler = (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: string) => void;

interface Scripted {
  port: number;
  /** Sessions made so far, and those still open on the server's side. */
  sessions: number;
  readonly open: Set<unknown>;
  /** Streams the server saw close. */
  closedStreams: number;
  requests: string[];
  handle: StreamHandler;
  /** Destroys what is open and stops listening. */
  close(): Promise<void>;
}

const ok = (stream: ServerHttp2Stream, body: unknown = { kind: 'ConfigMap', metadata: { name: 'x' } }): void => {
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/json' });
  stream.end(JSON.stringify(body));
};

describe('RestClient over HTTP/2', () => {
  let pair: CertificatePair;
  const servers: Scripted[] = [];
  const clients: RestClient[] = [];
  const proxies: TcpProxy[] = [];

  before(async () => {
    pair = await generateCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const p of proxies.splice(0)) await p.stop();
    for (const s of servers.splice(0)) await s.close();
  });
  after(() => assert.equal(liveSecureContexts(), 0, 'every TLS context was released'));

  async function h2server(settings: http2.Settings = {}, onSession?: (session: http2.ServerHttp2Session) => void): Promise<Scripted> {
    const server: Http2SecureServer = http2.createSecureServer({ cert: pair.tlsCert, key: pair.tlsKey, settings });
    const open = new Set<http2.ServerHttp2Session>();
    const s: Scripted = {
      port: 0,
      sessions: 0,
      open,
      closedStreams: 0,
      requests: [],
      handle: (stream) => ok(stream),
      close: async () => {
        for (const session of open) session.destroy();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
    server.on('session', (session) => {
      s.sessions++;
      open.add(session);
      session.on('close', () => open.delete(session));
      session.on('error', () => undefined);
      onSession?.(session);
    });
    server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined);
      stream.on('close', () => s.closedStreams++);
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () => {
        s.requests.push(`${headers[':method']} ${headers[':path']}`);
        s.handle(stream, headers, body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    s.port = (server.address() as AddressInfo).port;
    servers.push(s);
    return s;
  }

  function client(port: number, opts: RestClientOptions = {}): RestClient {
    const conn: ConnectionSettings = {
      server: new URL(`https://127.0.0.1:${port}`),
      tls: { ca: pair.caCert },
      authHeaders: async () => ({ Authorization: 'Bearer t' }),
      invalidate: () => undefined,
    };
    const c = new RestClient(conn, { retryBaseMs: 1, maxRetries: 3, ...opts });
    clients.push(c);
    return c;
  }

  /** A TCP proxy in front of a scripted server, stopped after the test. */
  async function proxyTo(port: number): Promise<TcpProxy> {
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port });
    proxies.push(proxy);
    return proxy;
  }

  /** The stalled connection is closed within `withinMs`, and once traffic passes again the next call opens a second one. */
  async function assertReplaced(rest: RestClient, proxy: TcpProxy, withinMs: number): Promise<void> {
    await eventually('the silent connection to be closed', () => rest.connectionStats().open === 0, withinMs);
    proxy.unblock();
    await rest.get(CM, 'a', 'z');
    assert.equal(rest.connectionStats().opened, 2);
  }

  /** Reads a watch to its end: resolves when it ends quietly, rejects when it fails. */
  async function drain(w: AsyncIterable<unknown>): Promise<void> {
    for await (const ev of w) void ev;
  }

  /** A watch that stays open: the server sends one event and keeps the stream. */
  const holdWatch = (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders): boolean => {
    if (!String(headers[':path']).includes('watch=1')) return false;
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'w', resourceVersion: '1' } } })}\n`);
    return true;
  };

  it('sends every call and watch to a server over one connection', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => holdWatch(stream, headers) || ok(stream);
    const rest = client(s.port);
    const watches = await Promise.all(Array.from({ length: 5 }, () => rest.watch(CM, { namespace: 'a' })));
    await Promise.all(Array.from({ length: 20 }, (_, i) => rest.get(CM, 'a', `x${i}`)));
    await rest.create(CM, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    assert.deepEqual(rest.connectionStats(), { protocol: 'h2', open: 1, streams: 5, opened: 1, goaways: 0, draining: 0 });
    assert.equal(s.sessions, 1);
    for (const w of watches) w.close();
    await eventually('every stream to be given back', () => rest.connectionStats().streams === 0, 5_000);
  });

  it('a client derived with other limits shares the connection, which goes with the last client', async () => {
    const s = await h2server();
    const rest = client(s.port);
    const probe = rest.withOptions({ timeoutMs: 1000, maxRetries: 0 });
    await rest.get(CM, 'a', 'x');
    await probe.get(CM, 'a', 'x');
    assert.equal(s.sessions, 1);
    rest.close();
    await probe.get(CM, 'a', 'x');
    assert.equal(s.open.size, 1);
    probe.close();
    await eventually('the server to see the connection closed with the last client', () => s.open.size === 0, 5_000);
  });

  it('opens another connection only when the server allows no more streams on the first', async () => {
    const s = await h2server({ maxConcurrentStreams: 3 });
    s.handle = (stream, headers) => holdWatch(stream, headers) || ok(stream);
    const rest = client(s.port);
    const watches = [];
    for (let i = 0; i < 3; i++) watches.push(await rest.watch(CM, { namespace: 'a' }));
    assert.equal(rest.connectionStats().opened, 1);
    watches.push(await rest.watch(CM, { namespace: 'a' }));
    await rest.get(CM, 'a', 'x');
    assert.deepEqual(rest.connectionStats(), { protocol: 'h2', open: 2, streams: 4, opened: 2, goaways: 0, draining: 0 });
    for (const w of watches) w.close();
  });

  it('refuses a server that allows no stream at all, clearly, without opening connections without end', async () => {
    const s = await h2server({ maxConcurrentStreams: 0 });
    const rest = client(s.port, { maxRetries: 0 });
    await assert.rejects(rest.get(CM, 'a', 'x'), /allows no HTTP\/2 stream/);
    assert.ok(s.sessions <= 1);
  });

  it('after a GOAWAY, finishes the streams below its last one and sends the refused ones again, writes included, on a new connection', async () => {
    const s = await h2server();
    const posts: number[] = [];
    let held: ServerHttp2Stream[] = [];
    s.handle = (stream, headers) => {
      if (headers[':method'] !== 'POST') return ok(stream);
      if (s.sessions > 1) {
        posts.push(stream.id!);
        return ok(stream);
      }
      held.push(stream);
      if (held.length < 3) return;
      // The first stream was processed; the two after it were not, and the client must be told so.
      const first = held[0]!;
      posts.push(first.id!);
      first.session!.goaway(0, first.id);
      ok(first);
      held = [];
    };
    const rest = client(s.port);
    const created = await Promise.all(Array.from({ length: 3 }, (_, i) => rest.create(CM, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } })));
    assert.equal(created.length, 3);
    assert.equal(posts.length, 3, 'each write processed once');
    const stats = rest.connectionStats();
    assert.equal(stats.goaways, 1);
    assert.equal(stats.opened, 2);
  });

  it('a GOAWAY with an error ends the connection; idempotent calls in flight are sent again on a new one, a write it may have processed is not', async () => {
    const s = await h2server();
    let goawayNext = true;
    const processed: string[] = [];
    s.handle = (stream, headers) => {
      if (!goawayNext) return ok(stream);
      goawayNext = false;
      if (headers[':method'] === 'POST') processed.push(String(headers[':path']));
      // Its last stream is this one: processed, as far as the client can tell.
      stream.session!.goaway(NGHTTP2_PROTOCOL_ERROR, stream.id);
    };
    const rest = client(s.port);
    await rest.get(CM, 'a', 'x');
    assert.equal(rest.connectionStats().opened, 2);
    goawayNext = true;
    await assert.rejects(rest.create(CM, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } }), (err) => isNetworkError(err));
    assert.equal(processed.length, 1);
  });

  /** Watches held on `s` until `goaway` is called on the first of them (a GOAWAY saying each was processed), and the client's watches. */
  async function watchesThenGoaway(s: Scripted, n: number): Promise<{ watches: WatchStream[]; held: ServerHttp2Stream[]; goaway: (code?: number) => void }> {
    const held: ServerHttp2Stream[] = [];
    s.handle = (stream, headers) => {
      if (!holdWatch(stream, headers)) return ok(stream);
      held.push(stream);
    };
    const rest = client(s.port);
    const watches = await Promise.all(Array.from({ length: n }, () => rest.watch(CM, { namespace: 'a' })));
    const streams = [...held];
    return { watches, held, goaway: (code = 0) => streams[0]!.session!.goaway(code, Math.max(...streams.map((x) => x.id!))) };
  }

  it('a GOAWAY that lets the streams finish ends the watches on that connection quietly, and the connection closes once they have', async () => {
    const s = await h2server();
    const { watches, goaway } = await watchesThenGoaway(s, 3);
    const rest = clients.at(-1)!;
    let ended = 0;
    const ends = watches.map((w) => drain(w).finally(() => ended++));
    // As an API server does after --goaway-chance or a 401: every stream it has was processed, and it would serve them on.
    goaway();
    await eventually('every watch on the connection to end', () => ended === watches.length, 5_000);
    // Quietly: a reader takes it for a watch the server timed out, and opens it again.
    await Promise.all(ends);
    const again = await rest.watch(CM, { namespace: 'a' });
    await eventually('the old connection to close', () => s.open.size === 1, 5_000);
    // A server may answer the client's own GOAWAY with another: only the connections are counted exactly.
    const { goaways, ...stats } = rest.connectionStats();
    assert.ok(goaways >= 1);
    assert.deepEqual(stats, { protocol: 'h2', open: 1, streams: 1, opened: 2, draining: 0 });
    again.close();
  });

  it('a GOAWAY with an error fails the watches on its connection', async () => {
    const s = await h2server();
    const { watches, goaway } = await watchesThenGoaway(s, 2);
    const ends = watches.map(drain);
    goaway(NGHTTP2_ENHANCE_YOUR_CALM);
    for (const end of ends) await assert.rejects(end, (err) => isNetworkError(err));
  });

  it('a watch answered after its connection was told to go away is opened again on a new one', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => {
      if (!String(headers[':path']).includes('watch=1')) return ok(stream);
      // The GOAWAY reaches the client before the answer, which it says was processed.
      if (s.sessions === 1) stream.session!.goaway(0, stream.id);
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: `from-session-${s.sessions}`, resourceVersion: '1' } } })}\n`);
    };
    const rest = client(s.port);
    const w = await rest.watch(CM, { namespace: 'a' });
    for await (const ev of w) {
      assert.equal(ev.object.metadata.name, 'from-session-2');
      break;
    }
    assert.equal(rest.connectionStats().opened, 2);
  });

  it('a GOAWAY on a connection that carries calls only leaves the next one free to move its watches', async () => {
    const s = await h2server();
    const rest = client(s.port);
    s.handle = (stream) => {
      // As --goaway-chance does: the call drawing it is answered, and its connection goes.
      stream.session!.goaway(0, stream.id);
      ok(stream);
    };
    await rest.get(CM, 'a', 'x');
    const held: ServerHttp2Stream[] = [];
    s.handle = (stream, headers) => {
      if (!holdWatch(stream, headers)) return ok(stream);
      held.push(stream);
    };
    const watches = await Promise.all(Array.from({ length: 2 }, () => rest.watch(CM, { namespace: 'a' })));
    let ended = 0;
    const ends = watches.map((w) => drain(w).finally(() => ended++));
    held[0]!.session!.goaway(0, Math.max(...held.map((x) => x.id!)));
    await eventually('the watches to move', () => ended === watches.length, 5_000);
    await Promise.all(ends);
  });

  it('watches move at most once a minute: after a second GOAWAY they stay on the draining connection until they end', async () => {
    const s = await h2server();
    const first = await watchesThenGoaway(s, 2);
    const rest = clients.at(-1)!;
    first.goaway();
    for (const w of first.watches) await drain(w);
    const moved = await Promise.all(first.watches.map(() => rest.watch(CM, { namespace: 'a' })));
    const onSecond = first.held.slice(2);
    onSecond[0]!.session!.goaway(0, Math.max(...onSecond.map((x) => x.id!)));
    await eventually('the second GOAWAY to arrive', () => rest.connectionStats().goaways >= 2 && rest.connectionStats().draining === 1, 5_000);
    // Still served where they are: each reads the next event sent on the draining connection.
    for (const [i, w] of moved.entries()) {
      onSecond[i]!.write(`${JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'w', resourceVersion: '2' } } })}\n`);
      const it = w[Symbol.asyncIterator]();
      assert.equal((await it.next()).value?.type, 'ADDED');
      assert.equal((await it.next()).value?.type, 'MODIFIED');
    }
    assert.equal(rest.connectionStats().draining, 1);
    for (const w of moved) w.close();
  });

  it('a write is not sent again when the server refuses its stream after answering, nor on a GOAWAY saying REFUSED_STREAM at or above it', async () => {
    const s = await h2server();
    let posts = 0;
    let mode: 'reset after head' | 'goaway' = 'reset after head';
    s.handle = (stream) => {
      posts++;
      if (mode === 'goaway') return stream.session!.goaway(NGHTTP2_REFUSED_STREAM, stream.id);
      stream.respond({ ':status': 201, 'content-type': 'application/json' });
      stream.write('{"kind":');
      setImmediate(() => stream.close(NGHTTP2_REFUSED_STREAM));
    };
    const rest = client(s.port);
    const write = () => rest.create(CM, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } });
    await assert.rejects(write());
    assert.equal(posts, 1);
    mode = 'goaway';
    await assert.rejects(write(), (err) => isNetworkError(err));
    assert.equal(posts, 2);
  });

  it('a server that sends GOAWAY at once and never closes its side wedges nothing: more such connections than the cap, then it serves', async () => {
    let refuse = 40;
    const s = await h2server({}, (session) => {
      // Refuses every stream of its first sessions, and keeps the TCP connections open.
      if (refuse-- > 0) session.goaway(0, 0);
    });
    const rest = client(s.port, { maxRetries: 3 });
    // Each call may fail (its retries all refused) until the server serves; then each succeeds.
    let served = 0;
    for (let calls = 0; served < 10 && calls < 100; calls++) {
      try {
        await rest.get(CM, 'a', `x${calls}`);
        served++;
      } catch (err) {
        assert.ok(isNotProcessed(err), String(err));
      }
    }
    assert.equal(served, 10);
    assert.ok(s.sessions > 40);
    assert.deepEqual({ ...rest.connectionStats(), opened: 0 }, { protocol: 'h2', open: 1, streams: 0, opened: 0, goaways: 40, draining: 0 });
  });

  it('a watch that fails on a bad line cancels its stream, which the server sees close', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => {
      if (!holdWatch(stream, headers)) return ok(stream);
      stream.write('not json\n');
    };
    const rest = client(s.port);
    const w = await rest.watch(CM, { namespace: 'a' });
    await assert.rejects(drain(w), SyntaxError);
    await eventually('the server to see the watch stream closed', () => s.closedStreams === 1, 5_000);
    // Its slot is free again: as many streams as the server allows open on the same connection.
    await rest.get(CM, 'a', 'x');
    assert.equal(rest.connectionStats().opened, 1);
  });

  it('a watch reset by the server (RST_STREAM INTERNAL_ERROR) ends with an error, not quietly, and the connection serves on', async () => {
    const s = await h2server();
    let reset: (() => void) | undefined;
    s.handle = (stream, headers) => {
      if (!holdWatch(stream, headers)) return ok(stream);
      reset = () => stream.destroy(new Error('reset'));
    };
    const rest = client(s.port);
    const w = await rest.watch(CM, { namespace: 'a' });
    const events: string[] = [];
    const ended = (async () => {
      for await (const ev of w) {
        events.push(ev.type);
        reset?.();
      }
    })();
    await assert.rejects(ended, (err) => isNetworkError(err));
    assert.deepEqual(events, ['ADDED']);
    await rest.get(CM, 'a', 'x');
    assert.equal(rest.connectionStats().opened, 1);
  });

  it('a connection that goes silent fails every stream on it at the next PING, and the next call opens a new one', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => holdWatch(stream, headers) || ok(stream);
    const proxy = await proxyTo(s.port);
    const rest = client(proxy.port, { pingIntervalMs: 1000, maxRetries: 0 });
    const watches = await Promise.all(Array.from({ length: 4 }, () => rest.watch(CM, { namespace: 'a' })));
    const ends = watches.map(drain);
    proxy.stall();
    for (const end of ends) await assert.rejects(end, (err) => isNetworkError(err));
    await assertReplaced(rest, proxy, 5_000);
  });

  it('calls that give up on a silent connection get it checked at once: it is closed, and the next call opens a new one', async () => {
    const s = await h2server();
    const proxy = await proxyTo(s.port);
    const rest = client(proxy.port, { pingIntervalMs: 10_000, timeoutMs: 300, maxRetries: 0 });
    await rest.get(CM, 'a', 'x');
    proxy.stall();
    await assert.rejects(rest.get(CM, 'a', 'y'), /timed out/);
    // Before the next periodic check could have: the timed-out call asked for one.
    await assertReplaced(rest, proxy, 8_000);
  });

  it('a stream the server closes without answering fails its call, and closing the client fails what is in flight at once', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => {
      if (String(headers[':path']).includes('closed')) stream.close();
    };
    const rest = client(s.port, { maxRetries: 0, timeoutMs: 60_000 });
    await assert.rejects(rest.get(CM, 'a', 'closed'), (err) => isNetworkError(err));
    const pending = [rest.get(CM, 'a', 'unanswered'), rest.watch(CM, { namespace: 'a' })];
    await eventually('the server to hold both', () => s.requests.length === 3, 5_000);
    rest.close();
    for (const p of pending) await assert.rejects(p, (err) => isNetworkError(err));
  });

  it('a connection cut under many streams fails each watch, and retries each idempotent call on a new connection', async () => {
    const s = await h2server();
    const pending: ServerHttp2Stream[] = [];
    s.handle = (stream, headers) => {
      if (holdWatch(stream, headers)) return;
      if (s.sessions === 1) pending.push(stream);
      else ok(stream);
    };
    const proxy = await proxyTo(s.port);
    const rest = client(proxy.port);
    const watches = await Promise.all(Array.from({ length: 30 }, () => rest.watch(CM, { namespace: 'a' })));
    const ends = watches.map(drain);
    const gets = Promise.all(Array.from({ length: 10 }, (_, i) => rest.get(CM, 'a', `x${i}`)));
    await eventually('the calls to reach the server', () => pending.length === 10, 5_000);
    proxy.block();
    proxy.unblock();
    for (const end of ends) await assert.rejects(end, (err) => isNetworkError(err));
    assert.equal((await gets).length, 10);
    assert.equal(rest.connectionStats().opened, 2);
  });

  it('reads a body much larger than the flow-control windows whole', async () => {
    const s = await h2server();
    const big = { kind: 'ConfigMapList', metadata: {}, items: Array.from({ length: 400 }, (_, i) => ({ metadata: { name: `c${i}` }, data: { v: 'x'.repeat(100_000) } })) };
    s.handle = (stream) => ok(stream, big);
    const rest = client(s.port);
    const list = await rest.list(CM, { namespace: 'a' });
    assert.equal(list.items.length, 400);
    assert.equal((list.items[399] as unknown as { data: { v: string } }).data.v.length, 100_000);
  });

  it('a body over the cap resets its stream only: the connection serves the next call', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => ok(stream, String(headers[':path']).includes('big') ? { data: 'x'.repeat(4 << 20) } : undefined);
    const rest = client(s.port, { maxResponseBytes: 1 << 20 });
    await assert.rejects(rest.get(CM, 'a', 'big'), ResponseTooLargeError);
    await rest.get(CM, 'a', 'small');
    assert.equal(rest.connectionStats().opened, 1);
    await eventually('the capped stream to be given back', () => rest.connectionStats().streams === 0, 5_000);
  });

  it('a call timing out cancels its stream only', async () => {
    const s = await h2server();
    s.handle = (stream, headers) => {
      if (!String(headers[':path']).includes('slow')) ok(stream);
    };
    const rest = client(s.port, { timeoutMs: 300, maxRetries: 0 });
    await assert.rejects(rest.get(CM, 'a', 'slow'), /timed out/);
    await rest.get(CM, 'a', 'fast');
    assert.equal(rest.connectionStats().opened, 1);
    // The slow stream was cancelled, not left open on the connection.
    await eventually('the server to see the slow stream cancelled', () => s.closedStreams === 2, 5_000);
    assert.equal(rest.connectionStats().streams, 0);
  });

  it('a server that cannot be reached fails a call with the reason of the connection, as never processed', async () => {
    const s = await h2server();
    const port = s.port;
    await s.close();
    servers.splice(servers.indexOf(s), 1);
    const rest = client(port, { maxRetries: 0 });
    await assert.rejects(rest.create(CM, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } }), (err: NodeJS.ErrnoException) => err.code === 'ECONNREFUSED' && isNotProcessed(err));
  });

  it('falls back to HTTP/1.1 when the TLS handshake does not agree on h2', async () => {
    const server = https.createServer({ cert: pair.tlsCert, key: pair.tlsKey }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const s: Scripted = {
      port: (server.address() as AddressInfo).port,
      sessions: 0,
      open: new Set(),
      closedStreams: 0,
      requests: [],
      handle: () => undefined,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      },
    };
    servers.push(s);
    const rest = client(s.port);
    const got = await rest.get(CM, 'a', 'x');
    assert.equal(got.metadata.name, 'x');
    await rest.get(CM, 'a', 'y');
    assert.equal(rest.connectionStats().protocol, 'http/1.1');
  });

  it('clients with the same CA share one TLS context', async () => {
    const s = await h2server();
    const before = liveSecureContexts();
    const a = client(s.port);
    const b = client(s.port);
    await Promise.all([a.get(CM, 'a', 'x'), b.get(CM, 'a', 'x')]);
    assert.equal(liveSecureContexts(), before + 1);
  });
});

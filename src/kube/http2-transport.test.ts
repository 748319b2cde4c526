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
import { isNetworkError } from './errors.ts';
import { ResponseTooLargeError, RestClient, type RestClientOptions } from './rest.ts';
import { liveSecureContexts } from './tls-contexts.ts';

const CM = { group: '', version: 'v1', resource: 'configmaps' };
const { NGHTTP2_PROTOCOL_ERROR } = http2.constants;

type StreamHandler = (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: string) => void;

interface Scripted {
  server: Http2SecureServer | https.Server;
  port: number;
  sessions: number;
  requests: string[];
  handle: StreamHandler;
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
    for (const s of servers.splice(0)) {
      if ('closeAllConnections' in s.server) s.server.closeAllConnections();
      await new Promise<void>((r) => s.server.close(() => r()));
    }
  });
  after(() => assert.equal(liveSecureContexts(), 0, 'every TLS context was released'));

  async function h2server(settings: http2.Settings = {}): Promise<Scripted> {
    const server = http2.createSecureServer({ cert: pair.tlsCert, key: pair.tlsKey, settings });
    const s: Scripted = { server, port: 0, sessions: 0, requests: [], handle: (stream) => ok(stream) };
    const open = new Set<http2.ServerHttp2Session>();
    server.on('session', (session) => {
      s.sessions++;
      open.add(session);
      session.on('close', () => open.delete(session));
      session.on('error', () => undefined);
    });
    server.on('stream', (stream, headers) => {
      stream.on('error', () => undefined);
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () => {
        s.requests.push(`${headers[':method']} ${headers[':path']}`);
        s.handle(stream, headers, body);
      });
    });
    // Sessions outlive server.close(); the test's end destroys them.
    (server as unknown as { closeAllConnections: () => void }).closeAllConnections = () => {
      for (const session of open) session.destroy();
    };
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
    assert.deepEqual(rest.connectionStats(), { protocol: 'h2', open: 1, opened: 1, goaways: 0 });
    assert.equal(s.sessions, 1);
    for (const w of watches) w.close();
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
    probe.close();
    await eventually('the connection to close with the last client', () => probe.connectionStats().open === 0, 5_000);
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
    assert.deepEqual(rest.connectionStats(), { protocol: 'h2', open: 2, opened: 2, goaways: 0 });
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

  it('a GOAWAY with an error ends the connection; idempotent calls in flight are sent again on a new one', async () => {
    const s = await h2server();
    s.handle = (stream) => {
      if (s.sessions === 1) stream.session!.goaway(NGHTTP2_PROTOCOL_ERROR, 0);
      else ok(stream);
    };
    const rest = client(s.port);
    await rest.get(CM, 'a', 'x');
    assert.equal(rest.connectionStats().opened, 2);
    // A write is not sent twice after a connection error: the server may have acted on it.
    s.sessions = 0;
    const fresh = client(s.port);
    await assert.rejects(fresh.create(CM, 'a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } }), (err) => isNetworkError(err));
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
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: s.port });
    proxies.push(proxy);
    const rest = client(proxy.port, { pingIntervalMs: 200, maxRetries: 0 });
    const watches = await Promise.all(Array.from({ length: 4 }, () => rest.watch(CM, { namespace: 'a' })));
    const ends = watches.map(async (w) => {
      for await (const ev of w) void ev;
    });
    proxy.stall();
    for (const end of ends) await assert.rejects(end, (err) => isNetworkError(err));
    await eventually('the silent connection to be closed', () => rest.connectionStats().open === 0, 5_000);
    proxy.unblock();
    await rest.get(CM, 'a', 'x');
    assert.equal(rest.connectionStats().opened, 2);
  });

  it('a connection cut under many streams fails each watch, and retries each idempotent call on a new connection', async () => {
    const s = await h2server();
    const pending: ServerHttp2Stream[] = [];
    s.handle = (stream, headers) => {
      if (holdWatch(stream, headers)) return;
      if (s.sessions === 1) pending.push(stream);
      else ok(stream);
    };
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: s.port });
    proxies.push(proxy);
    const rest = client(proxy.port);
    const watches = await Promise.all(Array.from({ length: 30 }, () => rest.watch(CM, { namespace: 'a' })));
    const ends = watches.map(async (w) => {
      for await (const ev of w) void ev;
    });
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
  });

  it('falls back to HTTP/1.1 when the TLS handshake does not agree on h2', async () => {
    const server = https.createServer({ cert: pair.tlsCert, key: pair.tlsKey }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'x' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const s: Scripted = { server, port: (server.address() as AddressInfo).port, sessions: 0, requests: [], handle: () => undefined };
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

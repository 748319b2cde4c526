// The REST client against a scripted local HTTP server: retries, credentials refresh, request
// framing and watch stream parsing, without an apiserver.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ConnectionSettings } from './config.ts';
import { ApiError, WatchInactivityError, isConflict, isGone, isNotFound } from './errors.ts';
import { RestClient, resourcePath } from './rest.ts';

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;
const CM = { group: '', version: 'v1', resource: 'configmaps' };

describe('RestClient', () => {
  let server: http.Server;
  let handler: Handler;
  let requests: { method: string; url: string; body: string; auth: string | undefined }[];
  let tokens: string[];
  let invalidations: number;
  let client: RestClient;

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        requests.push({ method: req.method!, url: req.url!, body, auth: req.headers.authorization });
        handler(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  after(() => {
    client.close();
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    requests = [];
    tokens = ['t1', 't2', 't3'];
    invalidations = 0;
    const conn: ConnectionSettings = {
      server: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      tls: {},
      authHeaders: async () => ({ Authorization: `Bearer ${tokens[invalidations]}` }),
      invalidate: () => void invalidations++,
    };
    client?.close();
    client = new RestClient(conn, { retryBaseMs: 1, maxRetries: 3 });
  });

  const json = (res: http.ServerResponse, code: number, obj: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(obj));
  };
  const status = (code: number, reason: string, message = ''): object => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });

  it('builds core and group paths', () => {
    assert.equal(resourcePath(CM, 'ns', 'a'), '/api/v1/namespaces/ns/configmaps/a');
    assert.equal(resourcePath({ group: 'apps', version: 'v1', resource: 'deployments' }, undefined), '/apis/apps/v1/deployments');
    assert.equal(resourcePath({ group: 'x.io', version: 'v1', resource: 'things' }, 'n', 'a b', 'status'), '/apis/x.io/v1/namespaces/n/things/a%20b/status');
  });

  it('maps Status bodies to typed errors', async () => {
    handler = (_req, _b, res) => json(res, 404, status(404, 'NotFound', 'configmaps "a" not found'));
    const err = await client.get(CM, 'ns', 'a').catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.ok(isNotFound(err));
    assert.equal(err.message, 'GET /api/v1/namespaces/ns/configmaps/a: 404 NotFound: configmaps "a" not found');
    handler = (_req, _b, res) => json(res, 409, status(409, 'Conflict'));
    assert.ok(isConflict(await client.update(CM, 'ns', { metadata: { name: 'a', resourceVersion: '1' } }).catch((e: unknown) => e)));
    handler = (_req, _b, res) => json(res, 410, status(410, 'Expired'));
    assert.ok(isGone(await client.list(CM).catch((e: unknown) => e)));
  });

  it('retries 429 honouring Retry-After, for writes too', async () => {
    let n = 0;
    handler = (_req, _b, res) => (n++ === 0 ? json(res, 429, status(429, 'TooManyRequests'), { 'Retry-After': '1' }) : json(res, 201, { metadata: { name: 'a' } }));
    const t0 = performance.now();
    await client.create(CM, 'ns', { metadata: { name: 'a' } });
    assert.ok(performance.now() - t0 >= 950, 'waited for Retry-After');
    assert.equal(requests.length, 2);
  });

  it('retries 5xx on GET but not on POST', async () => {
    handler = (_req, _b, res) => json(res, 503, status(503, 'ServiceUnavailable'));
    await assert.rejects(client.get(CM, 'ns', 'a'), (e: unknown) => e instanceof ApiError && e.code === 503);
    assert.equal(requests.length, 4);
    requests = [];
    await assert.rejects(client.create(CM, 'ns', { metadata: { name: 'a' } }));
    assert.equal(requests.length, 1);
  });

  it('retries a dropped connection on GET', async () => {
    let n = 0;
    handler = (req, _b, res) => (n++ === 0 ? req.socket.destroy() : json(res, 200, { metadata: { name: 'a' } }));
    assert.equal((await client.get(CM, 'ns', 'a')).metadata.name, 'a');
    assert.equal(requests.length, 2);
  });

  it('refreshes credentials once after a 401', async () => {
    handler = (req, _b, res) => (req.headers.authorization === 'Bearer t2' ? json(res, 200, { metadata: { name: 'a' } }) : json(res, 401, status(401, 'Unauthorized')));
    await client.get(CM, 'ns', 'a');
    assert.deepEqual(requests.map((r) => r.auth), ['Bearer t1', 'Bearer t2']);
  });

  it('frames DELETE bodies so a kept-alive socket stays in step', async () => {
    handler = (_req, _b, res) => json(res, 200, { kind: 'Status', status: 'Success' });
    await client.delete(CM, 'ns', 'a', { propagationPolicy: 'Foreground', preconditions: { uid: 'u1', resourceVersion: '7' } });
    handler = (_req, _b, res) => json(res, 200, { metadata: { name: 'b' } });
    await client.get(CM, 'ns', 'b');
    assert.deepEqual(JSON.parse(requests[0]!.body), { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground', preconditions: { uid: 'u1', resourceVersion: '7' } });
    assert.equal(requests[1]!.method, 'GET');
  });

  it('sends server-side apply with fieldManager and force', async () => {
    let contentType: string | undefined;
    handler = (req, body, res) => {
      contentType = req.headers['content-type'];
      json(res, 200, JSON.parse(body));
    };
    await client.apply(CM, 'ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, { fieldManager: 'me', force: true });
    assert.equal(contentType, 'application/apply-patch+yaml');
    assert.match(requests[0]!.url, /^\/api\/v1\/namespaces\/ns\/configmaps\/a\?.*fieldManager=me.*&force=true/);
    await assert.rejects(client.patch(CM, 'ns', 'a', 'apply', {}), /fieldManager/);
  });

  it('follows continue tokens in listAll', async () => {
    handler = (req, _b, res) => {
      const cont = new URL(req.url!, 'http://x').searchParams.get('continue');
      json(res, 200, { kind: 'ConfigMapList', metadata: cont ? { resourceVersion: '9' } : { resourceVersion: '9', continue: 'next' }, items: [{ metadata: { name: cont ? 'b' : 'a' } }] });
    };
    const list = await client.listAll(CM, { namespace: 'ns' });
    assert.deepEqual(list.items.map((i) => i.metadata.name), ['a', 'b']);
    assert.equal(list.metadata.resourceVersion, '9');
    assert.match(requests[0]!.url, /limit=500/);
  });

  it('parses watch events split across chunks and ends cleanly', async () => {
    handler = (_req, _b, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const lines = [1, 2, 3].map((i) => JSON.stringify({ type: 'ADDED', object: { metadata: { name: `o${i}`, resourceVersion: String(i) } } }) + '\n').join('');
      res.write(lines.slice(0, 10));
      setTimeout(() => {
        res.write(lines.slice(10, 100));
        res.end(lines.slice(100));
      }, 20);
    };
    const stream = await client.watch(CM, { resourceVersion: '0', allowWatchBookmarks: true });
    const names: string[] = [];
    for await (const ev of stream) names.push(ev.object.metadata.name!);
    assert.deepEqual(names, ['o1', 'o2', 'o3']);
    assert.match(requests[0]!.url, /watch=1.*resourceVersion=0.*allowWatchBookmarks=true/);
  });

  it('rejects a refused watch with the Status and fails a silent one with WatchInactivityError', async () => {
    handler = (_req, _b, res) => json(res, 410, status(410, 'Expired', 'too old resource version'));
    await assert.rejects(client.watch(CM, { resourceVersion: '1' }), (e: unknown) => isGone(e));
    handler = (_req, _b, res) => res.writeHead(200).flushHeaders();
    const stream = await client.watch(CM, { inactivityTimeoutMs: 100 });
    await assert.rejects(async () => {
      for await (const _ of stream) assert.fail('no events expected');
    }, WatchInactivityError);
  });

  it('survives an abort after a watch response was read in full but not yet consumed', async () => {
    // The socket is back in the keep-alive pool by then; destroying it used to crash the process.
    const body = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ type: 'ADDED', object: { metadata: { name: `o${i}` } } }) + '\n').join('');
    handler = (_req, _b, res) => {
      res.writeHead(200);
      res.end(body);
    };
    const ac = new AbortController();
    const stream = await client.watch(CM, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 50));
    let n = 0;
    for await (const _ of stream) if (++n === 5) ac.abort();
    assert.equal(n, 5);
    handler = (_req, _b, res) => json(res, 200, { metadata: { name: 'after' } });
    assert.equal((await client.get(CM, 'ns', 'after')).metadata.name, 'after');
  });

  it('times out a request the server never answers', async () => {
    handler = () => undefined;
    const err = await client.get(CM, 'ns', 'slow', { timeoutMs: 100 }).catch((e: unknown) => e);
    assert.match(String(err), /timed out after 100 ms/);
    assert.match(requests.at(-1)!.url, /timeout=1s/);
  });

  it('ends a watch quietly when closed', async () => {
    handler = (_req, _b, res) => res.writeHead(200).flushHeaders();
    const stream = await client.watch(CM, {});
    setTimeout(() => stream.close(), 20);
    for await (const _ of stream) assert.fail('no events expected');
  });
});

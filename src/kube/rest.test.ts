// The REST client against a scripted local HTTP server: retries, credentials refresh, request
// framing and watch stream parsing, without an apiserver.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ConnectionSettings } from './config.ts';
import { ApiError, WatchInactivityError, isConflict, isGone, isNotFound } from './errors.ts';
import { registry } from './metrics.ts';
import { CLOSED_PEERS_HOST, MAX_HOST_LABELS, OVERFLOW_HOST, ResponseTooLargeError, RestClient, peerHostLabel, resourcePath, type RestClientOptions } from './rest.ts';

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;
const CM = { group: '', version: 'v1', resource: 'configmaps' };

describe('RestClient', () => {
  let server: http.Server;
  let handler: Handler;
  let requests: { method: string; url: string; body: string; auth: string | undefined }[];
  let tokens: string[];
  let invalidations: number;
  let client: RestClient;
  let conn: ConnectionSettings;
  let extraClients: RestClient[] = [];
  /** A client of the same server with other options; closed after the test. */
  const clientWith = (opts: RestClientOptions): RestClient => {
    const c = new RestClient(conn, { retryBaseMs: 1, maxRetries: 3, ...opts });
    extraClients.push(c);
    return c;
  };

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
    for (const c of extraClients) c.close();
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    requests = [];
    tokens = ['t1', 't2', 't3'];
    invalidations = 0;
    for (const c of extraClients) c.close();
    extraClients = [];
    conn = {
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
  /** Writes `chunk` as fast as the client reads it, every `everyMs` if given; resolves with the bytes written once the connection closed. */
  const stream = (res: http.ServerResponse, chunk: string, everyMs?: number): Promise<number> =>
    new Promise((resolve) => {
      let written = 0;
      let timer: NodeJS.Timeout | undefined;
      res.on('close', () => {
        clearTimeout(timer);
        resolve(written);
      });
      const pump = (): void => {
        while (!res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
          if (everyMs !== undefined) return void (timer = setTimeout(pump, everyMs));
        }
      };
      pump();
    });

  it('a read-only client sends reads and self access reviews, and refuses every other request before sending it', async () => {
    handler = (_req, _body, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    const peer = clientWith({ readOnly: true });
    await peer.get(CM, 'ns', 'a');
    await peer.create({ group: 'authorization.k8s.io', version: 'v1', resource: 'selfsubjectaccessreviews' }, undefined, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {} });
    for (const write of [
      () => peer.create(CM, 'ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }),
      () => peer.update(CM, 'ns', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }),
      () => peer.patch(CM, 'ns', 'a', 'merge', {}),
      () => peer.delete(CM, 'ns', 'a'),
      () => peer.create({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' }, undefined, { metadata: {} }),
    ]) {
      await assert.rejects(write(), (err: Error) => err.name === 'ReadOnlyError');
    }
    assert.deepEqual(requests.map((r) => r.method), ['GET', 'POST'], 'only the read and the review reached the server');
  });

  it('asks a read-only client what its credentials may do, and takes an answer without a status for a denial', async () => {
    const answers = [{ status: { allowed: true } }, {}];
    handler = (_req, _body, res) => json(res, 201, answers.shift());
    const peer = clientWith({ readOnly: true });
    const attributes = { group: 'apps', version: 'v1', resource: 'deployments', verb: 'list', namespace: 'ns' };
    assert.deepEqual(await peer.reviewAccess(attributes), { allowed: true });
    assert.deepEqual(await peer.reviewAccess(attributes), { allowed: false });
    assert.equal(requests[0]?.url.split('?')[0], '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews');
    assert.deepEqual(JSON.parse(requests[0]?.body ?? ''), { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', metadata: {}, spec: { resourceAttributes: attributes } });
  });

  it('reads a path as JSON with the representation asked for', async () => {
    let accept: string | undefined;
    handler = (req, _body, res) => ((accept = req.headers.accept), json(res, 200, { gitVersion: 'v1.36.3' }));
    assert.deepEqual(await client.getJson('/version', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' }), { gitVersion: 'v1.36.3' });
    assert.equal(accept, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal(requests[0]?.method, 'GET');
  });

  it('a read-only client with allowed writes sends those, and refuses the others', async () => {
    handler = (_req, _body, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    const hub = clientWith({ readOnly: true, allowWrite: (method, path) => method === 'PATCH' && path === '/api/v1/namespaces/ns/configmaps/a/status' });
    await hub.patchStatus(CM, 'ns', 'a', 'merge', {});
    await assert.rejects(hub.patch(CM, 'ns', 'a', 'merge', {}), (err: Error) => err.name === 'ReadOnlyError');
    await assert.rejects(hub.patchStatus(CM, 'ns', 'b', 'merge', {}), (err: Error) => err.name === 'ReadOnlyError');
    assert.deepEqual(requests.map((r) => [r.method, r.url.split('?')[0]]), [['PATCH', '/api/v1/namespaces/ns/configmaps/a/status']]);
  });

  /** The `rest_client_*` series of this process, as `host code method` and `host verb` lines, for hosts matching `hosts`. */
  async function seriesOf(hosts: RegExp): Promise<string[]> {
    const lines: string[] = [];
    for (const name of ['rest_client_requests_total', 'rest_client_request_duration_seconds']) {
      for (const v of (await registry.getSingleMetric(name)?.get())?.values ?? []) {
        const l = v.labels;
        // A histogram's series once: by its count.
        const metric = 'metricName' in v ? String(v.metricName) : name;
        if (!hosts.test(String(l['host'])) || /_(bucket|sum)$/.test(metric)) continue;
        lines.push([l['host'], l['code'], l['method'] ?? l['verb']].filter((x) => x !== undefined).join(' '));
      }
    }
    return lines.sort();
  }

  async function closedPeersCount(method: string): Promise<number> {
    const values = (await registry.getSingleMetric('rest_client_requests_total')?.get())?.values ?? [];
    return values.filter((v) => v.labels['host'] === CLOSED_PEERS_HOST && v.labels['method'] === method).reduce((n, v) => n + v.value, 0);
  }

  it("counts a peer's requests under its Cluster name, never its address, and drops its series when its last client closes", async () => {
    handler = (_req, _body, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    const own = server.address() as AddressInfo;
    const rest = clientWith({ peer: 'east' });
    const probe = clientWith({ peer: 'east' });
    await rest.get(CM, 'ns', 'a');
    await probe.get(CM, 'ns', 'a');
    await client.get(CM, 'ns', 'a');
    assert.deepEqual(await seriesOf(/^peer\/east$/), ['peer/east 200 GET', 'peer/east GET']);
    // Our own server keeps its address; the peer's address (the same one here) names only our own client's requests.
    assert.deepEqual(await seriesOf(new RegExp(`^127\\.0\\.0\\.1:${own.port}$`)), [`127.0.0.1:${own.port} 200 GET`, `127.0.0.1:${own.port} GET`]);
    rest.close();
    // The probe still uses the label: the series stay.
    assert.equal((await seriesOf(/^peer\/east$/)).length, 2);
    const closedBefore = await closedPeersCount('GET');
    probe.close();
    assert.deepEqual(await seriesOf(/^peer\/east$/), []);
    // What was sent to it stays counted with every other peer that went.
    assert.equal((await closedPeersCount('GET')) - closedBefore, 2);
    // A closed client counts nothing more, even for a call that was under way.
    await rest.get(CM, 'ns', 'a');
    assert.deepEqual(await seriesOf(/^peer\/east$/), []);
  });

  it('makes no series of the status codes a peer makes up', async () => {
    const peer = clientWith({ peer: 'west', maxRetries: 0 });
    for (const code of [299, 404, 599, 777]) {
      handler = (_req, _body, res) => res.writeHead(code, { 'Content-Type': 'application/json' }).end('{}');
      await peer.get(CM, 'ns', 'a').catch(() => undefined);
    }
    assert.deepEqual(await seriesOf(/^peer\/west$/), ['peer/west 404 GET', 'peer/west GET', 'peer/west other GET']);
    peer.close();
  });

  it('lets peers hold at most MAX_HOST_LABELS labels at once; the others share one, dropped with its last client', async () => {
    handler = (_req, _body, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    const peers = Array.from({ length: MAX_HOST_LABELS + 10 }, (_, i) => new RestClient(conn, { peer: `p${i}` }));
    try {
      for (const p of peers) await p.get(CM, 'ns', 'a');
      const hosts = new Set((await seriesOf(/./)).map((l) => l.split(' ')[0]));
      // Beside the labels in use, one holds what went to peers that are gone.
      hosts.delete(CLOSED_PEERS_HOST);
      assert.ok(hosts.size <= MAX_HOST_LABELS, `${hosts.size} host labels`);
      assert.ok(hosts.has(OVERFLOW_HOST));
      assert.ok(hosts.has(peerHostLabel('p0')));
    } finally {
      for (const p of peers) p.close();
    }
    assert.deepEqual(await seriesOf(new RegExp(`^(peer/p\\d+|${OVERFLOW_HOST})$`)), []);
  });

  it('builds core and group paths', () => {
    assert.equal(resourcePath(CM, 'ns', 'a'), '/api/v1/namespaces/ns/configmaps/a');
    assert.equal(resourcePath({ group: 'apps', version: 'v1', resource: 'deployments' }, undefined), '/apis/apps/v1/deployments');
    assert.equal(resourcePath({ group: 'x.io', version: 'v1', resource: 'things' }, 'n', 'a b', 'status'), '/apis/x.io/v1/namespaces/n/things/a%20b/status');
  });

  it('refuses names that would make the path point elsewhere, or that the API server refuses in a path', () => {
    for (const [ns, name] of [['ns', '..'], ['ns', '.'], ['ns', ''], ['..', 'a'], ['.', 'a'], ['ns', 'a/b'], ['ns', '%!(NOVERB)'], ['n%s', 'a']] as const) {
      assert.throws(() => resourcePath(CM, ns, name), /^Error: invalid (name|namespace) "[^"]*" in a request path$/, `${ns}/${name}`);
    }
    assert.equal(resourcePath(CM, 'ns', '...'), '/api/v1/namespaces/ns/configmaps/...');
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

  it('waits at most maxRetryAfterMs for a Retry-After, and not past the call timeout', { timeout: 10_000 }, async () => {
    let n = 0;
    handler = (_req, _b, res) => (n++ === 0 ? json(res, 429, status(429, 'TooManyRequests'), { 'Retry-After': '86400' }) : json(res, 200, { metadata: { name: 'a' } }));
    const capped = clientWith({ maxRetryAfterMs: 200 });
    const t0 = performance.now();
    assert.equal((await capped.get(CM, 'ns', 'a')).metadata.name, 'a');
    assert.ok(performance.now() - t0 >= 195, 'waited the capped Retry-After');
    assert.equal(requests.length, 2);

    // A wait that would end after the call's deadline is not started: the 429 is the answer.
    requests = [];
    handler = (_req, _b, res) => json(res, 429, status(429, 'TooManyRequests'), { 'Retry-After': '5' });
    await assert.rejects(clientWith({ timeoutMs: 1_000 }).get(CM, 'ns', 'a'), (e: unknown) => e instanceof ApiError && e.code === 429);
    assert.equal(requests.length, 1);
  });

  it('fails a call whose body outgrows maxResponseBytes without reading the rest', async () => {
    const small = clientWith({ maxResponseBytes: 1 << 20 });
    const tooLarge = /: response body exceeds 1048576 bytes$/;
    let served: Promise<number> | undefined;
    handler = (_req, _b, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      served = stream(res, 'x'.repeat(64 << 10));
    };
    const err = await small.get(CM, 'ns', 'huge').catch((e: unknown) => e);
    assert.match(String((err as Error).message), tooLarge);
    assert.ok(err instanceof ResponseTooLargeError);
    assert.doesNotMatch(String((err as Error).message), /xxx|Bearer/);
    // The server was cut off after about the cap plus what the sockets buffer, not let run on.
    assert.ok((await served!) < 64 << 20, 'the connection was closed');

    // An announced length over the cap fails at once; so does the body of a refused watch.
    handler = (_req, _b, res) => res.writeHead(200, { 'Content-Length': String(10 * 2 ** 30) }).flushHeaders();
    await assert.rejects(small.get(CM, 'ns', 'announced'), tooLarge);
    handler = (_req, _b, res) => {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      void stream(res, 'x'.repeat(64 << 10));
    };
    await assert.rejects(small.watch(CM, {}), /^ResponseTooLargeError: WATCH \/api\/v1\/configmaps: response body exceeds 1048576 bytes$/);

    // The pool is still usable.
    handler = (_req, _b, res) => json(res, 200, { metadata: { name: 'after' } });
    assert.equal((await small.get(CM, 'ns', 'after')).metadata.name, 'after');
  });

  it('quotes at most a clipped Status message in errors', async () => {
    handler = (_req, _b, res) => json(res, 422, status(422, 'R'.repeat(10_000), 'm'.repeat(100_000)));
    const err = await client.create(CM, 'ns', { metadata: { name: 'a' } }).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError && err.code === 422);
    // Reason and message keep at most 64 and 1024 characters, the last ones counting the rest.
    assert.match(err.message, /: 422 R{39}… \(9961 more characters\): m{998}… \(99002 more characters\)$/);
  });

  it('cuts a trickling body, and retries, at the call timeout', async () => {
    let served: Promise<number> | undefined;
    handler = (_req, _b, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      served = stream(res, ' ', 10);
    };
    const t0 = performance.now();
    const err = await clientWith({ timeoutMs: 300 }).get(CM, 'ns', 'slow').catch((e: unknown) => e);
    assert.match(String(err), /GET \/api\/v1\/namespaces\/ns\/configmaps\/slow: timed out after 300 ms/);
    assert.ok(performance.now() - t0 >= 295, 'the body was read until the deadline');
    assert.ok((await served!) > 1, 'bytes kept coming until the cut');

    // Retries fit in the same deadline: a second slow 503 would end past it, so it is cut.
    requests = [];
    handler = (_req, _b, res) => {
      res.writeHead(503, { 'Content-Type': 'application/json' }).flushHeaders();
      setTimeout(() => res.end(), 600);
    };
    await assert.rejects(clientWith({ timeoutMs: 1_000 }).get(CM, 'ns', 'slow'), /timed out after 1000 ms/);
    assert.equal(requests.length, 2);
  });

  it('ends a watch with an error at a line longer than maxWatchLineBytes', async () => {
    let served: Promise<number> | undefined;
    handler = (_req, _b, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'o1' } } }) + '\n');
      served = stream(res, 'y'.repeat(4 << 10));
    };
    const watch = await clientWith({ maxWatchLineBytes: 64 << 10 }).watch(CM, {});
    const names: string[] = [];
    await assert.rejects(async () => {
      for await (const ev of watch) names.push(ev.object.metadata.name!);
    }, /^Error: watch \/api\/v1\/configmaps: an event line exceeds 65536 bytes$/);
    assert.deepEqual(names, ['o1']);
    assert.ok((await served!) < 64 << 20, 'the connection was closed');
  });
});

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import fc from 'fast-check';
import { SECRET_MARKER, body, exchange, flood, garbageFor, garbageRequest, overTls, post, stall, tcp } from '../../../test/support/raw-http.ts';
import type { Cluster } from '../../core/api/types.ts';
import { createLogger } from '../../kube/index.ts';
import { generateCertificates } from '../../kube/certificates.ts';
import type { CertificatePair } from '../../kube/certificates.ts';
import { MAX_BODY_BYTES, WEBHOOK_LIMITS, WebhookServer } from './server.ts';

const LOCAL_ID = '11111111-2222-3333-4444-555555555555';

function request(port: number, ca: string, method: string, path: string, body?: string): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method, path, ca, agent: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, fingerprint: (res.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '' }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function review(operation: string, object: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'req-1', kind: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' }, operation, object },
  });
}

describe('webhook server', () => {
  let pairs: CertificatePair[];
  let server: WebhookServer;
  let port: number;
  const stop = new AbortController();
  const existing: Cluster[] = [{ metadata: { name: 'home' }, spec: { clusterID: LOCAL_ID } }];

  before(async () => {
    pairs = await Promise.all([generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] }), generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] })]);
    server = new WebhookServer({ port: 0, host: '127.0.0.1', certificates: pairs[0]!, clusters: () => existing, localClusterID: () => LOCAL_ID });
    await server.start(stop.signal);
    port = server.port!;
  });
  after(async () => {
    stop.abort();
    await server?.stopped();
  });

  it('denies a second Cluster with the local cluster ID', async () => {
    const res = await request(port, pairs[0]!.caCert, 'POST', '/validate-cluster', review('CREATE', { metadata: { name: 'other' }, spec: { clusterID: LOCAL_ID } }));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'req-1',
        allowed: false,
        status: { code: 409, message: `validating unique local cluster CR failed: a local cluster CR with name home already exists with the same clusterID ${LOCAL_ID}` },
      },
    });
  });

  it('allows a peer Cluster and an update of the local one', async () => {
    for (const [op, object] of [
      ['CREATE', { metadata: { name: 'peer' }, spec: { clusterID: 'peer-id' } }],
      ['UPDATE', { metadata: { name: 'home' }, spec: { clusterID: LOCAL_ID } }],
    ] as const) {
      const res = await request(port, pairs[0]!.caCert, 'POST', '/validate-cluster', review(op, object));
      assert.deepEqual(JSON.parse(res.body).response, { uid: 'req-1', allowed: true });
    }
  });

  it('answers 400 to malformed input, 404 elsewhere and 405 to other methods', async () => {
    const ca = pairs[0]!.caCert;
    assert.equal((await request(port, ca, 'POST', '/validate-cluster', 'not json')).status, 400);
    assert.equal((await request(port, ca, 'POST', '/validate-cluster', review('CREATE', 'x'))).status, 400);
    assert.equal((await request(port, ca, 'POST', '/other', '{}')).status, 404);
    assert.equal((await request(port, ca, 'GET', '/validate-cluster')).status, 405);
  });

  it('serves a new certificate to new connections after setCertificates', async () => {
    const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
    assert.equal((await request(port, pairs[0]!.caCert, 'GET', '/validate-cluster')).fingerprint, fingerprint(pairs[0]!.tlsCert));
    server.setCertificates(pairs[1]!);
    assert.equal((await request(port, pairs[1]!.caCert, 'GET', '/validate-cluster')).fingerprint, fingerprint(pairs[1]!.tlsCert));
    await assert.rejects(request(port, pairs[0]!.caCert, 'GET', '/validate-cluster'));
  });
});

describe('webhook server under hostile clients', () => {
  // Short enough that waiting out a slow client takes a moment.
  // The keep-alive timeout is past the headers timeout, as in production.
  const limits = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 1_500 };
  // How much later than its timeout a slow client may be cut off on a busy machine.
  const slackMs = 2_000;
  const stop = new AbortController();
  const lines: string[] = [];
  let server: WebhookServer;
  let ca: string;
  let connect: ReturnType<typeof overTls>;
  let cacheBroken = false;
  const existing: Cluster[] = [{ metadata: { name: 'home' }, spec: { clusterID: LOCAL_ID } }];

  before(async () => {
    const pair = await generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] });
    ca = pair.caCert;
    server = new WebhookServer({
      port: 0,
      host: '127.0.0.1',
      certificates: pair,
      clusters: () => {
        if (cacheBroken) throw new Error('the cache is gone');
        return existing;
      },
      localClusterID: () => LOCAL_ID,
      log: createLogger({ verbosity: 1, destination: { write: (l: string) => lines.push(l) } }),
      limits,
    });
    await server.start(stop.signal);
    connect = overTls(server.port!);
  });
  after(async () => {
    stop.abort();
    await server?.stopped();
  });

  async function stillServes(): Promise<void> {
    const res = await request(server.port!, ca, 'POST', '/validate-cluster', review('CREATE', { metadata: { name: 'peer' }, spec: { clusterID: 'peer-id' } }));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body).response, { uid: 'req-1', allowed: true });
  }

  it('answers the request that used to end the process with 400', async () => {
    assert.equal((await exchange(connect, 'POST http://[ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n')).status, 400);
    assert.equal((await exchange(connect, 'POST http://[ HTTP/1.1\r\n\r\n')).status, 400);
    await stillServes();
  });

  it('answers known garbage with a 4xx or a closed connection, and plain HTTP with a close', async () => {
    for (const path of ['/', '/validate-cluster']) {
      for (const req of garbageFor(path)) {
        const { status } = await exchange(connect, req);
        assert.ok(status === undefined || (status >= 400 && status < 500), `${JSON.stringify(req.slice(0, 80))} answered ${status}`);
      }
      await stillServes();
    }
    // Not TLS at all: the handshake fails and the server hangs up.
    assert.equal((await exchange(tcp(server.port!), 'POST /validate-cluster HTTP/1.1\r\nHost: x\r\n\r\n')).status, undefined);
    await stillServes();
  });

  it('answers bodies that are not AdmissionReviews with 400, never 5xx', async (t) => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(body(), async (payload) => {
        cases++;
        const { status } = await exchange(connect, post('/validate-cluster', payload));
        assert.ok(status === 200 || status === 400, `answered ${status}`);
      }),
      { numRuns: 200 },
    );
    await stillServes();
    t.diagnostic(`${cases} random bodies`);
  });

  it('survives random requests, never answering 5xx', async (t) => {
    let cases = 0;
    for (let batch = 0; batch < 5; batch++) {
      await fc.assert(
        fc.asyncProperty(garbageRequest(['/validate-cluster']), async (req) => {
          cases++;
          const { status } = await exchange(connect, req);
          assert.ok(status === undefined || status < 500, `answered ${status}`);
        }),
        { numRuns: 60 },
      );
      await stillServes();
    }
    t.diagnostic(`${cases} random requests`);
  });

  it('answers 413 to a body over the limit without reading it all', async (t) => {
    const size = 50 * 1024 * 1024;
    const head = (framing: string): string => `POST /validate-cluster HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
    const declared = await flood(connect, head(`Content-Length: ${size}`), size, false);
    const undeclared = await flood(connect, head('Transfer-Encoding: chunked'), size, true);
    for (const f of [declared, undeclared]) {
      t.diagnostic(`${f.sentBytes} of ${size} bytes went out before the server closed the connection`);
      assert.equal(f.status, 413);
      // What got out past the limit sits in socket buffers; the server stopped reading long before 50 MiB.
      assert.ok(f.sentBytes < MAX_BODY_BYTES + 16 * 1024 * 1024, `${f.sentBytes} bytes went out`);
    }
    await stillServes();
  });

  it('cuts off clients that stall in the handshake, the headers or the body', async () => {
    const [handshake, headers, body] = await Promise.all([
      stall(tcp(server.port!), limits.headersTimeoutMs + slackMs),
      stall(connect, limits.headersTimeoutMs + slackMs, 'POST /validate-cluster HTTP/1.1\r\n', { text: 'X-Slow: abcdefgh', everyMs: 20 }),
      stall(connect, limits.requestTimeoutMs + slackMs, 'POST /validate-cluster HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{', { text: 'x', everyMs: 20 }),
    ]);
    assert.equal(headers.status, 408);
    assert.equal(body.status, 408);
    for (const [s, limit] of [
      [handshake, limits.headersTimeoutMs],
      [headers, limits.headersTimeoutMs],
      [body, limits.requestTimeoutMs],
    ] as const) {
      assert.ok(s.closedAfterMs >= limit * 0.9, `closed after ${s.closedAfterMs} ms`);
    }
    await stillServes();
  });

  it('keeps a new connection that sends nothing as an idle one: served when it speaks past the headers timeout, closed without an answer after the keep-alive timeout', async () => {
    // Node sweeps its connections every quarter of the headers timeout: twice the timeout is past a sweep.
    const quietMs = limits.headersTimeoutMs * 2;
    const [late, silent] = await Promise.all([
      exchange(connect, post('/validate-cluster', review('CREATE', { metadata: { name: 'late' }, spec: { clusterID: 'late-id' } })), 10_000, quietMs),
      stall(connect, limits.keepAliveTimeoutMs + slackMs),
    ]);
    assert.equal(late.status, 200, late.head);
    assert.deepEqual([silent.status, silent.head], [undefined, '']);
    assert.ok(silent.closedAfterMs >= limits.keepAliveTimeoutMs * 0.9, `closed after ${silent.closedAfterMs} ms`);
    await stillServes();
  });

  it('closes a connection that has sent nothing but line breaks at the keep-alive deadline, however often it sends them', async () => {
    // Line breaks only once Node has surely swept the silent connection (it sweeps every quarter of the headers timeout).
    const crlf = await stall(connect, limits.keepAliveTimeoutMs + slackMs, '', { text: '\r\n', everyMs: 50, afterMs: limits.headersTimeoutMs * 3 });
    assert.deepEqual([crlf.status, crlf.head], [undefined, '']);
    assert.ok(crlf.closedAfterMs >= limits.keepAliveTimeoutMs * 0.9, `closed after ${crlf.closedAfterMs} ms`);
    await stillServes();
  });

  it('holds at most a quarter of its connections unused: past that, the oldest goes', async () => {
    const cap = WEBHOOK_LIMITS.maxConnections / 4;
    const silent = await Promise.all(Array.from({ length: cap + 3 }, () => stall(connect, limits.keepAliveTimeoutMs + slackMs)));
    const early = silent.filter((s) => s.closedAfterMs < limits.keepAliveTimeoutMs * 0.9);
    assert.equal(early.length, 3, silent.map((s) => Math.round(s.closedAfterMs)).join(' '));
    await stillServes();
  });

  it('answers 500 when deciding fails on our side', async () => {
    cacheBroken = true;
    try {
      const res = await request(server.port!, ca, 'POST', '/validate-cluster', review('CREATE', { metadata: { name: 'other' }, spec: { clusterID: LOCAL_ID } }));
      assert.deepEqual([res.status, res.body], [500, 'internal error\n']);
    } finally {
      cacheBroken = false;
    }
    await stillServes();
  });

  it('never logs request headers or bodies, and logs client garbage below warn', () => {
    const levels = lines.map((l) => (JSON.parse(l) as { level: string }).level);
    assert.ok(lines.length > 0);
    for (const line of lines) assert.ok(!line.includes(SECRET_MARKER), `a log line holds request content: ${line.slice(0, 200)}`);
    // The one error is the broken cache above; everything a client sent is at debug or info.
    assert.deepEqual(
      levels.filter((l) => l !== 'debug' && l !== 'info'),
      ['error'],
    );
  });

  it('answers 400, not 500, to a Cluster whose name or clusterID is not a string', async () => {
    for (const object of [{ metadata: { name: { toString: 1 } }, spec: { clusterID: 'peer-id' } }, { metadata: { name: 'n' }, spec: { clusterID: 7 } }]) {
      const res = await request(server.port!, ca, 'POST', '/validate-cluster', review('CREATE', object));
      assert.equal(res.status, 400);
    }
  });
});

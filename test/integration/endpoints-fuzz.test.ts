// The controller process against hostile clients: garbage, random requests, oversized bodies and
// stalling clients on its metrics, health and webhook ports, with the limits it ships with. It must
// stay up, keep serving all three, keep request contents out of its log, and its webhook speaks
// nothing but TLS 1.2 or later.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { SECRETS } from '../../src/core/api/resources.ts';
import { WELL_KNOWN } from '../../src/core/api/keys.ts';
import { DEFAULT_SERVER_LIMITS } from '../../src/kube/http-server.ts';
import type { RestClient } from '../../src/kube/index.ts';
import { pairFromSecret } from '../../src/registry/webhook/certificate-store.ts';
import type { TlsSecret } from '../../src/registry/webhook/certificate-store.ts';
import { secretNameFor } from '../../src/registry/webhook/index.ts';
import { MAX_BODY_BYTES } from '../../src/registry/webhook/server.ts';
import type { Component, Sandbox } from '../../src/sandbox/index.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup, WEBHOOK_CONFIGURATION } from '../../src/testbed/group.ts';
import { alive } from '../support/process.ts';
import { SECRET_MARKER, body, exchange, flood, garbageFor, garbageRequest, overTls, post, stall, tcp, type Connect } from '../support/raw-http.ts';
import { admitDirectly } from '../support/registry.ts';
import { stopChecked } from '../support/security-checks.ts';

interface Endpoint {
  readonly name: string;
  readonly connect: Connect;
  readonly paths: readonly string[];
}

describe('controller endpoints under hostile clients (1 cluster)', () => {
  let sandbox: Sandbox | undefined;
  let controller: Component;
  let endpoints: Endpoint[];
  let metricsPort: number;
  let healthPort: number;
  let webhookPort: number;
  let rest: RestClient | undefined;

  before(async () => {
    // Debug lines too, so the log check below sees everything the servers say about requests.
    sandbox = await startGroup({ clusters: 1, controllerArgs: () => ['--log-verbosity=1'] });
    const cluster = sandbox.cluster('cluster1');
    controller = cluster.extras[0] ?? assert.fail('no controller in cluster1');
    const portOf = (flag: string): number => {
      const arg = controller.process.spec.args.find((a) => a.startsWith(`--${flag}=`)) ?? assert.fail(`no --${flag}`);
      return Number(arg.slice(arg.lastIndexOf(arg.includes(':') ? ':' : '=') + 1));
    };
    [metricsPort, healthPort, webhookPort] = [portOf('metrics-addr'), portOf('health-addr'), portOf('cluster-validator-webhook-port')];
    endpoints = [
      { name: 'metrics', connect: tcp(metricsPort), paths: ['/metrics'] },
      { name: 'health', connect: tcp(healthPort), paths: ['/healthz', '/readyz'] },
      { name: 'webhook', connect: overTls(webhookPort), paths: [WELL_KNOWN.webhookPath] },
    ];
    rest = await adminClient(cluster);
  });

  /** The CA of the certificate the webhook serves now: the leader may renew the one it started with once it leads. */
  async function webhookCA(): Promise<string> {
    const pair = pairFromSecret(await rest!.get<TlsSecret>(SECRETS, SANDBOX_NAMESPACE, secretNameFor(WEBHOOK_CONFIGURATION)));
    return pair?.caCert ?? assert.fail('the webhook Secret holds no certificate');
  }
  after(async () => {
    rest?.close();
    // With the checks every group gets: what the controllers sent and logged, what the readers may do.
    if (sandbox) await stopChecked(sandbox);
  });

  async function stillServes(): Promise<void> {
    assert.ok(controller.process.running && alive(controller.pid ?? -1), 'the controller process is gone');
    const ready = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
    assert.deepEqual([ready.status, await ready.text()], [200, 'ok']);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(metrics.status, 200);
    assert.ok(/^# TYPE controller_runtime_webhook_requests_total counter$/m.test(await metrics.text()), '/metrics lacks the webhook metrics');
    const admitted = await admitDirectly(webhookPort, await webhookCA(), 'fuzz-check');
    assert.equal(admitted.status, 200);
    assert.deepEqual(JSON.parse(admitted.body).response, { uid: 'fuzz-check', allowed: true });
  }

  it('answers POST http://[ HTTP/1.1 on every port with 400', async () => {
    for (const e of endpoints) {
      const { status } = await exchange(e.connect, 'POST http://[ HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n');
      assert.equal(status, 400, e.name);
    }
    await stillServes();
  });

  it('serves the webhook over TLS 1.2 or later only: plaintext gets no HTTP answer, TLS 1.1 is refused by the server', async () => {
    const plain = await exchange(tcp(webhookPort), post(WELL_KNOWN.webhookPath, '{}'));
    assert.equal(plain.status, undefined, `the webhook answered plaintext HTTP: ${plain.head}`);
    // The client offers TLS 1.1 at the lowest security level: a refusal can only be the server's (its protocol-version alert).
    const old = tls.connect({ host: '127.0.0.1', port: webhookPort, rejectUnauthorized: false, minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });
    const outcome = await new Promise<string>((resolve) => {
      old.once('secureConnect', () => resolve('connected'));
      old.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    old.destroy();
    assert.equal(outcome, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    await stillServes();
  });

  it('answers known garbage with a 4xx or a closed connection', async () => {
    for (const e of endpoints) {
      for (const path of ['/', ...e.paths]) {
        for (const request of garbageFor(path)) {
          const { status } = await exchange(e.connect, request);
          // An Upgrade header on a probe path is still a plain GET: it may be served.
          const ok = status === undefined || (status >= 400 && status < 500) || (status < 300 && path !== '/' && e.name !== 'webhook');
          assert.ok(ok, `${e.name}: ${JSON.stringify(request.slice(0, 80))} answered ${status}`);
        }
      }
    }
    await stillServes();
  });

  it('survives random requests and bodies, never answering 5xx', async (t) => {
    let cases = 0;
    for (const e of endpoints) {
      await fc.assert(
        fc.asyncProperty(garbageRequest(e.paths), async (request) => {
          cases++;
          const { status } = await exchange(e.connect, request);
          assert.ok(status === undefined || status < 500, `${e.name} answered ${status}`);
        }),
        { numRuns: 100 },
      );
      await stillServes();
    }
    await fc.assert(
      fc.asyncProperty(body(), async (payload) => {
        cases++;
        const { status } = await exchange(overTls(webhookPort), post(WELL_KNOWN.webhookPath, payload));
        assert.ok(status === 200 || status === 400, `webhook answered ${status}`);
      }),
      { numRuns: 100 },
    );
    await stillServes();
    t.diagnostic(`${cases} random requests`);
  });

  it('answers 413 to a 50 MiB review without reading it', async () => {
    const size = 50 * 1024 * 1024;
    const f = await flood(overTls(webhookPort), `POST ${WELL_KNOWN.webhookPath} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, size, true);
    assert.equal(f.status, 413);
    assert.ok(f.sentBytes < MAX_BODY_BYTES + 16 * 1024 * 1024, `${f.sentBytes} bytes went out`);
    await stillServes();
  });

  it('cuts off clients that stall, on every port, within the shipped header timeout', async () => {
    // The timeout, one sweep of Node's connection check, and room for a busy machine.
    const bound = DEFAULT_SERVER_LIMITS.headersTimeoutMs + 1_000 + 5_000;
    const stalls = await Promise.all([
      ...endpoints.map((e) => stall(e.connect, bound, `GET ${e.paths[0] ?? '/'} HTTP/1.1\r\n`, { text: 'X-Slow: abcdefgh', everyMs: 500 })),
      // Not even a TLS handshake.
      stall(tcp(webhookPort), bound),
    ]);
    for (const s of stalls) assert.ok(s.closedAfterMs >= DEFAULT_SERVER_LIMITS.headersTimeoutMs * 0.9, `closed after ${s.closedAfterMs} ms`);
    await stillServes();
  });

  it('kept request contents out of its log and never crashed', () => {
    const log = readFileSync(join(sandbox?.dir ?? assert.fail('no sandbox'), 'logs', 'cluster1-controller.log'), 'utf8');
    // The controller logs at debug here, so the rejections are in the log: without their requests' contents.
    assert.match(log, /"msg":"request rejected"/);
    assert.ok(!log.includes(SECRET_MARKER), 'a log line holds request content');
    assert.doesNotMatch(log, /uncaught|unhandled/i);
    assert.ok(alive(controller.pid ?? -1));
  });
});

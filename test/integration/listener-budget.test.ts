// The controller process against slow senders of large webhook requests: a hundred requests of
// just under the body cap each, sent fast and then held open without their end. What the process
// holds stays within its webhook listener's budget (measured as its resident memory), the requests
// beyond the budget are refused and counted, and an admission request is answered while they hold
// on and after they are gone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it, type TestContext } from 'node:test';
import { CLUSTERS, SECRETS } from '../../src/core/api/resources.ts';
import { WELL_KNOWN } from '../../src/core/api/keys.ts';
import type { RestClient } from '../../src/kube/index.ts';
import { pairFromSecret, type TlsSecret } from '../../src/registry/webhook/certificate-store.ts';
import { secretNameFor } from '../../src/registry/webhook/index.ts';
import { WEBHOOK_LIMITS } from '../../src/registry/webhook/server.ts';
import type { Component, Sandbox } from '../../src/sandbox/index.ts';
import { adminClient, SANDBOX_NAMESPACE, startGroup, WEBHOOK_CONFIGURATION } from '../../src/testbed/group.ts';
import { alive } from '../support/process.ts';
import { holdOpen, overTls, type Held } from '../support/raw-http.ts';
import { admitDirectly, controllerLog, controllerMetric, peerCluster, webhookEnforced } from '../support/registry.ts';
import { stopChecked } from '../support/security-checks.ts';

const MiB = 1024 * 1024;
const ATTACKERS = 100;
/** Just under the per-request cap, so the cap alone refuses none of them. */
const BODY_BYTES = WEBHOOK_LIMITS.maxBodyBytes - 64 * 1024;
/**
 * What the process may grow by while they hold on: every body byte the listener may hold (each
 * connection's own allowance and the shared budget), what an open TLS connection costs (about
 * 60 KiB measured, counted twice), the dead buffers V8 lets pile up before it collects them (its
 * external memory soft limit, 64 MiB), and 16 MiB of heap. Before the budget, the same requests
 * grew it by 414 MiB.
 */
const ALLOWED_GROWTH = WEBHOOK_LIMITS.maxBufferedBytes + WEBHOOK_LIMITS.maxConnections * (WEBHOOK_LIMITS.ownBodyBytes + 128 * 1024) + 64 * MiB + 16 * MiB;

/** The resident memory of a process, from /proc. */
function rss(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib ?? assert.fail(`no VmRSS for ${pid}`)) * 1024;
}

const mib = (bytes: number): string => (bytes / MiB).toFixed(1);

describe('controller webhook under slow, large, held-open requests (1 cluster)', () => {
  let sandbox: Sandbox | undefined;
  let controller: Component;
  let rest: RestClient | undefined;
  let webhookPort: number;
  let ca: string;
  const held: Held[] = [];

  before(async () => {
    sandbox = await startGroup({ clusters: 1 });
    const cluster = sandbox.cluster('cluster1');
    controller = cluster.extras[0] ?? assert.fail('no controller in cluster1');
    const arg = controller.process.spec.args.find((a) => a.startsWith('--cluster-validator-webhook-port=')) ?? assert.fail('no webhook port');
    webhookPort = Number(arg.split('=')[1]);
    rest = await adminClient(cluster);
    const pair = pairFromSecret(await rest.get<TlsSecret>(SECRETS, SANDBOX_NAMESPACE, secretNameFor(WEBHOOK_CONFIGURATION)));
    ca = pair?.caCert ?? assert.fail('the webhook Secret holds no certificate');
  });
  after(async () => {
    for (const h of held) h.drop();
    rest?.close();
    if (sandbox) await stopChecked(sandbox);
  });

  /** An admission request straight to the listener, and one the API server makes for a dry-run create. */
  async function answered(uid: string): Promise<void> {
    const direct = await admitDirectly(webhookPort, ca, uid);
    assert.equal(direct.status, 200, direct.body);
    assert.deepEqual(JSON.parse(direct.body).response, { uid, allowed: true });
    await rest!.create(CLUSTERS, undefined, peerCluster(`dry-${uid}`, { clusterID: `0f0e0d0c-0000-4000-8000-${uid.padStart(12, '0')}` }), { dryRun: true });
  }

  /** RSS samples of the controller every 50 ms until stopped; `peak` is the largest. */
  function sampling(pid: number): { readonly peak: number; stop: () => void } {
    let peak = rss(pid);
    const timer = setInterval(() => (peak = Math.max(peak, rss(pid))), 50);
    return {
      get peak() {
        return peak;
      },
      stop: () => clearInterval(timer),
    };
  }

  /**
   * A hundred requests of just under the body cap, half with a declared length, half chunked, held
   * open once sent. Admission goes on beside them; then the server cuts them off at its timeouts,
   * or we drop them. Resolves with how the server answered them.
   */
  async function attack(round: string, end: 'server' | 'client', t: TestContext): Promise<Map<string, number>> {
    const head = (framing: string): string => `POST ${WELL_KNOWN.webhookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
    const round_ = Array.from({ length: ATTACKERS }, (_, i) =>
      i % 2 === 0 ? holdOpen(overTls(webhookPort), head(`Content-Length: ${WEBHOOK_LIMITS.maxBodyBytes - 1}`), BODY_BYTES, false) : holdOpen(overTls(webhookPort), head('Transfer-Encoding: chunked'), BODY_BYTES, true),
    );
    held.push(...round_);
    let closed = 0;
    for (const h of round_) void h.closed.then(() => closed++);
    await Promise.all(round_.map((h) => h.sent));
    assert.ok(closed < ATTACKERS, 'some requests are held open');
    t.diagnostic(`${round}: ${ATTACKERS - closed} of ${ATTACKERS} requests held open once all was sent`);
    await answered(`${round}1`);
    if (end === 'client') for (const h of round_) h.drop();
    const statuses = new Map<string, number>();
    for (const a of await Promise.all(round_.map((h) => h.closed))) statuses.set(String(a.status), (statuses.get(String(a.status)) ?? 0) + 1);
    t.diagnostic(`${round}: answers ${JSON.stringify(Object.fromEntries(statuses))}`);
    await answered(`${round}2`);
    return statuses;
  }

  it('holds no more than its budget, gives it back, refuses and counts what is beyond it, and answers admission requests meanwhile and after', async (t) => {
    const pid = controller.pid ?? assert.fail('no controller pid');
    await webhookEnforced(rest!);
    for (let i = 0; i < 5; i++) await answered(`${i + 1}`);
    const baseline = rss(pid);
    const first = sampling(pid);
    let statuses: Map<string, number>;
    try {
      statuses = await attack('1', 'server', t);
    } finally {
      first.stop();
    }
    // The server ended every one of them: refused at once, or cut off at its request or idle
    // timeout (with a 408, or without an answer when the idle timeout came first).
    assert.ok((statuses.get('503') ?? 0) > 0, 'requests beyond the budget are refused with 503');
    assert.equal((statuses.get('503') ?? 0) + (statuses.get('408') ?? 0) + (statuses.get('undefined') ?? 0), ATTACKERS, 'nothing else');
    const refused = await controllerMetric(sandbox!, 'cluster1', 'cluster_registry_http_refusals_total', { listener: 'webhook' });
    assert.ok(refused >= (statuses.get('503') ?? 0), `${refused} refusals counted`);
    const afterFirst = rss(pid);
    // Again: what the first round held was given back, so the second finds its budget whole and
    // the memory it needs already there.
    const second = sampling(pid);
    try {
      await attack('2', 'client', t);
    } finally {
      second.stop();
    }
    const settled = rss(pid);
    t.diagnostic(`RSS: ${mib(baseline)} MiB before, ${mib(first.peak)} at most in the first round, ${mib(afterFirst)} after it, ${mib(second.peak)} at most in the second, ${mib(settled)} after; growth allowed ${mib(ALLOWED_GROWTH)} MiB`);
    for (const [what, bytes] of [['in the first round', first.peak], ['in the second round', second.peak], ['after both', settled]] as const) {
      assert.ok(bytes - baseline <= ALLOWED_GROWTH, `RSS grew by ${mib(bytes - baseline)} MiB ${what}, past the ${mib(ALLOWED_GROWTH)} MiB the budget allows`);
    }
    // A flood of refusals is said in the log at a bounded rate, not once per refusal.
    const lines = controllerLog(sandbox!, 'cluster1').split('\n').filter((l) => l.includes('"msg":"listener over budget"'));
    assert.ok(lines.length >= 1 && lines.length <= 3, `${lines.length} log lines about refusals`);
    assert.ok(alive(pid));
  });
});

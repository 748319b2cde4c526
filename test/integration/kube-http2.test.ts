// The REST client's HTTP/2 connection against real API servers: one started with --goaway-chance
// (it sends GOAWAY on purpose) and a small stream limit per connection, and one behind a TCP proxy
// that cuts or silences the connection under many streams. Through all of it informers keep their
// guarantee: each cache ends equal to a fresh LIST.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClusterConfig } from '../../src/kube/config.ts';
import { isAlreadyExists, isNotFound } from '../../src/kube/errors.ts';
import { Informer } from '../../src/kube/informer.ts';
import { ResponseTooLargeError, RestClient, type RestClientOptions } from '../../src/kube/rest.ts';
import type { ResourceRef } from '../../src/kube/types.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { assertCacheMatchesServer } from '../support/kube-helpers.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const CM: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const NS: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };
/** The stream limit the API servers here advertise: a controller's watches need several connections. */
const STREAMS_PER_CONNECTION = 4;

describe('kube HTTP/2', () => {
  let sandbox: Sandbox;
  let rest: RestClient;
  const stops: (() => void | Promise<void>)[] = [];

  before(async () => {
    sandbox = await startSandbox({
      clusters: 1,
      controllerManager: false,
      // 0.02 is the most the API server accepts: one call in fifty ends its connection.
      apiserverArgs: ['--goaway-chance=0.02', `--http2-max-streams-per-connection=${STREAMS_PER_CONNECTION}`],
    });
    rest = await client();
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop();
    rest?.close();
    await sandbox?.stop();
  });

  async function client(opts: RestClientOptions = {}, server?: string): Promise<RestClient> {
    const cluster = sandbox.clusters[0]!;
    const kubeconfig = server ? cluster.kubeconfig.replace(cluster.server, server) : cluster.kubeconfig;
    const c = await RestClient.fromConfig(ClusterConfig.fromString(kubeconfig), { timeoutMs: 15_000, retryBaseMs: 50, ...opts });
    stops.push(() => c.close());
    return c;
  }

  async function namespaces(prefix: string, n: number): Promise<string[]> {
    const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
    for (const name of names) await rest.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return names;
  }

  /** An informer of ConfigMaps per namespace through `client`, each synced. */
  async function syncedInformers(client: RestClient, nss: readonly string[]): Promise<Informer[]> {
    const informers = nss.map((namespace) => {
      const ac = new AbortController();
      const inf = new Informer({ rest: client, resource: CM, namespace, backoff: { initialMs: 100, maxMs: 1_000 } });
      const running = inf.start(ac.signal);
      stops.push(async () => {
        ac.abort();
        await running;
      });
      return inf;
    });
    for (const inf of informers) assert.equal(await inf.waitForSync(AbortSignal.timeout(30_000)), true);
    return informers;
  }

  /** Each informer's cache equals a fresh LIST of its namespace. */
  async function assertCachesMatch(informers: readonly Informer[], nss: readonly string[], client: RestClient): Promise<void> {
    for (const [i, inf] of informers.entries()) await assertCacheMatchesServer(inf, client, CM, nss[i]!);
  }

  /** A TCP proxy in front of the API server, and a client through it. */
  async function proxied(opts: RestClientOptions = {}): Promise<{ proxy: TcpProxy; client: RestClient }> {
    const target = new URL(sandbox.clusters[0]!.server);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    stops.push(() => proxy.stop());
    return { proxy, client: await client(opts, `https://127.0.0.1:${proxy.port}`) };
  }

  /** Creates, merge-patches and deletes in each namespace, the namespaces at once; every write is a POST, PATCH or DELETE. */
  async function writes(client: RestClient, nss: readonly string[], perNamespace: number): Promise<void> {
    await Promise.all(
      nss.map(async (ns) => {
        for (let i = 0; i < perNamespace; i++) {
          const name = `cm-${i % 10}`;
          try {
            if (i % 3 === 0) await client.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i) } });
            else if (i % 3 === 1) await client.patch(CM, ns, name, 'merge', { data: { i: String(i) } });
            else await client.delete(CM, ns, name);
          } catch (err) {
            if (!isAlreadyExists(err) && !isNotFound(err)) throw err;
          }
        }
      }),
    );
  }

  it('serves watches and writes across GOAWAYs and stream limits, each cache equal to a LIST', async () => {
    const c = await client();
    const nss = await namespaces('goaway', 10);
    const informers = await syncedInformers(c, nss);
    await writes(c, nss, 90);
    await assertCachesMatch(informers, nss, c);
    const stats = c.connectionStats();
    assert.equal(stats.protocol, 'h2');
    // About one call in fifty: 900 writes and the lists give some tens.
    assert.ok(stats.goaways > 0, `GOAWAYs seen: ${stats.goaways}`);
    // Ten watches need three connections at four streams each; calls and connections draining after a GOAWAY add a few.
    assert.ok(stats.open >= Math.ceil(nss.length / STREAMS_PER_CONNECTION), `open connections: ${stats.open}`);
    assert.ok(stats.open <= Math.ceil(nss.length / STREAMS_PER_CONNECTION) + 4, `open connections: ${stats.open}`);
  });

  it('a list far larger than the flow-control windows arrives whole; one over the cap fails alone and the connection serves on', async () => {
    const [ns] = await namespaces('large', 1);
    const value = 'x'.repeat(200_000);
    for (let i = 0; i < 100; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) => rest.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i + j}` }, data: { value } })));
    }
    const c = await client();
    const list = await c.list(CM, { namespace: ns });
    assert.equal(list.items.length, 100);
    assert.ok(list.items.every((o) => (o as unknown as { data: { value: string } }).data.value === value));
    const capped = c.withOptions({ maxResponseBytes: 4 << 20, maxRetries: 0 });
    stops.push(() => capped.close());
    const before = c.connectionStats();
    await assert.rejects(capped.list(CM, { namespace: ns }), ResponseTooLargeError);
    await c.get(NS, undefined, ns!);
    // Only a GOAWAY meanwhile may have made another connection needed; a cap never does.
    const after = c.connectionStats();
    assert.ok(after.opened - before.opened <= after.goaways - before.goaways, JSON.stringify({ before, after }));
  });

  it('a connection cut under many streams: every informer comes back over a new connection and catches up with writes made meanwhile', async () => {
    const { proxy, client: c } = await proxied();
    const nss = await namespaces('cut', 12);
    const informers = await syncedInformers(c, nss);
    const opened = c.connectionStats().opened;
    proxy.block();
    // Written directly while the proxied client is cut off.
    await writes(rest, nss, 30);
    proxy.unblock();
    await assertCachesMatch(informers, nss, rest);
    assert.ok(c.connectionStats().opened > opened);
  });

  it('a connection that goes silent is found by its PING check and replaced; no watch hangs on it', async () => {
    const { proxy, client: c } = await proxied({ pingIntervalMs: 500 });
    const nss = await namespaces('silent', 6);
    const informers = await syncedInformers(c, nss);
    proxy.stall();
    // Without unblocking: only the PING check can find that the connections are dead.
    await eventually('the silent connections to be closed', () => c.connectionStats().open === 0, 10_000);
    await writes(rest, nss, 30);
    proxy.unblock();
    await assertCachesMatch(informers, nss, rest);
  });
});

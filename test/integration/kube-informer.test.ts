// Informers against a real apiserver: after storms of writes, including storms that span an
// apiserver restart, a SIGSTOP longer than the inactivity timeout, and an etcd compaction while
// the informer is cut off, the cache equals a fresh LIST and the handlers saw the same history.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterConfig } from '../../src/kube/config.ts';
import { isAlreadyExists, isNotFound } from '../../src/kube/errors.ts';
import { Informer } from '../../src/kube/informer.ts';
import type { InformerOptions } from '../../src/kube/informer.ts';
import { createLogger } from '../../src/kube/log.ts';
import { registry } from '../../src/kube/metrics.ts';
import { RestClient } from '../../src/kube/rest.ts';
import type { KubeObject, ResourceRef } from '../../src/kube/types.ts';
import { objectKey } from '../../src/kube/types.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { assertCacheMatchesServer, compactEtcd } from '../support/kube-helpers.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const CM: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const NS: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };

/** What the handlers were told, applied to a map: must end equal to the cache. */
function mirror(informer: Informer): { state: Map<string, string>; tombstones: string[] } {
  const state = new Map<string, string>();
  const tombstones: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => void state.set(objectKey(o), o.metadata.resourceVersion!),
    onUpdate: (_old, o) => void state.set(objectKey(o), o.metadata.resourceVersion!),
    onDelete: (o, unknown) => {
      state.delete(objectKey(o));
      if (unknown) tombstones.push(objectKey(o));
    },
  });
  return { state, tombstones };
}

/**
 * `ops` successful random creates, updates and deletes of ConfigMaps from `writers` concurrent
 * writers. Failed calls (apiserver down) are retried after a pause, so a storm can span outages.
 */
async function storm(rest: RestClient, namespace: string, ops: number, writers = 4, progress: { done: number } = { done: 0 }): Promise<void> {
  let done = 0;
  const names = Array.from({ length: 40 }, (_, i) => `cm-${i}`);
  const pick = (): string => names[Math.floor(Math.random() * names.length)]!;
  const one = async (): Promise<void> => {
    const name = pick();
    const r = Math.random();
    try {
      if (r < 0.4) await rest.create(CM, namespace, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '0' } });
      else if (r < 0.8) await rest.patch(CM, namespace, name, 'merge', { data: { v: String(Math.random()) } });
      else await rest.delete(CM, namespace, name);
    } catch (err) {
      if (!isAlreadyExists(err) && !isNotFound(err)) throw err;
    }
  };
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (done < ops) {
        try {
          await one();
          progress.done = ++done;
        } catch {
          await sleep(200);
        }
      }
    }),
  );
}

describe('kube informer', () => {
  let sandbox: Sandbox;
  let rest: RestClient;
  const stops: (() => void | Promise<void>)[] = [];

  before(async () => {
    sandbox = await startSandbox({ clusters: 1, controllerManager: false });
    rest = await RestClient.fromConfig(ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig), { timeoutMs: 10_000 });
  });
  after(async () => {
    for (const stop of stops.reverse()) await stop();
    rest?.close();
    await sandbox?.stop();
  });

  async function namespace(name: string): Promise<string> {
    await rest.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  }

  function informer(namespace: string, opts: Partial<InformerOptions> = {}, client = rest): Informer {
    const ac = new AbortController();
    const inf = new Informer({ rest: client, resource: CM, namespace, backoff: { initialMs: 200, maxMs: 2_000 }, ...opts });
    const running = inf.start(ac.signal);
    stops.push(async () => {
      ac.abort();
      await running;
    });
    return inf;
  }

  it('equals a fresh LIST after a storm of creates, updates and deletes', async () => {
    const ns = await namespace('storm-plain');
    await storm(rest, ns, 100);
    const inf = informer(ns);
    const seen = mirror(inf);
    assert.equal(await inf.waitForSync(AbortSignal.timeout(30_000)), true);
    await storm(rest, ns, 600);
    await assertCacheMatchesServer(inf, rest, CM, ns);
    assert.deepEqual(seen.state, new Map(inf.store.list().map((o) => [objectKey(o), o.metadata.resourceVersion!])));
  });

  it('stays exact through a storm that spans an apiserver restart', async () => {
    const ns = await namespace('storm-restart');
    const inf = informer(ns);
    const seen = mirror(inf);
    await inf.waitForSync(AbortSignal.timeout(30_000));
    const progress = { done: 0 };
    const writes = storm(rest, ns, 500, 3, progress);
    // The restart lands in the middle of the storm, not before it started.
    await eventually('the storm to be under way', () => progress.done >= 50, 30_000);
    await sandbox.clusters[0]!.apiserver.restart();
    await writes;
    await assertCacheMatchesServer(inf, rest, CM, ns);
    assert.deepEqual(seen.state, new Map(inf.store.list().map((o) => [objectKey(o), o.metadata.resourceVersion!])));
  });

  it('detects a silent watch during a SIGSTOP longer than the inactivity timeout and catches up', async () => {
    const ns = await namespace('storm-sigstop');
    const lines: string[] = [];
    const inf = informer(ns, { inactivityTimeoutMs: 1_500, logger: createLogger({ verbosity: 1, destination: { write: (l: string) => lines.push(l) } }) });
    const seen = mirror(inf);
    await inf.waitForSync(AbortSignal.timeout(30_000));
    await storm(rest, ns, 200);
    const apiserver = sandbox.clusters[0]!.apiserver;
    apiserver.pause();
    try {
      await eventually('the inactivity timer to fire while the apiserver is stopped', () => lines.some((l) => l.includes('WatchInactivityError')), 30_000);
    } finally {
      apiserver.resume();
    }
    await storm(rest, ns, 200);
    await assertCacheMatchesServer(inf, rest, CM, ns);
    assert.deepEqual(seen.state, new Map(inf.store.list().map((o) => [objectKey(o), o.metadata.resourceVersion!])));
  });

  it('relists on 410 after etcd compaction while it was cut off, with tombstone deletes', async () => {
    const ns = await namespace('gone');
    const cluster = sandbox.clusters[0]!;
    const target = new URL(cluster.server);
    const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port) });
    stops.push(() => proxy.stop());
    const proxied = await RestClient.fromConfig(ClusterConfig.fromString(cluster.kubeconfig.replace(cluster.server, `https://127.0.0.1:${proxy.port}`)));
    stops.push(() => proxied.close());
    for (let i = 0; i < 20; i++) await rest.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `keep-${i}` } });
    const inf = informer(ns, {}, proxied);
    const seen = mirror(inf);
    await inf.waitForSync(AbortSignal.timeout(30_000));
    await eventually('20 objects cached', () => inf.store.size === 20);
    const relistsBefore = await metricValue('informer_relists_total');

    proxy.block();
    const deleted = Array.from({ length: 8 }, (_, i) => `${ns}/keep-${i}`);
    for (const key of deleted) await rest.delete(CM, ns, key.split('/')[1]!);
    for (let i = 0; i < 5; i++) await rest.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `new-${i}` } });
    await rest.patch(CM, ns, 'keep-10', 'merge', { data: { changed: 'yes' } });
    await compactEtcd(sandbox.etcd.clientURL);
    // The apiserver's watch cache would still serve the old resourceVersion from memory; a
    // restart drops it, so the next watch meets the compacted etcd history and gets 410.
    await cluster.apiserver.restart();
    proxy.unblock();

    await assertCacheMatchesServer(inf, rest, CM, ns);
    assert.deepEqual([...seen.tombstones].sort(), [...deleted].sort());
    assert.ok((await metricValue('informer_relists_total')) > relistsBefore, 'a relist was counted');
    assert.equal(inf.store.get(`${ns}/keep-10`)?.data && (inf.store.get(`${ns}/keep-10`) as KubeObject & { data: Record<string, string> }).data.changed, 'yes');
  });
});

async function metricValue(name: string): Promise<number> {
  const m = await registry.getSingleMetric(name)?.get();
  return (m?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

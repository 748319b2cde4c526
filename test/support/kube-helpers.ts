// Shared by the src/kube integration tests: polling, cache-versus-server comparison and etcd
// compaction through etcd's JSON gateway.
import assert from 'node:assert/strict';
import type { Informer } from '../../src/kube/informer.ts';
import type { RestClient } from '../../src/kube/rest.ts';
import type { ResourceRef } from '../../src/kube/types.ts';
import { objectKey } from '../../src/kube/types.ts';
import { eventually } from './eventually.ts';

/** key -> resourceVersion of what the server has now. */
export async function serverState(rest: RestClient, ref: ResourceRef, namespace: string): Promise<Map<string, string>> {
  const list = await rest.listAll(ref, { namespace });
  return new Map(list.items.map((o) => [objectKey(o), o.metadata.resourceVersion ?? '']));
}

export function cacheState(informer: Informer): Map<string, string> {
  return new Map(informer.store.list().map((o) => [objectKey(o), o.metadata.resourceVersion ?? '']));
}

/** Waits until the cache holds exactly what a fresh LIST returns (same keys, same resourceVersions). */
export async function assertCacheMatchesServer(informer: Informer, rest: RestClient, ref: ResourceRef, namespace: string, timeoutMs = 60_000): Promise<void> {
  let last = '';
  await eventually(
    'the cache to equal a fresh LIST',
    async () => {
      const [server, cache] = [await serverState(rest, ref, namespace), cacheState(informer)];
      last = `server ${server.size} objects, cache ${cache.size}`;
      return server.size === cache.size && [...server].every(([k, rv]) => cache.get(k) === rv);
    },
    timeoutMs,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)} (${last})`);
  });
}

/** A call to etcd's JSON gateway; `tolerate` names an error reply that counts as done. */
async function etcdCall(clientURL: string, path: string, body: object, tolerate?: RegExp): Promise<Record<string, unknown>> {
  const res = await fetch(new URL(path, clientURL), { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  const reply = (await res.json()) as Record<string, unknown>;
  const message = typeof reply['message'] === 'string' ? reply['message'] : '';
  if (res.status !== 200 && tolerate?.test(message) === true) return reply;
  assert.equal(res.status, 200, `etcd ${path}: ${res.status} ${message}`);
  return reply;
}

/**
 * Compacts etcd's history up to its current revision; returns that revision. With `racing`, an
 * API server's own compactor that got there first counts as done: the history is gone all the same.
 */
export async function compactEtcd(clientURL: string, opts: { racing?: boolean } = {}): Promise<number> {
  const range = await etcdCall(clientURL, '/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
  const revision = Number((range.header as { revision: string }).revision);
  await etcdCall(clientURL, '/v3/kv/compaction', { revision, physical: true }, opts.racing ? /compacted/ : undefined);
  return revision;
}

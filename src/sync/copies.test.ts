import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LABELS } from '../core/api/index.ts';
import type { KubeObject } from '../core/api/types.ts';
import { InformerFactory, silentLogger, type ApiResource } from '../kube/index.ts';
import { configMap } from '../../test/support/sync-fakes.ts';
import { eventually } from '../../test/support/eventually.ts';
import { line, list, scripted, stream } from '../../test/support/scripted-server.ts';
import { LocalCopies } from './copies.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] };
const NAMESPACES: ApiResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: [], subresources: [] };
const GVK = { group: '', version: 'v1', kind: 'ConfigMap' };

/** A copy rule r made from peer p1 of ns/`name`, with that uid. */
function copy(name: string, uid: string, rv: string): KubeObject {
  const c = configMap(name, { owner: 'p1', source: { clusterID: 'p1', group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: 'r' }, uid, rv });
  return { ...c, metadata: { ...c.metadata, labels: { [LABELS.ownership]: 'p1' } } };
}

describe('LocalCopies', () => {
  it('counts a copy no more once a relist finds another object in its place', async () => {
    const srv = await scripted({
      list: [list('10', [copy('a', 'uid-1', '5')]), list('20', [copy('a', 'uid-2', '15')])],
      watch: [stream(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }))],
    });
    const stop = new AbortController();
    const factory = new InformerFactory({ cluster: 'local', rest: srv.rest, logger: silentLogger });
    factory.start(stop.signal);
    const copies = new LocalCopies({ factory, discovery: { resourceFor: () => Promise.resolve(CONFIGMAPS) }, perPeer: { maxObjects: 100, maxBytes: 2 ** 30 }, onEvent: () => undefined, freed: () => undefined, log: silentLogger });
    try {
      copies.acquire(GVK, undefined);
      await eventually('the relisted copy', () => copies.get(GVK, 'ns', 'a')?.metadata.uid === 'uid-2', 5_000);
      assert.equal(copies.budget.free('r', 'p1', 10), 9, 'only the copy there now counts');
    } finally {
      copies.close();
      stop.abort();
      srv.close();
    }
  });

  it('keeps counting the copies of a cluster-scoped kind while another watch of it stays open', async () => {
    const ns = (name: string): KubeObject => ({ ...copy(name, `uid-${name}`, '1'), apiVersion: 'v1', kind: 'Namespace', metadata: { ...copy(name, `uid-${name}`, '1').metadata, namespace: undefined } });
    const srv = await scripted({ list: [list('1', [ns('x')])], watch: [] });
    const stop = new AbortController();
    const factory = new InformerFactory({ cluster: 'local', rest: srv.rest, logger: silentLogger });
    factory.start(stop.signal);
    const copies = new LocalCopies({ factory, discovery: { resourceFor: () => Promise.resolve(NAMESPACES) }, perPeer: { maxObjects: 100, maxBytes: 2 ** 30 }, onEvent: () => undefined, freed: () => undefined, log: silentLogger });
    const gvk = { group: '', version: 'v1', kind: 'Namespace' };
    try {
      // Two rules watch the kind, one in every namespace and one in a named one: for a cluster-scoped kind both are one informer.
      copies.acquire(gvk, undefined);
      copies.acquire(gvk, ['only-here']);
      await eventually('the copies listed', () => copies.synced(gvk), 5_000);
      assert.equal(copies.budget.free('r', 'p1', 10), 9);
      copies.release(gvk, ['only-here']);
      assert.equal(copies.budget.free('r', 'p1', 10), 9, 'the watch left open still holds it');
      copies.release(gvk, undefined);
      assert.equal(copies.budget.free('r', 'p1', 10), 10, 'watched by none, it counts no more');
    } finally {
      copies.close();
      stop.abort();
      srv.close();
    }
  });
});

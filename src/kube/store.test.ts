import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { NAMESPACE_INDEX, Store, namespaceIndex } from './store.ts';
import type { KubeObject } from './types.ts';
import { deepCopy, objectKey, splitKey } from './types.ts';

const cm = (ns: string | undefined, name: string, labels: Record<string, string> = {}, rv = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: ns, name, labels, resourceVersion: rv },
});
const byApp = (o: KubeObject): string[] => (o.metadata.labels?.app ? [o.metadata.labels.app] : []);

describe('Store', () => {
  it('keys namespaced objects by namespace/name and cluster-scoped ones by name', () => {
    const s = new Store();
    s.upsert(cm('ns1', 'a'));
    s.upsert(cm(undefined, 'node-1'));
    assert.deepEqual(s.keys().sort(), ['node-1', 'ns1/a']);
    assert.equal(s.getByName('ns1', 'a')?.metadata.name, 'a');
    assert.equal(s.getByName(undefined, 'node-1')?.metadata.name, 'node-1');
    assert.deepEqual(splitKey('ns1/a'), { namespace: 'ns1', name: 'a' });
    assert.deepEqual(splitKey('node-1'), { namespace: undefined, name: 'node-1' });
  });

  it('returns the previous object on upsert and remove', () => {
    const s = new Store();
    assert.equal(s.upsert(cm('n', 'a', {}, '1')), undefined);
    assert.equal(s.upsert(cm('n', 'a', {}, '2'))?.metadata.resourceVersion, '1');
    assert.equal(s.remove('n/a')?.metadata.resourceVersion, '2');
    assert.equal(s.remove('n/a'), undefined);
    assert.equal(s.size, 0);
  });

  it('keeps indexes in step with upserts and removes', () => {
    const s = new Store({ indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: byApp } });
    s.upsert(cm('n1', 'a', { app: 'web' }));
    s.upsert(cm('n1', 'b', { app: 'db' }));
    s.upsert(cm('n2', 'c', { app: 'web' }));
    assert.deepEqual(s.byIndex('app', 'web').map(objectKey).sort(), ['n1/a', 'n2/c']);
    s.upsert(cm('n1', 'a', { app: 'db' }));
    assert.deepEqual(s.byIndex('app', 'web').map(objectKey), ['n2/c']);
    assert.deepEqual(s.byIndex('app', 'db').map(objectKey).sort(), ['n1/a', 'n1/b']);
    s.remove('n2/c');
    assert.deepEqual(s.byIndex('app', 'web'), []);
    assert.deepEqual(s.indexValues('app'), ['db']);
    assert.deepEqual(s.byIndex(NAMESPACE_INDEX, 'n1').length, 2);
    assert.throws(() => s.byIndex('nope', 'x'), /no indexer/);
  });

  it('indexes existing objects when an indexer is added later', () => {
    const s = new Store();
    s.upsert(cm('n', 'a', { app: 'web' }));
    s.addIndexer('app', byApp);
    assert.deepEqual(s.byIndex('app', 'web').map(objectKey), ['n/a']);
    assert.throws(() => s.addIndexer('app', byApp), /already exists/);
  });

  it('index lookups agree with a scan after any sequence of writes', () => {
    const write = fc.record({ del: fc.boolean(), name: fc.constantFrom('a', 'b', 'c', 'd'), ns: fc.constantFrom('x', 'y'), app: fc.constantFrom('web', 'db', '') });
    fc.assert(
      fc.property(fc.array(write, { maxLength: 50 }), (writes) => {
        const s = new Store({ indexers: { app: byApp, [NAMESPACE_INDEX]: namespaceIndex } });
        for (const w of writes) {
          if (w.del) s.remove(`${w.ns}/${w.name}`);
          else s.upsert(cm(w.ns, w.name, w.app ? { app: w.app } : {}));
        }
        for (const app of ['web', 'db']) {
          const scan = s.list().filter((o) => o.metadata.labels?.app === app).map(objectKey).sort();
          assert.deepEqual(s.byIndex('app', app).map(objectKey).sort(), scan);
        }
        for (const ns of ['x', 'y']) assert.equal(s.byIndex(NAMESPACE_INDEX, ns).length, s.list().filter((o) => o.metadata.namespace === ns).length);
      }),
    );
  });

  it('freezes cached objects deeply; deepCopy gives a mutable copy', () => {
    const s = new Store();
    s.upsert(cm('n', 'a', { app: 'web' }));
    const cached = s.get('n/a')!;
    assert.throws(() => {
      cached.metadata.labels!.app = 'x';
    }, TypeError);
    const copy = deepCopy(cached);
    copy.metadata.labels!.app = 'x';
    assert.equal(s.get('n/a')!.metadata.labels!.app, 'web');
  });
});

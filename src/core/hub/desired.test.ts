import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { DEFAULT_GENERATION_KEYS, desiredLocal, localChanged, managedKeys, paused, type ContentMode } from './desired.ts';

type Obj = KubeObject & Record<string, unknown>;

const hub = (o: { spec?: unknown; labels?: Record<string, string>; annotations?: Record<string, string>; generation?: number } = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'db-eu1', namespace: 'team-eu1', uid: 'hub-uid', resourceVersion: '7', generation: o.generation ?? 3, labels: o.labels ?? { tier: 'prod' }, annotations: o.annotations ?? {} },
  spec: o.spec ?? { size: 'large', replicas: 3 },
  status: { phase: 'hub-side' },
});

const desired = (h: Obj, current?: Obj, content: ContentMode = 'Replace') => desiredLocal(h, current, { rule: 'dbs', place: { namespace: 'team', name: 'db' }, content, generationKeys: DEFAULT_GENERATION_KEYS }) as Obj;

describe('the spoke object the hub declares', () => {
  it(`is made from the hub object at the mapped place, with no status and none of the hub's bookkeeping nor our keys (the peer sync acts on some)`, () => {
    const h = hub({
      labels: { tier: 'prod', 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id': 'someone' },
      annotations: { owner: 'team', [DEFAULT_GENERATION_KEYS.remote]: '2', [HUB_ANNOTATIONS.paused]: 'false', 'kubectl.kubernetes.io/last-applied-configuration': '{}', 'cluster-registry.k8s.cisco.com/source': 'x', 'cluster-registry-controller.k8s.cisco.com/core-sync-resource': 'x' },
    });
    const d = desired(h);
    assert.deepEqual(d.metadata.name, 'db');
    assert.deepEqual(d.metadata.namespace, 'team');
    assert.equal(d.metadata.uid, undefined);
    assert.equal(d.metadata.resourceVersion, undefined);
    assert.equal(d['status'], undefined);
    assert.deepEqual(d['spec'], { size: 'large', replicas: 3 });
    assert.deepEqual(d.metadata.labels, { tier: 'prod' });
    assert.equal(d.metadata.annotations?.['owner'], 'team');
    for (const k of [DEFAULT_GENERATION_KEYS.remote, HUB_ANNOTATIONS.paused, 'kubectl.kubernetes.io/last-applied-configuration', 'cluster-registry.k8s.cisco.com/source', 'cluster-registry-controller.k8s.cisco.com/core-sync-resource']) assert.equal(d.metadata.annotations?.[k], undefined, k);
    assert.equal(d.metadata.annotations?.[HUB_ANNOTATIONS.rule], 'dbs');
    assert.equal(d.metadata.annotations?.[HUB_ANNOTATIONS.origin], 'team-eu1/db-eu1/hub-uid', 'the very hub object it is made from');
    assert.equal(d.metadata.annotations?.[HUB_ANNOTATIONS.appliedGeneration], '3');
    assert.deepEqual(managedKeys(d), { labels: ['tier'], annotations: ['owner'] });
  });

  it(`keeps the spoke's status and the keys its own controllers added, and removes only the keys the hub dropped`, () => {
    const first = desired(hub({ labels: { tier: 'prod', team: 'a' }, annotations: { note: 'x' } }));
    const current: Obj = { ...first, metadata: { ...first.metadata, uid: 'local-uid', labels: { ...first.metadata.labels, 'local/added': 'y' }, annotations: { ...first.metadata.annotations, 'local/note': 'z' } }, status: { phase: 'Running' } };
    const next = desired(hub({ labels: { tier: 'dev' }, annotations: {} }), current);
    assert.deepEqual(next.metadata.labels, { tier: 'dev', 'local/added': 'y' });
    assert.equal(next.metadata.annotations?.['note'], undefined);
    assert.equal(next.metadata.annotations?.['local/note'], 'z');
    assert.deepEqual(next['status'], { phase: 'Running' });
    assert.equal(next.metadata.uid, 'local-uid');
  });

  it(`replaces the content, or merges it keeping fields only the spoke has`, () => {
    const current = desired(hub({ spec: { size: 'large', replicas: 3, extra: { a: 1 } } }));
    (current['spec'] as Record<string, unknown>)['injected'] = { sidecar: true };
    (current['spec'] as Record<string, unknown>)['extra'] = { a: 1, b: 2 };
    const h = hub({ spec: { size: 'small', extra: { a: 5 }, list: [1, 2] } });
    assert.deepEqual(desired(h, current, 'Replace')['spec'], { size: 'small', extra: { a: 5 }, list: [1, 2] });
    assert.deepEqual(desired(h, current, 'Merge')['spec'], { size: 'small', replicas: 3, injected: { sidecar: true }, extra: { a: 5, b: 2 }, list: [1, 2] });
  });

  it(`carries kinds without a spec whole (a ConfigMap's data), and drops top-level fields the hub removed`, () => {
    const cm = (data: Record<string, string>, binary?: Record<string, string>): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c-eu1', generation: 1 }, data, ...(binary ? { binaryData: binary } : {}) });
    const current = desired(cm({ a: '1' }, { b: 'AA==' }));
    assert.deepEqual(current['binaryData'], { b: 'AA==' });
    const next = desired(cm({ a: '2' }), current);
    assert.deepEqual(next['data'], { a: '2' });
    assert.equal(next['binaryData'], undefined);
  });

  it(`changes nothing when applied twice, and does not touch the object it was given`, () => {
    const h = hub();
    const once = desired(h);
    const frozen = structuredClone(once);
    const twice = desired(h, once);
    assert.deepEqual(once, frozen);
    assert.equal(localChanged(once, twice), false);
    assert.equal(localChanged(once, desired(hub({ spec: { size: 'small' } }), once)), true);
    assert.equal(localChanged(once, desired(hub({ generation: 4 }), once)), true, 'a new hub generation is recorded');
    assert.equal(localChanged(once, { ...once, status: { phase: 'other' } }), false, 'status is not for the hub to set');
  });

  it(`reads a record of managed keys written by anyone as input: anything malformed counts as none`, () => {
    const with_ = (v: string): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { [HUB_ANNOTATIONS.managedKeys]: v } } });
    assert.deepEqual(managedKeys(with_('not json')), { labels: [], annotations: [] });
    assert.deepEqual(managedKeys(with_('{"labels":[1,"a"],"annotations":"b"}')), { labels: ['a'], annotations: [] });
    assert.deepEqual(managedKeys(with_('null')), { labels: [], annotations: [] });
  });

  it(`is paused by the annotation set to "true" only`, () => {
    assert.equal(paused(hub({ annotations: { [HUB_ANNOTATIONS.paused]: 'true' } })), true);
    assert.equal(paused(hub({ annotations: { [HUB_ANNOTATIONS.paused]: 'yes' } })), false);
    assert.equal(paused(undefined), false);
  });
});

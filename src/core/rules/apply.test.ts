import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KubeObject } from '../api/types.ts';
import { applyBody, applyNeeded, FIELD_MANAGER, foldedManagedFields, holds, ownedFieldsKept } from './apply.ts';

const desired = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 's', namespace: 'ns', labels: { a: '1' }, annotations: { x: 'y' } },
  spec: { ports: [{ name: 'http', port: 80 }], selector: { app: 'web' } },
  status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
});

const ownedMain = {
  'f:metadata': { 'f:labels': { 'f:a': {} }, 'f:annotations': { 'f:x': {} } },
  'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {} } }, 'f:selector': { 'f:app': {} } },
};

function current(over: Partial<KubeObject> = {}, fields: unknown = ownedMain): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 's',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '7',
      labels: { a: '1', others: 'keep' },
      annotations: { x: 'y' },
      managedFields: [
        { manager: FIELD_MANAGER, operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: fields },
        { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:others': {} } } } },
      ],
    },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }], selector: { app: 'web' }, clusterIP: '10.0.0.1', type: 'ClusterIP' },
    ...over,
  };
}

describe('holds', () => {
  it('accepts server defaults and fields others added', () => {
    assert.ok(holds({ a: 1, b: 2, l: [{ x: 1, d: 0 }] }, { a: 1, l: [{ x: 1 }] }));
  });
  it('sees changed values, other list lengths and missing keys', () => {
    assert.ok(!holds({ a: 1 }, { a: 2 }));
    assert.ok(!holds({ l: [1, 2] }, { l: [1] }));
    assert.ok(!holds({}, { a: 'x' }));
    assert.ok(!holds({ a: { b: 1 } }, { a: 1 }));
  });
  it('treats empty and absent maps and lists alike, and a desired null as absent', () => {
    assert.ok(holds({}, { labels: {}, list: [] }));
    assert.ok(holds({}, { a: null }));
    assert.ok(!holds({ a: 1 }, { a: null }));
  });
  it('wants a list or map owned as a whole to be equal, not merely contain what is desired', () => {
    const owned = { 'f:spec': { 'f:rules': {} } };
    const current = { spec: { rules: [{ match: [1], mutations: { x: 1 } }] } };
    assert.ok(!holds(current, { spec: { rules: [{ match: [1] }] } }, owned), 'the apply replaces the list: mutations would go');
    assert.ok(holds(current, { spec: { rules: [{ match: [1], mutations: { x: 1 } }] } }, owned));
    assert.ok(holds(current, { spec: { rules: [{ match: [1] }] } }), 'without ownership facts, containment');
    const granular = { 'f:spec': { 'f:ports': { 'k:{"port":80}': { '.': {}, 'f:port': {} } } } };
    assert.ok(holds({ spec: { ports: [{ port: 80, protocol: 'TCP' }] } }, { spec: { ports: [{ port: 80 }] } }, granular), 'merge lists take defaults');
  });
  it('holds for anything against itself', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => holds(structuredClone(v), v)));
  });
});

describe('ownedFieldsKept', () => {
  it('is true while desired sets every owned field', () => {
    assert.ok(ownedFieldsKept(ownedMain, applyBody(desired(), 'main')));
  });
  it('sees an owned label, annotation or list item desired dropped', () => {
    const d = desired();
    delete d.metadata.labels!['a'];
    assert.ok(!ownedFieldsKept(ownedMain, d));
    const e = desired();
    e.metadata.annotations = {};
    assert.ok(!ownedFieldsKept(ownedMain, e));
    const f = desired();
    (f['spec'] as { ports: unknown[] }).ports = [{ name: 'http', port: 8080 }];
    assert.ok(!ownedFieldsKept(ownedMain, f));
  });
  it('handles set items, indices, and counts unknown key forms as missing', () => {
    assert.ok(ownedFieldsKept({ 'f:l': { 'v:"a"': {} } }, { l: ['a', 'b'] }));
    assert.ok(!ownedFieldsKept({ 'f:l': { 'v:"c"': {} } }, { l: ['a'] }));
    assert.ok(ownedFieldsKept({ 'f:l': { 'i:1': { 'f:x': {} } } }, { l: [{}, { x: 1 }] }));
    assert.ok(!ownedFieldsKept({ 'f:l': { 'i:2': {} } }, { l: [{}] }));
    assert.ok(!ownedFieldsKept({ 'z:weird': {} }, {}));
    assert.ok(!ownedFieldsKept({ 'k:not json': {} }, []));
  });
});

describe('applyNeeded', () => {
  it('skips an apply that would change nothing', () => {
    assert.equal(applyNeeded(desired(), current(), FIELD_MANAGER, 'main'), false);
  });
  it('applies when a value drifted or a key we own is no longer desired', () => {
    assert.equal(applyNeeded(desired(), current({ spec: { ports: [{ name: 'http', port: 80 }], selector: { app: 'db' } } }), FIELD_MANAGER, 'main'), true);
    const d = desired();
    d.metadata.labels = {};
    assert.equal(applyNeeded(d, current(), FIELD_MANAGER, 'main'), true);
  });
  it('does not care about keys others own', () => {
    const c = current();
    delete c.metadata.labels!['others'];
    assert.equal(applyNeeded(desired(), c, FIELD_MANAGER, 'main'), false);
  });
  it('applies once to a copy it never wrote, but not to one it created and that is unchanged', () => {
    const c = current();
    c.metadata.managedFields = [];
    assert.equal(applyNeeded(desired(), c, FIELD_MANAGER, 'main'), true);
    const created = current();
    created.metadata.managedFields = [{ manager: FIELD_MANAGER, operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: ownedMain }];
    assert.equal(applyNeeded(desired(), created, FIELD_MANAGER, 'main'), false);
    const d = desired();
    d.metadata.labels = {};
    assert.equal(applyNeeded(d, created, FIELD_MANAGER, 'main'), true, 'a label our create set and desired dropped');
  });
  it('checks status on its own, against our status entry', () => {
    const c = current();
    assert.equal(applyNeeded(desired(), c, FIELD_MANAGER, 'status'), true, 'no status entry yet');
    c.metadata.managedFields!.push({ manager: FIELD_MANAGER, operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:loadBalancer': { 'f:ingress': {} } } } });
    c['status'] = { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } };
    assert.equal(applyNeeded(desired(), c, FIELD_MANAGER, 'status'), false);
    c['status'] = { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } };
    assert.equal(applyNeeded(desired(), c, FIELD_MANAGER, 'status'), true);
    const d = desired();
    delete d['status'];
    assert.equal(applyNeeded(d, c, FIELD_MANAGER, 'status'), false, 'nothing to apply');
  });
  it('sends status only through the status part', () => {
    assert.equal(applyBody(desired(), 'main')['status'], undefined);
    assert.deepEqual(applyBody(desired(), 'status'), { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'ns' }, status: desired()['status'] });
  });
});

describe('foldedManagedFields', () => {
  const entry = (operation: string, fieldsV1: unknown, extra: Record<string, unknown> = {}) => ({ manager: FIELD_MANAGER, operation, apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1, ...extra });
  const obj = (managedFields: unknown[]): KubeObject => ({ metadata: { name: 'x', managedFields } });
  it('has nothing to fold without our create entry', () => {
    assert.equal(foldedManagedFields(obj([entry('Apply', {})])), undefined);
    assert.equal(foldedManagedFields(obj([{ ...entry('Update', {}), manager: 'kubectl' }])), undefined);
  });
  it('turns our create entry into our apply entry when there is none', () => {
    assert.deepEqual(foldedManagedFields(obj([entry('Update', { 'f:data': { 'f:a': {} } })])), [entry('Apply', { 'f:data': { 'f:a': {} } })]);
  });
  it('merges it into an existing apply entry, leaving others and status entries alone', () => {
    const others = { manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:metadata': {} } };
    const status = entry('Apply', { 'f:status': {} }, { subresource: 'status' });
    const folded = foldedManagedFields(obj([entry('Apply', { 'f:data': { 'f:a': {} } }), others, entry('Update', { 'f:data': { 'f:b': {} } }), status]));
    assert.deepEqual(folded, [entry('Apply', { 'f:data': { 'f:a': {}, 'f:b': {} } }), others, status]);
  });
});

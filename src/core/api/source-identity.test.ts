import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ANNOTATIONS } from './keys.ts';
import type { KubeObject } from './types.ts';
import { formatSourceIdentity, parseSourceIdentity, recordsOwner, sameSourceIdentity, sourceIdentityOf, sourceObjectKey, type SourceIdentity } from './source-identity.ts';

const identity = fc.record({
  clusterID: fc.string({ minLength: 1 }),
  group: fc.string(),
  kind: fc.string({ minLength: 1 }),
  namespace: fc.string(),
  name: fc.string({ minLength: 1 }),
});

describe('source identity', () => {
  it('round-trips any identity', () => {
    fc.assert(fc.property(identity, (id) => assert.deepEqual(parseSourceIdentity(formatSourceIdentity(id)), { ...id }))); // fast-check may build null-prototype records
  });

  it('has a fixed key order, so equal identities give equal annotation values', () => {
    const a: SourceIdentity = { clusterID: 'c', group: 'g', kind: 'K', namespace: 'ns', name: 'n' };
    const b = { name: 'n', namespace: 'ns', kind: 'K', group: 'g', clusterID: 'c' };
    assert.equal(formatSourceIdentity(a), formatSourceIdentity(b));
    assert.equal(formatSourceIdentity(a), '{"clusterID":"c","group":"g","kind":"K","namespace":"ns","name":"n"}');
  });

  it('holds names longer than a label value allows', () => {
    const id: SourceIdentity = { clusterID: 'c', group: '', kind: 'ConfigMap', namespace: 'ns', name: 'x'.repeat(253) };
    assert.deepEqual(parseSourceIdentity(formatSourceIdentity(id)), id);
  });

  it('rejects values that are not ours instead of guessing', () => {
    for (const v of [undefined, '', 'x', '[]', 'null', '{"clusterID":"c"}', '{"clusterID":"","group":"","kind":"K","namespace":"","name":"n"}', '{"clusterID":"c","group":1,"kind":"K","namespace":"","name":"n"}']) {
      assert.equal(parseSourceIdentity(v), undefined, String(v));
    }
  });

  it('drops unknown fields', () => {
    const v = '{"clusterID":"c","group":"","kind":"K","namespace":"","name":"n","extra":1}';
    assert.deepEqual(parseSourceIdentity(v), { clusterID: 'c', group: '', kind: 'K', namespace: '', name: 'n' });
  });

  it('reads the annotation of an object and compares identities', () => {
    const id: SourceIdentity = { clusterID: 'c', group: 'apps', kind: 'Deployment', namespace: 'ns', name: 'd' };
    const obj = { metadata: { annotations: { [ANNOTATIONS.source]: formatSourceIdentity(id) } } };
    assert.deepEqual(sourceIdentityOf(obj), id);
    assert.equal(sourceIdentityOf({ metadata: {} }), undefined);
    assert.ok(sameSourceIdentity(id, { ...id }));
    assert.ok(!sameSourceIdentity(id, { ...id, clusterID: 'other' }));
  });

  it('records the rule when there is one, after the fixed fields', () => {
    const id: SourceIdentity = { clusterID: 'c', group: '', kind: 'Secret', namespace: 'ns', name: 'n', rule: 'r' };
    assert.equal(formatSourceIdentity(id), '{"clusterID":"c","group":"","kind":"Secret","namespace":"ns","name":"n","rule":"r"}');
    assert.deepEqual(parseSourceIdentity(formatSourceIdentity(id)), id);
    for (const bad of ['""', '1']) assert.equal(parseSourceIdentity(formatSourceIdentity(id).replace('"r"', bad)), undefined);
  });

  it('compares rules only when both identities name one, and keys copies by the source object alone', () => {
    const id: SourceIdentity = { clusterID: 'c', group: '', kind: 'Secret', namespace: 'ns', name: 'n' };
    assert.ok(sameSourceIdentity(id, { ...id, rule: 'r' }));
    assert.ok(sameSourceIdentity({ ...id, rule: 'r' }, { ...id, rule: 'r' }));
    assert.ok(!sameSourceIdentity({ ...id, rule: 'r' }, { ...id, rule: 's' }));
    assert.equal(sourceObjectKey({ ...id, rule: 'r' }), sourceObjectKey(id));
    assert.notEqual(sourceObjectKey(id), sourceObjectKey({ ...id, name: 'm' }));
  });
});

describe('recordsOwner', () => {
  const copy = (owner: string | undefined, readFrom: string | undefined): KubeObject => ({
    metadata: {
      name: 'x',
      annotations: {
        ...(owner ? { [ANNOTATIONS.ownership]: owner } : {}),
        ...(readFrom ? { [ANNOTATIONS.source]: formatSourceIdentity({ clusterID: readFrom, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a' }) } : {}),
      },
    },
  });
  const cases: [string, KubeObject, boolean][] = [
    ['a copy read from its owner', copy('owner', 'owner'), true],
    ['a copy passed on by another member (its owner transitive)', copy('owner', 'relay'), false],
    ['a copy without a recorded source', copy('owner', undefined), false],
    ['an object owned here, recording a source', copy(undefined, 'owner'), false],
  ];
  for (const [what, o, want] of cases) it(what, () => assert.equal(recordsOwner(o), want));
});

describe('sourceIdentityOf', () => {
  it('reads the annotation the object has now, also when asked again after it changed', () => {
    const id = { clusterID: 'c1', group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', rule: 'r' };
    const obj: KubeObject = { metadata: { name: 'x', annotations: { [ANNOTATIONS.source]: formatSourceIdentity(id) } } };
    assert.deepEqual(sourceIdentityOf(obj), id);
    assert.equal(sourceIdentityOf(obj), sourceIdentityOf(obj));
    assert.ok(Object.isFrozen(sourceIdentityOf(obj)));
    obj.metadata.annotations![ANNOTATIONS.source] = formatSourceIdentity({ ...id, name: 'b' });
    assert.equal(sourceIdentityOf(obj)?.name, 'b');
    delete obj.metadata.annotations![ANNOTATIONS.source];
    assert.equal(sourceIdentityOf(obj), undefined);
  });

  it('reads every value right, however many, however long, and whatever a peer put there', () => {
    const marked = (value: unknown): KubeObject => ({ metadata: { name: 'x', annotations: { [ANNOTATIONS.source]: value as string } } });
    const id = (i: number, name = `o-${i}`) => ({ clusterID: 'c1', group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: 'r' });
    // More than are remembered, asked twice in turn: the first ones were forgotten, and are read again.
    for (let round = 0; round < 2; round++) for (let i = 0; i < 3000; i++) assert.equal(sourceIdentityOf(marked(formatSourceIdentity(id(i))))?.name, `o-${i}`);
    const long = id(0, 'n'.repeat(5000));
    assert.deepEqual(sourceIdentityOf(marked(formatSourceIdentity(long))), long);
    assert.deepEqual(sourceIdentityOf(marked(formatSourceIdentity(long))), long);
    for (const bad of [42, { clusterID: 'c1' }, ['c1'], null, 'not json', '{"clusterID":""}']) assert.equal(sourceIdentityOf(marked(bad)), undefined, JSON.stringify(bad));
  });
});

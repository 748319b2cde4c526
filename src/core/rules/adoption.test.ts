import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, LABELS } from '../api/keys.ts';
import type { KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../api/types.ts';
import { adoptionChoices, adoptionPolicyOf, adopts, describeReplaced, MAX_REPLACED_FIELDS, replacedFields } from './adoption.ts';

const object = (kind: string, data: Record<string, string>, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name: 'a', namespace: 'ns', labels }, data });
const copyOf = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [LABELS.ownership]: 'peer' }, annotations: { [ANNOTATIONS.ownership]: 'peer', [ANNOTATIONS.source]: '{}' } } });

describe('what adoption replaces', () => {
  it('is nothing where the local object holds every value the copy sets (our own marks aside, and what else it has kept)', () => {
    assert.deepEqual(replacedFields(object('ConfigMap', { a: '1', extra: 'x' }), copyOf(object('ConfigMap', { a: '1' }))), []);
  });

  it('is each field the copy would set to another value, with what the local object has there', () => {
    const found = replacedFields(object('ConfigMap', { a: 'local' }, { tier: 'x' }), copyOf(object('ConfigMap', { a: '1', b: '2' }, { tier: 'y' })));
    assert.deepEqual(found, [
      { segments: ['data', 'a'], have: 'local' },
      { segments: ['data', 'b'], have: undefined },
      { segments: ['metadata', 'labels', 'tier'], have: 'x' },
    ]);
  });

  it('is said with the values it had, so it can be put back by hand; a Secret’s values never', () => {
    const cm = object('ConfigMap', { a: 'local' });
    assert.equal(describeReplaced(cm, replacedFields(cm, copyOf(object('ConfigMap', { a: '1', b: '2' })))), 'data.a was "local"; data.b was absent');
    const secret = object('Secret', { password: 'c2VjcmV0' });
    const said = describeReplaced(secret, replacedFields(secret, copyOf(object('Secret', { password: 'b3RoZXI=' }))));
    assert.equal(said, 'data.password was (value hidden)');
    assert.ok(!said.includes('c2VjcmV0'));
  });

  it('stays bounded whatever the object holds', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_REPLACED_FIELDS + 4 }, (_, i) => [`k${i}`, 'x'.repeat(5000)]));
    const local = object('ConfigMap', many);
    const said = describeReplaced(local, replacedFields(local, copyOf(object('ConfigMap', Object.fromEntries(Object.keys(many).map((k) => [k, 'y']))))));
    assert.match(said, /; and 4 more$/);
    assert.ok(said.length < MAX_REPLACED_FIELDS * 260, `${said.length} characters`);
  });
});

describe('adoption policies', () => {
  const cases: [string, Parameters<typeof adopts>[0], number, boolean][] = [
    ['Never, identical', 'Never', 0, false],
    ['Never, different', 'Never', 2, false],
    ['IfIdentical, identical', 'IfIdentical', 0, true],
    ['IfIdentical, different', 'IfIdentical', 2, false],
    ['Always, identical', 'Always', 0, true],
    ['Always, different', 'Always', 2, true],
  ];
  for (const [what, policy, differing, want] of cases) {
    it(`${what}: ${want ? 'adopts' : 'leaves it'}`, () => assert.equal(adopts(policy, Array.from({ length: differing }, () => ({ segments: ['data', 'a'], have: 'x' }))), want));
  }

  const rule = (adoptionPolicy?: ResourceSyncRuleSpec['adoptionPolicy'], owner?: string) => ({
    object: { metadata: { name: 'r', ...(owner ? { annotations: { [ANNOTATIONS.ownership]: owner } } : {}) } } as ResourceSyncRule,
    spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [], ...(adoptionPolicy ? { adoptionPolicy } : {}) },
  });

  it("is the rule's where the rule was made, Never by default", () => {
    assert.deepEqual(adoptionPolicyOf(rule()), { policy: 'Never' });
    assert.deepEqual(adoptionPolicyOf(rule('Always')), { policy: 'Always' });
  });

  it("is Never on a peer's copy of the rule, and says why", () => {
    const got = adoptionPolicyOf(rule('IfIdentical', 'peer-id'));
    assert.equal(got.policy, 'Never');
    assert.match(got.why ?? '', /honoured only where the rule was made.*peer-id/);
  });

  it('says what each choice would do', () => {
    assert.match(adoptionChoices([]), /IfIdentical or Always would adopt it/);
    assert.match(adoptionChoices([{ segments: ['data', 'a'], have: 'x' }]), /Always would adopt it, replacing 1 field; IfIdentical would not/);
  });
});

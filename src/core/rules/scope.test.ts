import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreResourceSyncRules } from '../api/core-rules.ts';
import type { ResourceSyncRuleSpec } from '../api/types.ts';
import { drainedWatchNeeded, inScope, MAX_SCOPED_NAMESPACES, sourceScope, targetNamespaces, watchCovers, type CopySpot, type CopyWatch } from './scope.ts';

const secrets = (rules: ResourceSyncRuleSpec['rules']): ResourceSyncRuleSpec => ({ groupVersionKind: { version: 'v1', kind: 'Secret' }, rules });

describe('sourceScope', () => {
  it('scopes the core secrets rule to the controller namespace and the credentials type', () => {
    const rule = coreResourceSyncRules('cluster-registry').find((r) => r.spec.groupVersionKind.kind === 'Secret');
    assert.deepEqual(sourceScope(rule!.spec, true), { namespaces: ['cluster-registry'], fieldSelector: 'type=k8s.cisco.com/cluster-registry-secret' });
  });
  it('watches everything when some rule matches everything', () => {
    assert.deepEqual(sourceScope(secrets([{ match: [{ namespaces: ['a'] }] }, {}]), true), { namespaces: undefined, fieldSelector: undefined });
  });
  it('watches nothing for an empty rule list', () => {
    assert.deepEqual(sourceScope(secrets([]), true).namespaces, []);
  });
  it('unions namespaces of all entries, objectKey namespaces included', () => {
    const s = sourceScope(secrets([{ match: [{ namespaces: ['b', 'a'] }, { objectKey: { name: 'x', namespace: 'c' } }] }]), true);
    assert.deepEqual(s.namespaces, ['a', 'b', 'c']);
    assert.equal(s.fieldSelector, undefined);
  });
  it('goes cluster-wide when one entry is unrestricted or too many namespaces are named', () => {
    assert.equal(sourceScope(secrets([{ match: [{ namespaces: ['a'] }, { labels: [{}] }] }]), true).namespaces, undefined);
    const many = Array.from({ length: MAX_SCOPED_NAMESPACES + 1 }, (_, i) => `ns${i}`);
    assert.equal(sourceScope(secrets([{ match: [{ namespaces: many }] }]), true).namespaces, undefined);
  });
  it('ignores namespaces for cluster-scoped kinds', () => {
    const spec: ResourceSyncRuleSpec = { groupVersionKind: { group: 'x', version: 'v1', kind: 'Thing' }, rules: [{ match: [{ namespaces: ['a'] }] }] };
    assert.equal(sourceScope(spec, false).namespaces, undefined);
  });
  it('selects the one object every entry names', () => {
    const s = sourceScope(secrets([{ match: [{ objectKey: { name: 'test-secret', namespace: 'cluster-registry' } }] }]), true);
    assert.deepEqual(s, { namespaces: ['cluster-registry'], fieldSelector: 'metadata.name=test-secret', name: 'test-secret' });
    assert.ok(inScope(s, 'cluster-registry', 'test-secret'));
    assert.ok(!inScope(s, 'cluster-registry', 'other'));
    assert.ok(!inScope(s, 'elsewhere', 'test-secret'));
    assert.equal(sourceScope(secrets([{ match: [{ objectKey: { name: 'a' } }, { objectKey: { name: 'b' } }] }]), true).fieldSelector, undefined);
  });
  it('uses the Secret type only for Secrets and only when every entry agrees', () => {
    const cm: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ content: [{ key: 'type', value: 't' }] }] }] };
    assert.equal(sourceScope(cm, true).fieldSelector, undefined);
    assert.equal(sourceScope(secrets([{ match: [{ content: [{ key: 'type', value: 't' }] }, { content: [{ key: 'type', value: 'u' }] }] }]), true).fieldSelector, undefined);
    assert.equal(sourceScope(secrets([{ match: [{ content: [{ key: 'type', value: 7 }] }] }]), true).fieldSelector, undefined);
  });
});

describe('sourceScope field selector values', () => {
  it('escapes what the field selector grammar uses', () => {
    const spec: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ content: [{ key: 'type', value: 'a,b=c\\d' }] }] }] };
    assert.equal(sourceScope(spec, true).fieldSelector, 'type=a\\,b\\=c\\\\d');
  });
});

describe('targetNamespaces', () => {
  const scoped = (overrides: { path: string }[]): ResourceSyncRuleSpec => ({ groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: ['a'] }], mutations: { overrides: overrides.map((o) => ({ type: 'replace', ...o })) } }] });
  it('are the source namespaces while no override can move a copy', () => {
    const spec = scoped([{ path: '/metadata/name' }, { path: '/metadata/labels/x' }, { path: '/metadata?/namespaces' }, { path: '/data/metadata' }, { path: '/' }]);
    assert.deepEqual(targetNamespaces(spec, sourceScope(spec, true)), ['a']);
  });
  it('are any namespace when an override may set the namespace or replace all metadata', () => {
    for (const path of ['', '/metadata/namespace', '/metadata/namespace?', '/metadata', '/metadata?', '/metadata?/namespace', '/metadata?/namespace?', '/metadata/namespace/x', 'no-slash']) {
      const spec = scoped([{ path }]);
      assert.equal(targetNamespaces(spec, sourceScope(spec, true)), undefined, path);
    }
  });
});

describe('copy watches', () => {
  const CM = { group: '', version: 'v1', kind: 'ConfigMap' };
  const NS = { group: '', version: 'v1', kind: 'Namespace' };
  const spot = (namespace: string, gvk = CM): CopySpot => ({ gvk, namespace });
  const watch = (namespaces: string[] | undefined, gvks = [CM]): CopyWatch => ({ gvks, namespaces });

  it('covers a copy of its kinds in its namespaces, in any namespace when it names none, and a cluster-scoped copy always', () => {
    const rows: [CopyWatch, CopySpot, boolean][] = [
      [watch(['a']), spot('a'), true],
      [watch(['a']), spot('b'), false],
      [watch(undefined), spot('b'), true],
      [watch(['a']), spot('a', NS), false],
      [watch(['a'], [NS]), spot('', NS), true],
    ];
    for (const [w, s, want] of rows) assert.equal(watchCovers(w, s), want, `${JSON.stringify(w)} ${JSON.stringify(s)}`);
  });

  describe('a drained watch', () => {
    const facts = { nowMs: 10_000, graceMs: 1_000, current: [watch(['b'])], recorded: [] as CopySpot[], unknownKinds: [] as (typeof CM)[] };
    const drained = { watch: watch(['a']), sinceMs: 0 };

    it('stays through the grace period after the change, whatever the copies', () => {
      assert.equal(drainedWatchNeeded({ ...drained, sinceMs: 9_500 }, facts), true);
    });
    it('goes once the grace period is over and no copy recording the rule needs it', () => {
      assert.equal(drainedWatchNeeded(drained, facts), false);
    });
    it('stays while a copy recording the rule lies where only it sees', () => {
      assert.equal(drainedWatchNeeded(drained, { ...facts, recorded: [spot('a')] }), true);
    });
    it('goes when the copies recording the rule lie where a current watch sees them', () => {
      assert.equal(drainedWatchNeeded(drained, { ...facts, recorded: [spot('b')], current: [watch(['a', 'b'])] }), false);
    });
    it('goes for a rule that went once no copy records it, and stays while one does', () => {
      assert.equal(drainedWatchNeeded(drained, { ...facts, current: [] }), false);
      assert.equal(drainedWatchNeeded(drained, { ...facts, current: [], recorded: [spot('a')] }), true);
    });
    it('stays while the copies of a kind it covers are not all known', () => {
      assert.equal(drainedWatchNeeded(drained, { ...facts, unknownKinds: [CM] }), true);
      assert.equal(drainedWatchNeeded(drained, { ...facts, unknownKinds: [NS] }), false);
    });
  });
});

import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject, ResourceSyncRule } from '../api/types.ts';
import { FIELD_MANAGER } from './apply.ts';
import {
  aroundDrift,
  contentHash,
  describeDrift,
  driftPolicyOf,
  findDrift,
  markAnnotations,
  markOf,
  markText,
  MAX_DRIFTED_FIELDS,
  MAX_MARK_LENGTH,
  ownRecord,
  parseSyncRecord,
  planCopyUpdate,
  planDrift,
  recordOn,
  unkeptFields,
  type DriftedField,
  type DriftFacts,
  type DriftMark,
  type DriftPolicy,
} from './drift.ts';
import { fieldPath, withoutFields } from './field-diff.ts';

const LOCAL = 'local-id';
const RECORD = ANNOTATIONS.syncRecord;
const FROM = { localClusterID: LOCAL, sourceVersion: '7', ruleGeneration: 2 };
const cm = (data: Record<string, unknown>, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', ...extra }, data });

/** The body we would apply, with this cluster's record of it as the copy carries. */
function written(body: KubeObject): KubeObject {
  const b = structuredClone(body);
  recordOn(b, undefined, FROM);
  return b;
}

/** `o` with the given managedFields. */
const managed = (o: KubeObject, entries: object[]): KubeObject => ({ ...o, metadata: { ...o.metadata, managedFields: entries } });
const entry = (manager: string, fieldsV1: object, operation = 'Update', time = '2026-11-27T10:00:00Z', subresource?: string) => ({ manager, operation, time, fieldsType: 'FieldsV1', fieldsV1, ...(subresource ? { subresource } : {}) });
const ours = (fields: object) => entry(FIELD_MANAGER, fields, 'Apply');
const facts = (o: Partial<DriftFacts> = {}): DriftFacts => ({ manager: FIELD_MANAGER, recordMatches: true, recorded: true, marked: [], unkept: new Set(), ...o });

describe('the sync record', () => {
  it('keeps the copy’s record while what is written hashes the same, and writes a new one when it does not', () => {
    const body = written(cm({ a: '1' }));
    const again = cm({ a: '1' });
    assert.equal(recordOn(again, body, { ...FROM, sourceVersion: '8' }), true);
    assert.equal(again.metadata.annotations?.[RECORD], body.metadata.annotations?.[RECORD], 'a new source version alone changes nothing');
    const changed = cm({ a: '2' });
    assert.equal(recordOn(changed, body, { ...FROM, sourceVersion: '9' }), false);
    assert.deepEqual(parseSyncRecord(changed.metadata.annotations?.[RECORD]), { hash: contentHash(changed), cluster: LOCAL, sourceVersion: '9', ruleGeneration: 2 });
  });

  it('hashes the same whatever the key order (a cached source and a listed one)', () => {
    assert.equal(contentHash(cm({ x: '1', y: { p: 1, q: 2 } })), contentHash({ data: { y: { q: 2, p: 1 }, x: '1' }, metadata: { namespace: 'ns', name: 'c' }, kind: 'ConfigMap', apiVersion: 'v1' }));
  });

  it('hashes as it always has: copies in clusters carry the hash, and a new one would tell each of them apart from what it holds', () => {
    assert.equal(contentHash(cm({ x: '1', y: { p: 1, q: 2 } })), '3f69849f7d69cf595de4fbd0a1e8d854');
  });

  it('hashes what JSON.stringify writes of the object rebuilt with its keys sorted at every level', () => {
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
            )
          : v;
    const reference = (body: KubeObject): string => {
      const { status: _s, ...rest } = body;
      const annotations = { ...body.metadata.annotations };
      delete annotations[RECORD];
      return hash('sha256', JSON.stringify(sorted({ ...rest, metadata: { ...body.metadata, annotations } })), 'hex').slice(0, 32);
    };
    const value = fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.array(fc.oneof(fc.jsonValue(), fc.constant(undefined))));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), value), fc.dictionary(fc.string(), value), fc.option(fc.dictionary(fc.string(), fc.string())), (top, metadata, annotations) => {
        const body = { ...top, metadata: { ...metadata, ...(annotations ? { annotations: { ...annotations, [RECORD]: 'x' } } : {}) } } as KubeObject;
        assert.equal(contentHash(body), reference(body));
      }),
      { numRuns: 500 },
    );
    const proto = JSON.parse('{"kind":"ConfigMap","metadata":{"name":"a"},"data":{"__proto__":"p","b":"1"}}') as KubeObject;
    assert.equal(contentHash(proto), reference(proto));
    // Keys that are array indices come first whatever their place in sorted order, and only those.
    const indices = cm(Object.fromEntries(['b', '10', '9', '01', '-1', '1.5', '4294967294', '4294967295', '', '0'].map((k) => [k, k])));
    assert.equal(contentHash(indices), reference(indices));
  });

  it('leaves the record itself and status out of the hash', () => {
    const a = cm({ x: '1' });
    assert.equal(contentHash(written(a)), contentHash(a));
    assert.equal(contentHash({ ...a, status: { phase: 'A' } }), contentHash(a), 'a status change of a source writes nothing of the object');
  });

  it('trusts only a record this cluster wrote', () => {
    const foreign = written(cm({ a: '1' }));
    assert.ok(ownRecord(foreign, LOCAL));
    assert.equal(ownRecord(foreign, 'another-id'), undefined);
    const again = cm({ a: '1' });
    assert.equal(recordOn(again, foreign, { ...FROM, localClusterID: 'another-id' }), false, 'a record passed on from elsewhere is replaced');
  });

  it('parses only records of its own shape', () => {
    for (const bad of [undefined, '', 'nope', '[]', 'null', '{"hash":1,"cluster":"c","sourceVersion":"1","ruleGeneration":1}', '{"hash":"h","sourceVersion":"1","ruleGeneration":1}']) assert.equal(parseSyncRecord(bad), undefined, String(bad));
  });
});

describe('finding drift', () => {
  const body = written(cm({ a: '1', b: '2' }, { labels: { app: 'x' } }));
  const all = ours({ 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } });
  const found = (current: KubeObject, f: DriftFacts, want: KubeObject = body) => findDrift(want, current, f).map((d) => [fieldPath(d.segments), d.change, d.manager, d.operation]);

  const cases: { name: string; current: KubeObject; facts: DriftFacts; want: string[][]; body?: KubeObject }[] = [
    { name: 'a copy as written', current: managed(body, [all]), facts: facts(), want: [] },
    {
      name: 'a field another manager changed, with who and how',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [ours({ 'f:data': { 'f:b': {} } }), entry('kubectl-edit', { 'f:data': { 'f:a': {} } })]),
      facts: facts(),
      want: [['data.a', 'changed', 'kubectl-edit', 'Update']],
    },
    { name: 'a field removed: no one owns it, said while the record matches', current: managed({ ...body, data: { b: '2' } }, [ours({ 'f:data': { 'f:b': {} } })]), facts: facts(), want: [['data.a', 'removed', '', '']] },
    { name: 'the same absence after the source changed: a new field, not an edit', current: managed({ ...body, data: { b: '2' } }, [ours({ 'f:data': { 'f:b': {} } })]), facts: facts({ recordMatches: false }), want: [] },
    {
      name: 'a field the mark names stays drifted after the source changed, whoever owns it',
      current: managed({ ...body, data: { b: '2' } }, [ours({ 'f:data': { 'f:b': {} } })]),
      facts: facts({ recordMatches: false, marked: [['data', 'a']] }),
      want: [['data.a', 'removed', '', '']],
    },
    {
      name: 'an edited field after the source changed: still an edit (another manager owns it)',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [ours({ 'f:data': { 'f:b': {} } }), entry('hpa', { 'f:data': { 'f:a': {} } }, 'Apply')]),
      facts: facts({ recordMatches: false }),
      want: [['data.a', 'changed', 'hpa', 'Apply']],
    },
    {
      name: 'a field we share with another manager that differs: theirs too, so an edit',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [all, entry('other', { 'f:data': { 'f:a': {} } }, 'Apply')]),
      facts: facts({ recordMatches: false }),
      want: [['data.a', 'changed', 'other', 'Apply']],
    },
    { name: 'a field only we own that differs: the source changed, not an edit', current: managed({ ...body, data: { a: '0', b: '2' } }, [all]), facts: facts(), want: [] },
    { name: 'a whole map gone: each of its fields', current: managed({ ...body, metadata: { ...body.metadata, labels: {} } }, [ours({ 'f:data': { 'f:a': {}, 'f:b': {} } })]), facts: facts(), want: [['metadata.labels.app', 'removed', '', '']] },
    {
      name: 'our own bookkeeping edited: always put back, never kept as an edit',
      current: managed({ ...body, metadata: { ...body.metadata, annotations: { [RECORD]: body.metadata.annotations![RECORD]!, [ANNOTATIONS.source]: 'forged' } } }, [all]),
      facts: facts(),
      want: [],
    },
    {
      name: 'the drift mark’s own manager is nobody’s edit',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [ours({ 'f:data': { 'f:b': {} } }), entry('cluster-registry-drift', { 'f:data': { 'f:a': {} } }, 'Apply')]),
      facts: facts({ recordMatches: false }),
      want: [],
    },
    {
      name: 'an item of a list another manager edited (kubectl set image): the list, theirs',
      body: written({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { template: { spec: { containers: [{ name: 'app', image: 'v1' }] } } } }),
      current: managed({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { template: { spec: { containers: [{ name: 'app', image: 'v2' }] } } } }, [
        ours({ 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:name': {} } } } } } }),
        entry('kubectl-set', { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { 'f:image': {} } } } } } }),
      ]),
      facts: facts({ recordMatches: false }),
      want: [['spec.template.spec.containers', 'changed', 'kubectl-set', 'Update']],
    },
    {
      name: 'replicas set through the scale subresource (kubectl scale, an autoscaler): theirs',
      body: written({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { replicas: 2 } }),
      current: managed({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'ns' }, spec: { replicas: 5 } }, [ours({ 'f:spec': {} }), entry('kubectl', { 'f:spec': { 'f:replicas': {} } }, 'Update', 't', 'scale')]),
      facts: facts({ recordMatches: false }),
      want: [['spec.replicas', 'changed', 'kubectl', 'Update']],
    },
    {
      name: 'a field inside a map another manager owns whole (an atomic struct): theirs',
      current: managed({ ...body, metadata: { ...body.metadata, labels: { app: 'y' } } }, [ours({ 'f:data': { 'f:a': {}, 'f:b': {} } }), entry('other', { 'f:metadata': { 'f:labels': {} } })]),
      facts: facts({ recordMatches: false }),
      want: [['metadata.labels.app', 'changed', 'other', 'Update']],
    },
    {
      name: 'a field this API server does not keep (pruned by its schema): no one’s edit',
      current: managed({ ...body, data: { b: '2' } }, [ours({ 'f:data': { 'f:b': {} } })]),
      facts: facts({ unkept: new Set([JSON.stringify(['data', 'a'])]) }),
      want: [],
    },
    { name: 'a copy without this cluster’s record is not judged', current: managed({ ...body, data: { a: '9', b: '2' } }, [entry('manager', { 'f:data': { 'f:a': {}, 'f:b': {} } })]), facts: facts({ recorded: false }), want: [] },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(found(c.current, c.facts, c.body), c.want));

  it('takes the latest of several owners of a field', () => {
    const current = managed({ ...body, data: { a: '9', b: '2' } }, [entry('early', { 'f:data': { 'f:a': {} } }, 'Apply', '2026-01-01T00:00:00Z'), entry('late', { 'f:data': { 'f:a': {} } }, 'Apply', '2026-06-01T00:00:00Z')]);
    assert.equal(findDrift(body, current, facts())[0]?.manager, 'late');
  });

  it('ignores status, which is the cluster’s (or the source’s)', () => {
    const withStatus = { ...body, status: { phase: 'A' } } as KubeObject;
    assert.deepEqual(findDrift(withStatus, { ...body, status: { phase: 'B' } }, facts()), []);
  });

  it('learns from our own write what the API server does not keep', () => {
    const sent = cm({ a: '1', gone: 'x' });
    assert.deepEqual([...unkeptFields(sent, cm({ a: '1' }))], [JSON.stringify(['data', 'gone'])]);
    assert.equal(unkeptFields(sent, cm({ a: '1', gone: 'x' })).size, 0);
  });
});

describe('drift in words and marks', () => {
  const field = (path: string[], have: unknown = 'x', manager = 'kubectl-edit'): DriftedField => ({ segments: path, change: 'changed', manager, operation: 'Update', time: '2026-11-27T10:00:00Z', have });

  it('names paths as a reader writes them', () => {
    assert.equal(fieldPath(['spec', 'replicas']), 'spec.replicas');
    assert.equal(fieldPath(['metadata', 'labels', 'app.kubernetes.io/name']), 'metadata.labels["app.kubernetes.io/name"]');
    assert.equal(fieldPath(['data', '1st']), 'data["1st"]');
  });

  it('says who changed what and when, never what it holds, and counts what it leaves out', () => {
    assert.equal(describeDrift([field(['data', 'a'], 'secret-value')]), 'data.a (changed by kubectl-edit, Update, at 2026-11-27T10:00:00Z)');
    assert.equal(describeDrift([{ segments: ['data', 'b'], change: 'removed', manager: '', operation: '', time: '', have: undefined }]), 'data.b (removed)');
    const many = Array.from({ length: MAX_DRIFTED_FIELDS + 3 }, (_, i) => field(['data', `k${i}`], 'x', 'm'));
    const said = describeDrift(many);
    const more = Number(/; and (\d+) more$/.exec(said)?.[1]);
    assert.equal(said.split('; ').length - 1 + more, many.length, said);
    assert.ok(more >= 3);
  });

  it('keeps a mark and a description within their length, whatever a peer names its fields', () => {
    const long = Array.from({ length: MAX_DRIFTED_FIELDS }, (_, i) => field(['data', `${'k'.repeat(200)}${i}`]));
    assert.ok(markText('Report', long).length <= MAX_MARK_LENGTH);
    assert.ok(describeDrift(long).length <= MAX_MARK_LENGTH);
  });

  it('keeps the edits in what Report applies: each drifted field as it is now, a removed one left out, nothing else touched', () => {
    const body = cm({ a: '1', b: '2', gone: 'x' }, { labels: { app: 'x', keep: 'y' } });
    const out = aroundDrift(body, [field(['data', 'a'], 'edited'), field(['metadata', 'labels', 'app'], 'z'), { ...field(['data', 'gone']), change: 'removed', have: undefined }]);
    assert.deepEqual(out, cm({ a: 'edited', b: '2' }, { labels: { app: 'z', keep: 'y' } }));
    assert.deepEqual(body.data, { a: '1', b: '2', gone: 'x' }, 'the body given is not changed');
  });

  it('leaves given fields out of a body', () => {
    assert.deepEqual(withoutFields(cm({ a: '1', b: '2' }), [{ segments: ['data', 'a'] }, { segments: ['spec', 'none'] }]), cm({ b: '2' }));
  });

  it('reads back the mark it writes, and a mark edited by hand as text only', () => {
    const mark = { text: 't', fingerprint: 'f', fields: [['data', 'a']] };
    assert.deepEqual(markOf(cm({}, { annotations: markAnnotations(mark) })), mark);
    assert.deepEqual(markOf(cm({}, { annotations: { [ANNOTATIONS.drifted]: 't', [ANNOTATIONS.driftedFields]: 'edited' } })), { text: 't' });
    assert.deepEqual(markOf(cm({})), {});
  });
});

describe('what each drift policy does', () => {
  const fields: DriftedField[] = [{ segments: ['data', 'a'], change: 'changed', manager: 'kubectl-edit', operation: 'Update', time: 't', have: 'edited' }];
  const other: DriftedField[] = [{ ...fields[0]!, have: 'edited again' }];
  const fp = planDrift('Report', fields, {}).mark;
  assert.ok(typeof fp === 'object');
  const markedAs = (policy: DriftPolicy, f = fields): DriftMark => {
    const m = planDrift(policy, f, {}).mark;
    assert.ok(typeof m === 'object');
    return m;
  };
  const wanted = (policy: DriftPolicy) => ({ text: markText(policy, fields), fingerprint: fp.fingerprint, fields: [['data', 'a']] });
  const none: DriftMark = {};
  const cases: { name: string; policy: DriftPolicy; fields: DriftedField[]; mark: DriftMark; want: ReturnType<typeof planDrift> }[] = [
    { name: 'no drift, no mark: the usual write', policy: 'Report', fields: [], mark: none, want: { apply: 'all', mark: 'keep', report: false, drifted: false } },
    { name: 'no drift any more: an old mark goes', policy: 'Pause', fields: [], mark: markedAs('Pause'), want: { apply: 'all', mark: 'clear', report: false, drifted: false } },
    { name: 'Revert puts it back and says so, every time', policy: 'Revert', fields, mark: none, want: { apply: 'all', mark: 'keep', report: true, drifted: false } },
    { name: 'Revert after Report: the mark goes too', policy: 'Revert', fields, mark: markedAs('Report'), want: { apply: 'all', mark: 'clear', report: true, drifted: false } },
    { name: 'Report marks a new edit and says it', policy: 'Report', fields, mark: none, want: { apply: 'around', mark: wanted('Report'), report: true, drifted: true } },
    { name: 'Report of a marked edit: applies around it, says nothing new', policy: 'Report', fields, mark: markedAs('Report'), want: { apply: 'around', mark: 'keep', report: false, drifted: true } },
    { name: 'Report of a further edit: marked and said again', policy: 'Report', fields, mark: markedAs('Report', other), want: { apply: 'around', mark: wanted('Report'), report: true, drifted: true } },
    { name: 'Report with its mark’s text removed: marked again (the edit is still there)', policy: 'Report', fields, mark: { ...markedAs('Report'), text: undefined }, want: { apply: 'around', mark: wanted('Report'), report: false, drifted: true } },
    { name: 'Pause marks a new edit and writes nothing else', policy: 'Pause', fields, mark: none, want: { apply: 'none', mark: wanted('Pause'), report: true, drifted: true } },
    { name: 'Pause of a marked edit: nothing at all', policy: 'Pause', fields, mark: markedAs('Pause'), want: { apply: 'none', mark: 'keep', report: false, drifted: true } },
    { name: 'Pause with its mark’s text removed: the sync goes on and puts the copy back', policy: 'Pause', fields, mark: { ...markedAs('Pause'), text: undefined }, want: { apply: 'all', mark: 'clear', report: false, drifted: false } },
    { name: 'Pause with its mark removed and edited again: a new edit, paused', policy: 'Pause', fields, mark: { ...markedAs('Pause', other), text: undefined }, want: { apply: 'none', mark: wanted('Pause'), report: true, drifted: true } },
    { name: 'Pause after Report: the mark says Pause now', policy: 'Pause', fields, mark: markedAs('Report'), want: { apply: 'none', mark: wanted('Pause'), report: false, drifted: true } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(planDrift(c.policy, c.fields, c.mark), c.want));
});

describe('which policy a copy gets', () => {
  const rule = (driftPolicy?: DriftPolicy, channel: 'rule' | 'registry' = 'rule') => ({
    object: { metadata: { name: 'r' } } as ResourceSyncRule,
    channel,
    spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [], ...(driftPolicy ? { driftPolicy } : {}) },
  });
  const source = (value?: string) => cm({}, value === undefined ? {} : { annotations: { [ANNOTATIONS.driftPolicy]: value } });

  it('is Revert by default, the rule’s when it says, and the source’s over the rule’s', () => {
    assert.deepEqual(driftPolicyOf(rule(), source()), { policy: 'Revert' });
    assert.deepEqual(driftPolicyOf(rule('Report'), source()), { policy: 'Report' });
    assert.deepEqual(driftPolicyOf(rule('Report'), source('Pause')), { policy: 'Pause' });
  });

  it("keeps the rule's for a value it does not know, naming it", () => {
    const out = driftPolicyOf(rule('Revert'), source('revert'));
    assert.equal(out.policy, 'Revert');
    assert.match(out.error ?? '', /"revert".*Revert, Report, Pause; the rule's Revert is used/);
  });

  it('is always Revert for the registry’s own rules, whatever a peer annotates', () => {
    assert.deepEqual(driftPolicyOf({ ...rule('Pause'), object: undefined }, source('Pause')), { policy: 'Revert' });
    assert.deepEqual(driftPolicyOf(rule('Pause', 'registry'), source('Pause')), { policy: 'Revert' });
  });
});

describe('an update of a copy, as its policy makes it', () => {
  const rule = { object: { metadata: { name: 'r', generation: 3 } } as ResourceSyncRule, channel: 'rule' as const, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [], driftPolicy: 'Report' as const } };
  const source = cm({ a: '1', b: '2' }, { resourceVersion: '40' });
  const ctx = { part: 'main' as const, localClusterID: LOCAL, unkept: new Set<string>() };
  const copy = managed({ ...written(cm({ a: '1', b: '2' })), data: { a: 'edited', b: '2' } }, [ours({ 'f:data': { 'f:b': {} } }), entry('hotfix', { 'f:data': { 'f:a': {} } })]);

  it('applies the source around the edit, marks it, and puts its record on what it applies', () => {
    const next = cm({ a: '1', b: '3' });
    const u = planCopyUpdate(rule, source, next, copy, ctx);
    assert.equal(u.policy, 'Report');
    assert.deepEqual(u.body?.data, { a: 'edited', b: '3' });
    assert.equal(parseSyncRecord(u.body?.metadata.annotations?.[RECORD])?.sourceVersion, '40');
    assert.ok(typeof u.plan.mark === 'object' && u.plan.mark.text.startsWith('Report: data.a (changed by hotfix'));
  });

  it('writes nothing of the record for a source version whose content is unchanged', () => {
    const next = cm({ a: '1', b: '2' });
    const u = planCopyUpdate(rule, { ...source, metadata: { ...source.metadata, resourceVersion: '41' } }, next, copy, ctx);
    assert.equal(u.body?.metadata.annotations?.[RECORD], copy.metadata.annotations?.[RECORD]);
  });
});

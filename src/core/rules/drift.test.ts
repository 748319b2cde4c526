import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject, ResourceSyncRule } from '../api/types.ts';
import { FIELD_MANAGER } from './apply.ts';
import {
  contentHash,
  describeDrift,
  driftFingerprint,
  driftPolicyOf,
  fieldPath,
  findDrift,
  markOf,
  markText,
  MAX_DRIFTED_FIELDS,
  MAX_MARK_LENGTH,
  parseSyncRecord,
  planDrift,
  recordOn,
  withoutFields,
  type DriftedField,
  type DriftMark,
  type DriftPolicy,
} from './drift.ts';

const RECORD = ANNOTATIONS.syncRecord;
const cm = (data: Record<string, unknown>, extra: Partial<KubeObject['metadata']> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', ...extra }, data });

/** The body we would apply, with a record of it as the copy carries. */
function written(body: KubeObject): KubeObject {
  const b = structuredClone(body);
  recordOn(b, undefined, { sourceVersion: '7', ruleGeneration: 2 });
  return b;
}

/** `current` with the given managedFields. */
const managed = (o: KubeObject, entries: object[]): KubeObject => ({ ...o, metadata: { ...o.metadata, managedFields: entries } });
const entry = (manager: string, fieldsV1: object, operation = 'Update', time = '2026-11-27T10:00:00Z') => ({ manager, operation, time, fieldsType: 'FieldsV1', fieldsV1 });

describe('the sync record', () => {
  it('keeps the copy’s record while what is written hashes the same, and writes a new one when it does not', () => {
    const body = written(cm({ a: '1' }));
    const again = cm({ a: '1' });
    assert.equal(recordOn(again, body, { sourceVersion: '8', ruleGeneration: 3 }), true);
    assert.equal(again.metadata.annotations?.[RECORD], body.metadata.annotations?.[RECORD], 'a new source version alone changes nothing');
    const changed = cm({ a: '2' });
    assert.equal(recordOn(changed, body, { sourceVersion: '9', ruleGeneration: 3 }), false);
    assert.deepEqual(parseSyncRecord(changed.metadata.annotations?.[RECORD]), { hash: contentHash(changed), sourceVersion: '9', ruleGeneration: 3 });
  });

  it('hashes the same whatever the key order, and leaves the record itself out', () => {
    const a = cm({ x: '1', y: { p: 1, q: 2 } });
    const b = cm({ y: { q: 2, p: 1 }, x: '1' });
    assert.equal(contentHash(a), contentHash(b));
    assert.equal(contentHash(written(a)), contentHash(a));
  });

  it('parses only records of its own shape', () => {
    for (const bad of [undefined, '', 'nope', '[]', 'null', '{"hash":1,"sourceVersion":"1","ruleGeneration":1}', '{"hash":"h","sourceVersion":"1"}']) assert.equal(parseSyncRecord(bad), undefined, String(bad));
  });
});

describe('finding drift', () => {
  const ours = (fields: object) => entry(FIELD_MANAGER, fields, 'Apply');
  const body = written(cm({ a: '1', b: '2' }, { labels: { app: 'x' } }));
  const fieldsOf = (found: DriftedField[]) => found.map((f) => [fieldPath(f.segments), f.change, f.manager, f.operation]);

  const cases: { name: string; current: KubeObject; recordMatches: boolean; want: (string | undefined)[][] }[] = [
    { name: 'a copy as written', current: managed(body, [ours({ 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } })]), recordMatches: true, want: [] },
    {
      name: 'a field another manager changed, with who and how',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [ours({ 'f:data': { 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } }), entry('kubectl-edit', { 'f:data': { 'f:a': {} } })]),
      recordMatches: true,
      want: [['data.a', 'changed', 'kubectl-edit', 'Update']],
    },
    {
      name: 'a field removed: no one owns it, said while the record matches',
      current: managed({ ...body, data: { b: '2' } }, [ours({ 'f:data': { 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } })]),
      recordMatches: true,
      want: [['data.a', 'removed', '', '']],
    },
    {
      name: 'the same absence after the source changed: a new field, not an edit',
      current: managed({ ...body, data: { b: '2' } }, [ours({ 'f:data': { 'f:b': {} } })]),
      recordMatches: false,
      want: [],
    },
    {
      name: 'an edited field after the source changed: still an edit (another manager owns it)',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [ours({ 'f:data': { 'f:b': {} } }), entry('hpa', { 'f:data': { 'f:a': {} } }, 'Apply')]),
      recordMatches: false,
      want: [['data.a', 'changed', 'hpa', 'Apply']],
    },
    {
      name: 'a field we still own that differs: the source changed, not an edit',
      current: managed({ ...body, data: { a: '0', b: '2' } }, [ours({ 'f:data': { 'f:a': {}, 'f:b': {} } })]),
      recordMatches: true,
      want: [],
    },
    {
      name: 'a whole map gone: each of its fields',
      current: managed({ ...body, metadata: { ...body.metadata, labels: {} } }, [ours({ 'f:data': { 'f:a': {}, 'f:b': {} } })]),
      recordMatches: true,
      want: [['metadata.labels.app', 'removed', '', '']],
    },
    {
      name: 'our own bookkeeping edited: always put back, never kept as an edit',
      current: managed({ ...body, metadata: { ...body.metadata, annotations: { [RECORD]: body.metadata.annotations![RECORD]!, [ANNOTATIONS.source]: 'forged' } } }, [ours({ 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } })]),
      recordMatches: true,
      want: [],
    },
    {
      name: 'the drift mark’s own manager is nobody’s edit',
      current: managed({ ...body, data: { a: '9', b: '2' } }, [ours({ 'f:data': { 'f:b': {} } }), entry('cluster-registry-drift', { 'f:data': { 'f:a': {} } }, 'Apply')]),
      recordMatches: false,
      want: [],
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(fieldsOf(findDrift(body, c.current, FIELD_MANAGER, c.recordMatches)), c.want));

  it('judges only copies that carry our record (one another writer made is taken over as before)', () => {
    const current = managed({ ...cm({ a: '9', b: '2' }, { labels: { app: 'x' } }) }, [entry('manager', { 'f:data': { 'f:a': {}, 'f:b': {} } })]);
    assert.deepEqual(findDrift(body, current, FIELD_MANAGER, false), []);
  });

  it('takes the latest of several owners of a field', () => {
    const current = managed({ ...body, data: { a: '9', b: '2' } }, [entry('early', { 'f:data': { 'f:a': {} } }, 'Apply', '2026-01-01T00:00:00Z'), entry('late', { 'f:data': { 'f:a': {} } }, 'Apply', '2026-06-01T00:00:00Z')]);
    assert.equal(findDrift(body, current, FIELD_MANAGER, true)[0]?.manager, 'late');
  });

  it('ignores status, which is the cluster’s (or the source’s)', () => {
    const withStatus = { ...body, status: { phase: 'A' } } as KubeObject;
    assert.deepEqual(findDrift(withStatus, { ...body, status: { phase: 'B' } }, FIELD_MANAGER, true), []);
  });
});

describe('drift in words and marks', () => {
  const field = (path: string[], manager = 'kubectl-edit'): DriftedField => ({ segments: path, change: 'changed', manager, operation: 'Update', time: '2026-11-27T10:00:00Z' });

  it('names paths as a reader writes them', () => {
    assert.equal(fieldPath(['spec', 'replicas']), 'spec.replicas');
    assert.equal(fieldPath(['metadata', 'labels', 'app.kubernetes.io/name']), 'metadata.labels["app.kubernetes.io/name"]');
    assert.equal(fieldPath(['data', '1st']), 'data["1st"]');
  });

  it('says who changed what and when, and counts what it leaves out', () => {
    assert.equal(describeDrift([field(['data', 'a'])]), 'data.a (changed by kubectl-edit, Update, at 2026-11-27T10:00:00Z)');
    assert.equal(describeDrift([{ segments: ['data', 'b'], change: 'removed', manager: '', operation: '', time: '' }]), 'data.b (removed)');
    const many = Array.from({ length: MAX_DRIFTED_FIELDS + 3 }, (_, i) => field(['data', `k${i}`]));
    assert.match(describeDrift(many), /; and 3 more$/);
  });

  it('keeps a mark within its length, whatever a peer names its fields', () => {
    const long = Array.from({ length: MAX_DRIFTED_FIELDS }, (_, i) => field(['data', `${'k'.repeat(200)}${i}`]));
    assert.ok(markText('Report', long).length <= MAX_MARK_LENGTH);
  });

  it('fingerprints what is at the drifted fields', () => {
    const f = [field(['data', 'a'])];
    assert.equal(driftFingerprint(cm({ a: '9' }), f), driftFingerprint(cm({ a: '9', b: 'x' }), f));
    assert.notEqual(driftFingerprint(cm({ a: '9' }), f), driftFingerprint(cm({ a: '8' }), f));
  });

  it('leaves the drifted fields out of what Report applies, and nothing else', () => {
    const body = cm({ a: '1', b: '2' }, { labels: { app: 'x', keep: 'y' } });
    const out = withoutFields(body, [field(['data', 'a']), field(['metadata', 'labels', 'app']), field(['spec', 'gone'])]);
    assert.deepEqual(out, cm({ b: '2' }, { labels: { keep: 'y' } }));
    assert.deepEqual(body.data, { a: '1', b: '2' }, 'the body given is not changed');
  });

  it('reads a copy’s mark', () => {
    assert.deepEqual(markOf(cm({}, { annotations: { [ANNOTATIONS.drifted]: 't', [ANNOTATIONS.driftFingerprint]: 'f' } })), { text: 't', fingerprint: 'f' });
    assert.deepEqual(markOf(cm({})), { text: undefined, fingerprint: undefined });
  });
});

describe('what each drift policy does', () => {
  const fields: DriftedField[] = [{ segments: ['data', 'a'], change: 'changed', manager: 'kubectl-edit', operation: 'Update', time: 't' }];
  const none: DriftMark = {};
  const markedAs = (policy: DriftPolicy, fingerprint = 'fp'): DriftMark => ({ text: markText(policy, fields), fingerprint });
  const cases: { name: string; policy: DriftPolicy; fields: DriftedField[]; mark: DriftMark; want: ReturnType<typeof planDrift> }[] = [
    { name: 'no drift, no mark: the usual write', policy: 'Report', fields: [], mark: none, want: { apply: 'all', mark: 'keep', report: false, drifted: false } },
    { name: 'no drift any more: an old mark goes', policy: 'Pause', fields: [], mark: markedAs('Pause'), want: { apply: 'all', mark: 'clear', report: false, drifted: false } },
    { name: 'Revert puts it back and says so, every time', policy: 'Revert', fields, mark: none, want: { apply: 'all', mark: 'keep', report: true, drifted: false } },
    { name: 'Revert after Report: the mark goes too', policy: 'Revert', fields, mark: markedAs('Report'), want: { apply: 'all', mark: 'clear', report: true, drifted: false } },
    { name: 'Report marks a new edit and says it', policy: 'Report', fields, mark: none, want: { apply: 'around', mark: { text: markText('Report', fields), fingerprint: 'fp' }, report: true, drifted: true } },
    { name: 'Report of a marked edit: applies around it, says nothing new', policy: 'Report', fields, mark: markedAs('Report'), want: { apply: 'around', mark: 'keep', report: false, drifted: true } },
    { name: 'Report of a further edit: marked and said again', policy: 'Report', fields, mark: markedAs('Report', 'older'), want: { apply: 'around', mark: { text: markText('Report', fields), fingerprint: 'fp' }, report: true, drifted: true } },
    { name: 'Report with its mark removed: marked again (the edit is still there)', policy: 'Report', fields, mark: { fingerprint: 'fp' }, want: { apply: 'around', mark: { text: markText('Report', fields), fingerprint: 'fp' }, report: false, drifted: true } },
    { name: 'Pause marks a new edit and writes nothing else', policy: 'Pause', fields, mark: none, want: { apply: 'none', mark: { text: markText('Pause', fields), fingerprint: 'fp' }, report: true, drifted: true } },
    { name: 'Pause of a marked edit: nothing at all', policy: 'Pause', fields, mark: markedAs('Pause'), want: { apply: 'none', mark: 'keep', report: false, drifted: true } },
    { name: 'Pause with its mark removed: the sync goes on and puts the copy back', policy: 'Pause', fields, mark: { fingerprint: 'fp' }, want: { apply: 'all', mark: 'clear', report: false, drifted: false } },
    { name: 'Pause with its mark removed and edited again: a new edit, paused', policy: 'Pause', fields, mark: { fingerprint: 'older' }, want: { apply: 'none', mark: { text: markText('Pause', fields), fingerprint: 'fp' }, report: true, drifted: true } },
    { name: 'Pause after Report: the mark says Pause now', policy: 'Pause', fields, mark: markedAs('Report'), want: { apply: 'none', mark: { text: markText('Pause', fields), fingerprint: 'fp' }, report: false, drifted: true } },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(planDrift(c.policy, c.fields, 'fp', c.mark), c.want));
});

describe('which policy a copy gets', () => {
  const rule = (driftPolicy?: DriftPolicy) => ({ object: { metadata: { name: 'r' } } as ResourceSyncRule, spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [], ...(driftPolicy ? { driftPolicy } : {}) } });
  const source = (value?: string) => cm({}, value === undefined ? {} : { annotations: { [ANNOTATIONS.driftPolicy]: value } });

  it('is Revert by default, the rule’s when it says, and the source’s over the rule’s', () => {
    assert.deepEqual(driftPolicyOf(rule(), source()), { policy: 'Revert' });
    assert.deepEqual(driftPolicyOf(rule('Report'), source()), { policy: 'Report' });
    assert.deepEqual(driftPolicyOf(rule('Report'), source('Pause')), { policy: 'Pause' });
  });

  it('refuses a value it does not know, naming it', () => {
    const out = driftPolicyOf(rule(), source('revert'));
    assert.ok('error' in out);
    assert.match(out.error, /"revert".*Revert, Report, Pause/);
  });

  it('is always Revert for the registry’s own rules, whatever a peer annotates', () => {
    assert.deepEqual(driftPolicyOf({ object: undefined, spec: rule('Pause').spec }, source('Pause')), { policy: 'Revert' });
  });
});

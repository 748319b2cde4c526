import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { DEFAULT_GENERATION_KEYS as KEYS } from './desired.ts';
import { namespaceFor, removalOf } from './namespaces.ts';
import { hubReport, mergePatch } from './report.ts';

type Obj = KubeObject & { status?: unknown };

const hub = (status: unknown, echo: Record<string, string> = {}, uid = 'hub-uid'): Obj => ({ apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db-eu1', namespace: 'team-eu1', uid, generation: 5, annotations: echo }, ...(status !== undefined ? { status } : {}) });
const local = (status: unknown, o: { generation?: number; applied?: string; origin?: string } = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'db', generation: o.generation ?? 2, annotations: { [HUB_ANNOTATIONS.origin]: o.origin ?? 'team-eu1/db-eu1/hub-uid', ...(o.applied ? { [HUB_ANNOTATIONS.appliedGeneration]: o.applied } : {}) } },
  ...(status !== undefined ? { status } : {}),
});

describe('what a spoke reports to the hub', () => {
  it('patches the status where it differs, and echoes the hub generation applied once the status describes it', () => {
    const r = hubReport(hub({ phase: 'Pending', old: 'x' }), local({ phase: 'Ready', observedGeneration: 2 }, { applied: '4' }), KEYS, 'spoke-id');
    assert.deepEqual(r.statusPatch, { phase: 'Ready', old: null, observedGeneration: 2 }, 'a field the spoke dropped goes too');
    assert.deepEqual(r.annotations, { [KEYS.local]: '2', [KEYS.remote]: '4', [HUB_ANNOTATIONS.reportedBy]: 'spoke-id' });
  });

  it('does not vouch for a hub generation whose spec the status does not describe yet', () => {
    const r = hubReport(hub({ phase: 'Ready' }, { [KEYS.remote]: '3' }), local({ phase: 'Ready', observedGeneration: 1 }, { generation: 2, applied: '4' }), KEYS);
    assert.deepEqual(r.annotations, { [KEYS.local]: '1' }, 'the remote echo stays at 3 until the status observes generation 2');
  });

  it('writes nothing when the hub already shows it', () => {
    const status = { phase: 'Ready', observedGeneration: 2 };
    assert.deepEqual(hubReport(hub(status, { [KEYS.remote]: '4', [KEYS.local]: '2', [HUB_ANNOTATIONS.reportedBy]: 's' }), local({ ...status }, { applied: '4' }), KEYS, 's'), {});
  });

  it("refuses to report on another spoke's object, and says nothing about a hub object it was not made from", () => {
    assert.match(hubReport(hub({}, { [HUB_ANNOTATIONS.reportedBy]: 'other' }), local({ phase: 'Ready' }), KEYS, 'me').refused ?? '', /reported by another cluster \(other\)/);
    assert.deepEqual(hubReport(hub({}, {}, 'new-uid'), local({ phase: 'Ready' }, { applied: '1' }), KEYS), {}, 'the hub object was deleted and made again: the old status is not the new one');
  });

  it("takes the spoke's metadata generation where its kind has no observedGeneration, and echoes to the keys configured", () => {
    const keys = { remote: 'example.com/remote', local: 'example.com/local' };
    const r = hubReport(hub({ phase: 'Ready' }, { [KEYS.remote]: '4' }), local({ phase: 'Ready' }, { generation: 7, applied: '5' }), keys);
    assert.equal(r.statusPatch, undefined);
    assert.deepEqual(r.annotations, { 'example.com/local': '7', 'example.com/remote': '5' });
  });

  it('clears a status the spoke no longer has', () => {
    assert.deepEqual(hubReport(hub({ phase: 'Ready' }), local(undefined), KEYS).statusPatch, { phase: null });
    assert.equal(hubReport(hub(undefined), local(undefined), KEYS).statusPatch, undefined);
  });

  it('makes merge patches that turn one value into the other, nested maps field by field and lists whole', () => {
    assert.equal(mergePatch({ a: 1 }, { a: 1 }), undefined);
    assert.deepEqual(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2], gone: true }, { a: { b: 1, c: 3, d: 4 }, l: [1] }), { gone: null, a: { c: 3, d: 4 }, l: [1] });
    assert.deepEqual(mergePatch({ a: { b: 1 } }, { a: 'text' }), { a: 'text' });
  });
});

describe('namespaces of the hub sync', () => {
  const place = { namespace: 'team', name: 'db' };

  it('deletes a namespace only with the object it was created for, once nothing else of the rule is in it', () => {
    const ns = namespaceFor('databases', place);
    assert.equal(ns.metadata.name, 'team');
    assert.equal(removalOf('databases', place, ns, 0), 'namespace');
    assert.equal(removalOf('databases', place, ns, 1), 'object', 'other objects of the rule still live there');
    assert.equal(removalOf('databases', { namespace: 'team', name: 'other' }, ns, 0), 'object', 'another object in the namespace it made');
    assert.equal(removalOf('other-rule', place, ns, 0), 'object', "another rule's namespace");
    assert.equal(removalOf('databases', place, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } }, 0), 'object', 'a namespace someone else made');
    assert.equal(removalOf('databases', place, undefined, 0), 'object');
    assert.equal(removalOf('databases', { name: 'db' }, ns, 0), 'object', 'a cluster-scoped object has no namespace to remove');
  });
});

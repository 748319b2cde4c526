import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import { DEFAULT_GENERATION_KEYS as KEYS } from './desired.ts';
import { namespaceFor, removalOf } from './namespaces.ts';
import { hubReport } from './report.ts';

type Obj = KubeObject & { status?: unknown };

const hub = (status: unknown, echo: Record<string, string> = {}): Obj => ({ apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'db-eu1', generation: 5, annotations: echo }, ...(status !== undefined ? { status } : {}) });
const local = (status: unknown, o: { generation?: number; applied?: string } = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Database',
  metadata: { name: 'db', generation: o.generation ?? 2, annotations: o.applied ? { [HUB_ANNOTATIONS.appliedGeneration]: o.applied } : {} },
  ...(status !== undefined ? { status } : {}),
});

describe('what a spoke reports to the hub', () => {
  it('writes the status when it differs, and the generations it answers: the hub generation applied, the spoke generation observed', () => {
    const r = hubReport(hub({ phase: 'Pending' }), local({ phase: 'Ready', observedGeneration: 2 }, { applied: '4' }), KEYS);
    assert.deepEqual(r.status, { phase: 'Ready', observedGeneration: 2 });
    assert.deepEqual(r.annotations, { [KEYS.remote]: '4', [KEYS.local]: '2' });
  });

  it('writes nothing when the hub already shows it', () => {
    const status = { phase: 'Ready', observedGeneration: 2 };
    assert.deepEqual(hubReport(hub(status, { [KEYS.remote]: '4', [KEYS.local]: '2' }), local({ ...status }, { applied: '4' }), KEYS), {});
  });

  it("takes the spoke's metadata generation where its kind has no observedGeneration, and echoes to the keys configured", () => {
    const keys = { remote: 'example.com/remote', local: 'example.com/local' };
    const r = hubReport(hub({ phase: 'Ready' }, { [KEYS.remote]: '4' }), local({ phase: 'Ready' }, { generation: 7, applied: '5' }), keys);
    assert.equal(r.status, undefined);
    assert.deepEqual(r.annotations, { 'example.com/remote': '5', 'example.com/local': '7' });
  });

  it('clears a status the spoke no longer has', () => {
    assert.deepEqual(hubReport(hub({ phase: 'Ready' }), local(undefined), KEYS).status, {});
    assert.equal(hubReport(hub(undefined), local(undefined), KEYS).status, undefined);
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

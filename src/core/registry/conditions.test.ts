import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLUSTER_CONDITIONS } from '../api/keys.ts';
import type { Cluster } from '../api/types.ts';
import { changedBeyondHeartbeats, conditionOf, HEARTBEAT_REFRESH_MS, setCondition } from './conditions.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

describe('setCondition', () => {
  it('adds a new condition without an event', () => {
    const r = setCondition([], conditionOf(CLUSTER_CONDITIONS.ready, true), t0);
    assert.equal(r.event, undefined);
    assert.deepEqual(r.conditions, [
      { type: 'Ready', status: 'True', reason: 'ClusterIsReady', message: 'cluster is ready', lastTransitionTime: t0.toISOString(), lastHeartbeatTime: t0.toISOString() },
    ]);
  });

  it('records a Warning when Ready turns False and moves the transition time', () => {
    const first = setCondition([], conditionOf(CLUSTER_CONDITIONS.ready, true), t0).conditions;
    const r = setCondition(first, conditionOf(CLUSTER_CONDITIONS.ready, false, 'peer down'), later(1000));
    assert.deepEqual(r.event, { type: 'Warning', reason: 'ClusterIsNotReady', message: 'peer down' });
    assert.equal(r.conditions[0]?.lastTransitionTime, later(1000).toISOString());
  });

  it('records a Warning when a condition first appears failed, and nothing when it first appears fine', () => {
    assert.deepEqual(setCondition([], conditionOf(CLUSTER_CONDITIONS.ready, false, 'bad secret'), t0).event, {
      type: 'Warning',
      reason: 'ClusterIsNotReady',
      message: 'bad secret',
    });
    assert.equal(setCondition([], conditionOf(CLUSTER_CONDITIONS.localConflict, false), t0).event, undefined);
    assert.equal(setCondition([], conditionOf(CLUSTER_CONDITIONS.localCluster, false), t0).event, undefined);
  });

  it('treats LocalConflict True as the failure', () => {
    const first = setCondition([], conditionOf(CLUSTER_CONDITIONS.localConflict, false), t0).conditions;
    assert.equal(setCondition(first, conditionOf(CLUSTER_CONDITIONS.localConflict, true), t0).event?.type, 'Warning');
    const conflicted = setCondition([], conditionOf(CLUSTER_CONDITIONS.localConflict, true), t0).conditions;
    assert.equal(setCondition(conflicted, conditionOf(CLUSTER_CONDITIONS.localConflict, false), t0).event?.type, 'Normal');
  });

  it('leaves an unchanged condition byte-identical until its heartbeat is stale', () => {
    const first = setCondition([], conditionOf(CLUSTER_CONDITIONS.ready, true), t0).conditions;
    assert.deepEqual(setCondition(first, conditionOf(CLUSTER_CONDITIONS.ready, true), later(HEARTBEAT_REFRESH_MS - 1)).conditions, first);
    const refreshed = setCondition(first, conditionOf(CLUSTER_CONDITIONS.ready, true), later(HEARTBEAT_REFRESH_MS)).conditions;
    assert.equal(refreshed[0]?.lastHeartbeatTime, later(HEARTBEAT_REFRESH_MS).toISOString());
    assert.equal(refreshed[0]?.lastTransitionTime, t0.toISOString());
  });

  it('renews the heartbeat but not the transition when only the message changes, and reports one failure turning into another', () => {
    const first = setCondition([], conditionOf(CLUSTER_CONDITIONS.clustersSynced, false, 'a'), t0).conditions;
    const r = setCondition(first, conditionOf(CLUSTER_CONDITIONS.clustersSynced, false, 'b'), later(1000));
    assert.deepEqual(r.event, { type: 'Warning', reason: 'ClustersAreNotSynced', message: 'b' });
    assert.equal(setCondition(r.conditions, conditionOf(CLUSTER_CONDITIONS.clustersSynced, false, 'b'), later(2000)).event, undefined, 'the same failure again is no news');
    const ok = setCondition([], conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, true), t0).conditions;
    assert.equal(setCondition(ok, { ...conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, true), message: 'other' }, later(1000)).event, undefined, 'a healthy condition changing its words is not');
    assert.equal(r.conditions[0]?.message, 'b');
    assert.equal(r.conditions[0]?.lastTransitionTime, t0.toISOString());
    assert.equal(r.conditions[0]?.lastHeartbeatTime, later(1000).toISOString());
  });

  it('keeps conditions sorted by type and never mutates its input', () => {
    let conds = setCondition([], conditionOf(CLUSTER_CONDITIONS.ready, true), t0).conditions;
    conds = setCondition(conds, conditionOf(CLUSTER_CONDITIONS.localCluster, true), t0).conditions;
    const frozen = structuredClone(conds);
    conds = setCondition(conds, conditionOf(CLUSTER_CONDITIONS.clusterMetadataSet, true), t0).conditions;
    assert.deepEqual(conds.map((c) => c.type), ['ClusterMetadataSet', 'LocalCluster', 'Ready']);
    assert.deepEqual(frozen.map((c) => c.type), ['LocalCluster', 'Ready']);
  });
});

describe('changedBeyondHeartbeats', () => {
  const base: Cluster = {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'Cluster',
    metadata: { name: 'c', resourceVersion: '1', labels: { a: '1' } },
    spec: { clusterID: 'id' },
    status: { state: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'R', message: '', lastTransitionTime: 't0', lastHeartbeatTime: 'h0' }] },
  };
  const withStatus = (over: Partial<NonNullable<Cluster['status']>>, heartbeat = 'h0', rv = '1'): Cluster => ({
    ...base,
    metadata: { ...base.metadata, resourceVersion: rv },
    status: { ...base.status, conditions: base.status?.conditions?.map((c) => ({ ...c, lastHeartbeatTime: heartbeat })), ...over },
  });
  it('ignores renewed heartbeats and new versions', () => {
    assert.equal(changedBeyondHeartbeats(base, withStatus({}, 'h1', '2')), false);
  });
  it('sees spec, labels, state and condition changes', () => {
    assert.equal(changedBeyondHeartbeats(base, { ...base, spec: { clusterID: 'other' } }), true);
    assert.equal(changedBeyondHeartbeats(base, { ...base, metadata: { ...base.metadata, labels: { a: '2' } } }), true);
    assert.equal(changedBeyondHeartbeats(base, withStatus({ state: 'Failed' }, 'h1')), true);
    assert.equal(changedBeyondHeartbeats(base, withStatus({ conditions: [{ type: 'Ready', status: 'False', reason: 'R', message: '', lastTransitionTime: 't1' }] })), true);
  });
});

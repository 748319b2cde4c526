import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster, ClusterCondition, ClusterStatus } from '../api/types.ts';
import { groupSyncProblems } from './group-sync.ts';
import { peerClusterStatus } from './peer-view.ts';
import { registryReaches } from './reach.ts';

const NOW = Date.parse('2026-11-28T01:00:00Z');
const at = (agoMs: number): string => new Date(NOW - agoMs).toISOString();
const cond = (type: string, heartbeat: string | undefined, extra: Partial<ClusterCondition> = {}): ClusterCondition => ({ type, status: 'True', ...(heartbeat !== undefined ? { lastHeartbeatTime: heartbeat } : {}), ...extra });
const cluster = (status: ClusterStatus | undefined): Cluster => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'c' }, spec: { clusterID: 'id' }, ...(status ? { status } : {}) });

describe('peerClusterStatus', () => {
  const cases: [string, ClusterStatus, ClusterStatus][] = [
    [
      'keeps the state and the condition with the newest heartbeat, of it only its type, status and heartbeat',
      { state: 'Ready', message: 'm', distribution: 'KIND', conditions: [cond('Ready', at(120_000), { reason: 'r', message: 'x'.repeat(100) }), cond('ClustersSynced', at(1000), { lastTransitionTime: at(9e6) })] },
      { state: 'Ready', conditions: [cond('ClustersSynced', at(1000))] },
    ],
    ['no conditions: none kept', { state: 'Ready', version: 'v1.36.3' }, { state: 'Ready' }],
    ['heartbeats that do not parse: none kept', { state: 'Ready', conditions: [cond('Ready', 'yesterday'), cond('Other', undefined)] }, { state: 'Ready' }],
    ['a tie: the first of them', { state: 'Ready', conditions: [cond('A', at(5)), cond('B', at(5))] }, { state: 'Ready', conditions: [cond('A', at(5))] }],
    ['no state: none', { conditions: [cond('Ready', at(5))] }, { conditions: [cond('Ready', at(5))] }],
    ['nothing: nothing', {}, {}],
  ];
  for (const [name, status, kept] of cases) {
    it(name, () => {
      assert.deepEqual(peerClusterStatus(status), kept);
      // What is read of it answers the same from what is kept.
      const whole = cluster(status);
      const cut = cluster(peerClusterStatus(status));
      for (const lostAt of [-Infinity, NOW - 60_000, NOW - 3]) assert.equal(registryReaches([cut], 'id', lostAt, NOW), registryReaches([whole], 'id', lostAt, NOW), `reaches, lost at ${lostAt}`);
      assert.deepEqual(groupSyncProblems([cluster(undefined)], [cut]), groupSyncProblems([cluster(undefined)], [whole]));
    });
  }
});

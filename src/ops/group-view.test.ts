import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, OUR_IMPLEMENTATION } from '../core/api/keys.ts';
import type { Cluster, ClusterFeature, Condition, ResourceSyncRule } from '../core/api/types.ts';
import { clusterRows, groupView, MAX_TEXT, ruleRows } from './group-view.ts';

const condition = (type: string, status: Condition['status'], message = ''): Condition => ({ type, status, message, reason: 'R', lastTransitionTime: '2026-01-01T00:00:00Z' });

function rule(name: string, o: { generation?: number; observed?: number; conditions?: Condition[]; clusters?: NonNullable<ResourceSyncRule['status']>['clusters']; group?: string } = {}): ResourceSyncRule {
  return {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'ResourceSyncRule',
    metadata: { name, generation: o.generation ?? 1 },
    spec: { groupVersionKind: { group: o.group ?? '', version: 'v1', kind: 'Secret' }, rules: [] },
    ...(o.conditions || o.clusters ? { status: { observedGeneration: o.observed ?? o.generation ?? 1, conditions: o.conditions ?? [], clusters: o.clusters ?? [] } } : {}),
  };
}

const allTrue = [condition('Valid', 'True'), condition('Permitted', 'True'), condition('Synced', 'True')];

describe('group view', () => {
  it('gives a rule the verdict of its first failing condition, in the order they gate each other', () => {
    const states = ruleRows([
      rule('a-synced', { conditions: allTrue }),
      rule('b-invalid', { conditions: [condition('Valid', 'False', 'bad template'), condition('Permitted', 'False', 'denied'), condition('Synced', 'False', 'errors')] }),
      rule('c-denied', { conditions: [condition('Valid', 'True'), condition('Permitted', 'False', 'cannot list'), condition('Synced', 'False', 'errors')] }),
      rule('d-errors', { conditions: [condition('Valid', 'True'), condition('Permitted', 'True'), condition('Synced', 'False', 'cluster2: boom')] }),
      rule('e-unreported'),
      rule('f-stale', { generation: 3, observed: 2, conditions: allTrue }),
      rule('g-unknown', { conditions: [condition('Valid', 'True'), condition('Synced', 'Unknown')] }),
    ]).map((r) => [r.name, r.state, r.message]);
    assert.deepEqual(states, [
      ['a-synced', 'Synced', ''],
      ['b-invalid', 'Invalid', 'bad template'],
      ['c-denied', 'Denied', 'cannot list'],
      ['d-errors', 'Errors', 'cluster2: boom'],
      ['e-unreported', 'Pending', 'no controller has reported on this rule yet'],
      ['f-stale', 'Pending', 'not reported on generation 3 yet'],
      ['g-unknown', 'Pending', ''],
    ]);
  });

  it('sums what a rule matched, synced and failed over its peers, and lists the peers by name', () => {
    const [r] = ruleRows([
      rule('r', {
        group: 'example.com',
        conditions: allTrue,
        clusters: [
          { name: 'z', state: 'Active', matched: 3, synced: 2, failed: 1, lastError: 'quota exceeded' },
          { name: 'a', state: 'Pending', message: 'feature not met' },
        ],
      }),
    ]);
    assert.equal(r?.kind, 'example.com/v1/Secret');
    assert.deepEqual([r?.matched, r?.synced, r?.failed], [3, 2, 1]);
    assert.deepEqual(
      r?.peers.map((p) => [p.name, p.state, p.matched, p.message, p.lastError]),
      [
        ['a', 'Pending', 0, 'feature not met', ''],
        ['z', 'Active', 3, '', 'quota exceeded'],
      ],
    );
    assert.equal(ruleRows([rule('core')])[0]?.kind, 'v1/Secret', 'the core group is left out, as kubectl shows it');
    const [long] = ruleRows([rule('long', { conditions: allTrue, clusters: [{ name: 'p', lastError: 'x'.repeat(40_000) }] })]);
    assert.equal(long?.peers[0]?.lastError.length, MAX_TEXT, 'a peer-written text is cut, so that no frame of the page grows without bound');
  });

  it('orders members by code unit and tells ours from other controllers, with the advice for the others', () => {
    const cluster = (name: string, ours: boolean): Cluster => ({
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name, ...(ours ? { annotations: { [ANNOTATIONS.implementation]: OUR_IMPLEMENTATION } } : {}) },
      spec: { clusterID: name },
      status: { state: 'Ready', type: 'Peer', conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-01T00:00:00Z' }] },
    });
    const clusters = [cluster('b', false), cluster('B', true), cluster('a', true)];
    assert.deepEqual(clusterRows(clusters).map((c) => [c.name, c.state, c.lastCheck]), [
      ['B', 'Ready', '2026-01-01T00:00:00Z'],
      ['a', 'Ready', '2026-01-01T00:00:00Z'],
      ['b', 'Ready', '2026-01-01T00:00:00Z'],
    ]);
    const feature: ClusterFeature = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'f' }, spec: { featureName: 'mesh' } };
    const view = groupView('me', { clusters, rules: [], features: [feature] });
    assert.equal(view.viewer, 'me');
    assert.deepEqual(view.features, [{ name: 'f', featureName: 'mesh' }]);
    assert.match(view.hint, /^b runs another controller/);
  });
});

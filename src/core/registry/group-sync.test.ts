import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster } from '../api/types.ts';
import { groupSyncFindings, groupSyncProblems } from './group-sync.ts';

const c = (name: string, id: string, state?: 'Ready' | 'Failed'): Cluster => ({ metadata: { name }, spec: { clusterID: id }, ...(state ? { status: { state } } : {}) });

describe('groupSyncProblems', () => {
  it('is empty when the peer knows every cluster under the same name and Ready', () => {
    assert.deepEqual(groupSyncProblems([c('a', '1'), c('b', '2')], [c('b', '2', 'Ready'), c('a', '1', 'Ready'), c('extra', '3')]), []);
  });
  it('reports missing, renamed and not-ready clusters in name order', () => {
    assert.deepEqual(groupSyncProblems([c('z', '9'), c('b', '2'), c('a', '1')], [c('a', '1', 'Failed'), c('bee', '2', 'Ready')]), [
      "cluster 'a' status is not ready",
      'cluster name mismatch b != bee',
      "cluster 'z' not found at remote side",
    ]);
  });
  it("takes a peer's Cluster without spec as no match", () => {
    const bare = { metadata: { name: 'a' } } as Cluster;
    assert.deepEqual(groupSyncProblems([c('a', '1')], [bare]), ["cluster 'a' not found at remote side"]);
  });
});

describe('groupSyncFindings', () => {
  it('reads back what a ClustersSynced message says of each cluster, joined as ours or as upstream joins it', () => {
    const problems = groupSyncProblems([c('z', '9'), c('b', '2'), c('a', '1')], [c('a', '1', 'Failed'), c('bee', '2', 'Ready')]);
    for (const message of [problems.join(', '), problems.join('; ')]) {
      const f = groupSyncFindings(message);
      assert.deepEqual([[...f.missing], [...f.renamed], [...f.notReady]], [['z'], [['b', 'bee']], ['a']], message);
    }
    // Upstream names the peer's Cluster where it is not Ready: read back, it is ours again.
    const upstream = groupSyncFindings("cluster name mismatch q != q2; cluster 'q2' status is not ready; cluster 'z' not found at remote side");
    assert.deepEqual([[...upstream.missing], [...upstream.renamed], [...upstream.notReady]], [['z'], [['q', 'q2']], ['q']]);
    // Ours names ours: here q2 is another member, which the peer does not see Ready.
    const ours = groupSyncFindings("cluster name mismatch q != q2, cluster 'q2' status is not ready");
    assert.deepEqual([[...ours.renamed], [...ours.notReady]], [[['q', 'q2']], ['q2']]);
    const none = groupSyncFindings('peer unreachable since 2026-01-01T00:00:00.000Z: cannot reach the peer: ECONNREFUSED');
    assert.deepEqual([none.missing.size, none.renamed.size, none.notReady.size], [0, 0, 0]);
  });
});

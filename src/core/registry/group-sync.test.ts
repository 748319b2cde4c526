import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster } from '../api/types.ts';
import { groupSyncProblems } from './group-sync.ts';

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

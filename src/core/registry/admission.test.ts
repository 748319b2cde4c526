import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster } from '../api/types.ts';
import { admitCluster } from './admission.ts';

const c = (name: string, id: string): Cluster => ({ metadata: { name }, spec: { clusterID: id } });
const LOCAL = 'local-uid';

describe('admitCluster', () => {
  it('allows the first local Cluster and any peer', () => {
    assert.deepEqual(admitCluster(c('a', LOCAL), [], LOCAL), { allowed: true });
    assert.deepEqual(admitCluster(c('p', 'other'), [c('a', LOCAL)], LOCAL), { allowed: true });
  });
  it('allows an update of the local Cluster itself', () => {
    assert.deepEqual(admitCluster(c('a', LOCAL), [c('a', LOCAL)], LOCAL), { allowed: true });
  });
  it('rejects a second Cluster for the local ID, even before either is marked Local', () => {
    const d = admitCluster(c('b', LOCAL), [c('a', LOCAL)], LOCAL);
    assert.equal(d.allowed, false);
    assert.ok(!d.allowed && d.code === 409 && /name a already exists with the same clusterID local-uid/.test(d.message));
  });
  it('rejects names that are not RFC 1123 and a missing clusterID', () => {
    for (const name of ['Upper', 'under_score', '-lead', 'trail-', '', 'a'.repeat(254)]) {
      const d = admitCluster(c(name, 'x'), [], LOCAL);
      assert.equal(d.allowed, false, name);
    }
    assert.equal(admitCluster({ metadata: { name: 'a' }, spec: { clusterID: '' } }, [], LOCAL).allowed, false);
    assert.equal(admitCluster(c('a.b-c', 'x'), [], LOCAL).allowed, true);
  });
});

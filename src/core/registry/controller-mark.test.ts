import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ANNOTATIONS, OUR_IMPLEMENTATION } from '../api/keys.ts';
import { runsOurs, upstreamMembersHint } from './controller-mark.ts';

test('a member runs ours only when its Cluster carries our mark with our value', () => {
  assert.equal(runsOurs({ metadata: { name: 'a', annotations: { [ANNOTATIONS.implementation]: OUR_IMPLEMENTATION } }, spec: { clusterID: 'a' } }), true);
  assert.equal(runsOurs({ metadata: { name: 'go' }, spec: { clusterID: 'go' } }), false);
  assert.equal(runsOurs({ metadata: { name: 'x', annotations: { [ANNOTATIONS.implementation]: 'go' } }, spec: { clusterID: 'x' } }), false);
});

test('the hint names the members and what the group needs', () => {
  assert.match(upstreamMembersHint(['go']), /^go runs another controller .*reader-for-upstream-peers\.yaml.*Secret before the Cluster.*--reader-token-ttl/);
  assert.match(upstreamMembersHint(['go1', 'go2']), /^go1, go2 run another controller/);
});

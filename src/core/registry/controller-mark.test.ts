import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ANNOTATIONS, OUR_IMPLEMENTATION } from '../api/keys.ts';
import type { Cluster } from '../api/types.ts';
import { runsOurs, upstreamMembersHint } from './controller-mark.ts';

test('a member runs ours only when its Cluster carries our mark with our value', () => {
  assert.equal(runsOurs({ metadata: { name: 'a', annotations: { [ANNOTATIONS.implementation]: OUR_IMPLEMENTATION } }, spec: { clusterID: 'a' } }), true);
  assert.equal(runsOurs({ metadata: { name: 'go' }, spec: { clusterID: 'go' } }), false);
  assert.equal(runsOurs({ metadata: { name: 'x', annotations: { [ANNOTATIONS.implementation]: 'go' } }, spec: { clusterID: 'x' } }), false);
});

test('the hint names the members that run another controller, once each, and what the group needs', () => {
  const member = (name: string, ours: boolean): Cluster => ({ metadata: { name, ...(ours ? { annotations: { [ANNOTATIONS.implementation]: OUR_IMPLEMENTATION } } : {}) }, spec: { clusterID: name } });
  assert.match(upstreamMembersHint([member('a', true), member('go', false)]) ?? '', /^go runs another controller .*reader-for-upstream-peers\.yaml.*Secret before the Cluster.*--reader-token-ttl/);
  assert.match(upstreamMembersHint([member('go2', false), member('go1', false), member('go2', false)]) ?? '', /^go1, go2 run another controller/);
  assert.equal(upstreamMembersHint([member('a', true), member('b', true)]), undefined);
});

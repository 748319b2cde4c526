import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../api/keys.ts';
import { formatSourceIdentity } from '../api/source-identity.ts';
import type { KubeObject } from '../api/types.ts';
import { decideCopyFate, KEEP_REASONS as K, ORPHAN_REASONS as O, type CopyFacts, type RecordedSource } from './orphans.ts';

const L = 'local';
const P = 'peer';
const OWNER = 'owner';

function copy(opts: { owner?: string; source?: string; disabled?: boolean } = {}): KubeObject {
  const annotations: Record<string, string> = { [ANNOTATIONS.ownership]: opts.owner ?? OWNER };
  if (opts.source !== '') annotations[ANNOTATIONS.source] = formatSourceIdentity({ clusterID: opts.source ?? P, group: '', kind: 'Secret', namespace: 'ns', name: 's', rule: 'r' });
  if (opts.disabled) annotations[ANNOTATIONS.resourceSyncDisabled] = '';
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns', annotations } };
}

const live: RecordedSource = { rule: 'present', binding: 'active', object: 'matches' };
function facts(over: Partial<CopyFacts> = {}): CopyFacts {
  return { localClusterID: L, registeredClusterIDs: new Set([L, P, OWNER]), alivePeerIDs: new Set([P, OWNER]), recorded: live, alternativeSource: false, recordedPeerReachesOwner: true, ...over };
}

describe('decideCopyFate', () => {
  it('keeps a copy whose source still delivers it', () => {
    assert.deepEqual(decideCopyFate(copy(), facts()), { orphan: false, reason: K.live });
  });
  it('never collects what is not ours, sync-disabled or owned here', () => {
    assert.equal(decideCopyFate(copy({ source: '' }), facts()).reason, K.notOurs);
    assert.equal(decideCopyFate(copy(), facts({ recorded: undefined })).reason, K.notOurs);
    assert.equal(decideCopyFate(copy({ disabled: true }), facts({ recorded: { ...live, rule: 'deleted' } })).reason, K.syncDisabled);
    assert.equal(decideCopyFate(copy({ owner: L }), facts()).reason, K.locallyOwned);
  });
  it('never collects because a source is unreachable or not known yet', () => {
    const down = facts({ alivePeerIDs: new Set([OWNER]), recorded: { rule: 'present', binding: 'active', object: 'absent' } });
    assert.deepEqual(decideCopyFate(copy(), down), { orphan: false, reason: K.sourceUnreachable });
    assert.equal(decideCopyFate(copy(), facts({ recorded: { ...live, binding: 'starting' } })).reason, K.notYetKnown);
    assert.equal(decideCopyFate(copy(), facts({ recorded: { ...live, object: 'unknown' } })).reason, K.notYetKnown);
    assert.equal(decideCopyFate(copy(), facts({ recorded: { ...live, rule: 'invalid' } })).reason, K.ruleInvalid);
    // A peer that passed on the owner's object and lost it speaks for it only while it reaches the owner.
    assert.equal(decideCopyFate(copy(), facts({ recordedPeerReachesOwner: false, recorded: { ...live, object: 'absent' } })).reason, K.sourceUnreachable);
  });
  it('collects copies of a departed owner, even when peers still hold them', () => {
    const f = facts({ registeredClusterIDs: new Set([L, P]), alternativeSource: true });
    assert.deepEqual(decideCopyFate(copy(), f), { orphan: true, reason: O.ownerLeftGroup });
  });
  it('keeps credentials a local Cluster reads, whatever else holds', () => {
    for (const over of [{ registeredClusterIDs: new Set([L, P]) }, { recorded: { ...live, rule: 'deleted' as const } }, { recorded: { ...live, object: 'absent' as const } }]) {
      assert.deepEqual(decideCopyFate(copy(), facts({ ...over, inUse: true })), { orphan: false, reason: K.inUse });
    }
  });
  const orphanCases: [string, Partial<CopyFacts>, string][] = [
    ['peer left', { registeredClusterIDs: new Set([L, OWNER]) }, O.peerLeftGroup],
    ['rule deleted', { recorded: { ...live, rule: 'deleted' } }, O.ruleDeleted],
    ['feature withdrawn', { recorded: { ...live, binding: 'featuresUnmet' } }, O.featureWithdrawn],
    ['source deleted', { recorded: { ...live, object: 'absent' } }, O.sourceDeleted],
    ['source stopped matching', { recorded: { ...live, object: 'notMatching' } }, O.sourceNoLongerMatches],
  ];
  for (const [what, over, reason] of orphanCases) {
    it(`collects after: ${what}, unless another source delivers the copy`, () => {
      assert.deepEqual(decideCopyFate(copy(), facts(over)), { orphan: true, reason });
      assert.deepEqual(decideCopyFate(copy(), facts({ ...over, alternativeSource: true })), { orphan: false, reason: K.changingHands });
    });
  }
});

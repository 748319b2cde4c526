import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, LABELS } from '../api/keys.ts';
import { formatSourceIdentity, type SourceIdentity } from '../api/source-identity.ts';
import type { KubeObject } from '../api/types.ts';
import {
  decideDelete,
  decideWrite,
  DECISION_REASONS as R,
  ownedByAnotherAliveCluster,
  unclaimedOverOwnDelivery,
  type Decision,
  type OwnershipFacts,
} from './ownership.ts';

const L = 'local-uid';
const P = 'peer-uid'; // synced-from
const A = 'alive-other-uid';
const D = 'dead-other-uid';
const OWNERS = ['', L, P, A, D] as const;
type Owner = (typeof OWNERS)[number];

function facts(peerAlive: boolean): OwnershipFacts {
  return { localClusterID: L, syncedFromClusterID: P, alivePeerIDs: new Set(peerAlive ? [P, A] : [A]) };
}

function obj(opts: { owner: Owner; syncDisabled?: boolean; terminating?: boolean; source?: SourceIdentity }): KubeObject {
  const annotations: Record<string, string> = {};
  const labels: Record<string, string> = {};
  if (opts.owner !== '') annotations[ANNOTATIONS.ownership] = labels[LABELS.ownership] = opts.owner;
  // Presence is what counts, even with "false".
  if (opts.syncDisabled) annotations[ANNOTATIONS.resourceSyncDisabled] = 'false';
  if (opts.source) annotations[ANNOTATIONS.source] = formatSourceIdentity(opts.source);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'ns', annotations, labels, ...(opts.terminating ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
  };
}

const bools = [false, true] as const;

describe('ownedByAnotherAliveCluster', () => {
  it('is true only for a non-empty, alive owner other than the synced-from peer', () => {
    const f = facts(true);
    assert.equal(ownedByAnotherAliveCluster('', f), false);
    assert.equal(ownedByAnotherAliveCluster(P, f), false);
    assert.equal(ownedByAnotherAliveCluster(A, f), true);
    assert.equal(ownedByAnotherAliveCluster(D, f), false);
    assert.equal(ownedByAnotherAliveCluster(L, f), false);
  });
});

describe('decideWrite: create (local object absent)', () => {
  // Upstream's create decisions, in order, plus ours.
  function expected(peerAlive: boolean, desiredOwner: Owner, disabled: boolean, syncStatus: boolean): Decision {
    // Ours: never created from an unreachable peer's last word.
    if (!peerAlive) return { action: 'none', reason: R.sourceUnreachable, writeStatus: false };
    if (disabled) return { action: 'none', reason: R.syncDisabledOnSource, writeStatus: false };
    // Ours: a copy whose owner a mutation removed is never written.
    if (desiredOwner === '') return { action: 'none', reason: R.noOwner, writeStatus: false };
    if (desiredOwner === L) return { action: 'none', reason: R.ownedByLocalCluster, writeStatus: false };
    if (desiredOwner === A) return { action: 'none', reason: R.ownedByAnotherAliveCluster, writeStatus: false };
    return { action: 'create', reason: R.create, writeStatus: syncStatus };
  }
  for (const peerAlive of bools)
    for (const owner of OWNERS)
      for (const disabled of bools)
        for (const syncStatus of bools) {
          it(`peerAlive=${peerAlive} desiredOwner=${owner || '-'} disabled=${disabled} syncStatus=${syncStatus}`, () => {
            const d = decideWrite(facts(peerAlive), obj({ owner, syncDisabled: disabled }), undefined, syncStatus);
            assert.deepEqual(d, expected(peerAlive, owner, disabled, syncStatus));
          });
        }
});

describe('decideWrite: update (local object present)', () => {
  function expected(o: { cur: Owner; des: Owner; curDisabled: boolean; desDisabled: boolean; terminating: boolean; syncStatus: boolean }): Decision {
    const none = (reason: Decision['reason']): Decision => ({ action: 'none', reason, writeStatus: false });
    if (o.terminating) return none(R.localObjectTerminating);
    if (o.curDisabled) return none(R.syncDisabledLocally);
    if (o.cur === '') return none(R.locallyOwned);
    if (o.cur === A) return none(R.ownedByAnotherAliveCluster);
    if (o.des === L) return none(R.ownedByLocalCluster);
    if (o.des === '') return none(R.noOwner);
    // Ours: the owner of a copy never changes while it is in the group.
    if (o.des !== o.cur) return none(R.ownerWouldChange);
    // The source's sync-disabled annotation blocks creation only (upstream).
    return { action: 'update', reason: R.update, writeStatus: o.syncStatus };
  }
  for (const peerAlive of bools)
    for (const cur of OWNERS)
      for (const des of OWNERS)
        for (const curDisabled of bools)
          for (const desDisabled of bools)
            for (const terminating of bools)
              for (const syncStatus of bools) {
                const o = { cur, des, curDisabled, desDisabled, terminating, syncStatus };
                it(`peerAlive=${peerAlive} ${JSON.stringify(o)}`, () => {
                  const d = decideWrite(
                    facts(peerAlive),
                    obj({ owner: des, syncDisabled: desDisabled }),
                    obj({ owner: cur, syncDisabled: curDisabled, terminating }),
                    syncStatus,
                  );
                  assert.deepEqual(d, expected(o));
                });
              }

  it('never writes status when the spec write is refused', () => {
    const d = decideWrite(facts(true), obj({ owner: P }), obj({ owner: '' }), true);
    assert.equal(d.action, 'none');
    assert.equal(d.writeStatus, false);
  });

  it('lets any peer take over a copy whose owner is dead', () => {
    const d = decideWrite(facts(true), obj({ owner: D }), obj({ owner: D }), false);
    assert.equal(d.action, 'update');
  });

  it('never hands a copy to another owner while its owner is in the group, only once it left', () => {
    assert.equal(decideWrite(facts(true), obj({ owner: P }), obj({ owner: D }), false).reason, R.ownerWouldChange);
    assert.equal(decideWrite({ ...facts(true), ownerRegistered: (id) => id !== D }, obj({ owner: P }), obj({ owner: D }), false).action, 'update');
  });

  it('refuses a copy whose ownership label a mutation removed (it could not be found again)', () => {
    const desired = obj({ owner: P });
    delete desired.metadata.labels![LABELS.ownership];
    assert.equal(decideWrite(facts(true), desired, undefined, false).reason, R.noOwner);
  });

  describe('the recorded source is sticky while it lives', () => {
    const fromP: SourceIdentity = { clusterID: P, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm', rule: 'r' };
    const fromA: SourceIdentity = { ...fromP, clusterID: A };
    const withLive = (live: boolean): OwnershipFacts => ({ ...facts(true), recordedSourceLive: () => live });

    it('refuses to rewrite a copy another live source delivers', () => {
      const d = decideWrite(withLive(true), obj({ owner: D, source: fromP }), obj({ owner: D, source: fromA }), true);
      assert.deepEqual(d, { action: 'none', reason: R.deliveredByAnotherSource, writeStatus: false });
    });
    it('takes over once the recorded source cannot deliver it any more', () => {
      assert.equal(decideWrite(withLive(false), obj({ owner: D, source: fromP }), obj({ owner: D, source: fromA }), false).action, 'update');
    });
    it('applies to another object or another rule of the same peer too', () => {
      for (const recorded of [{ ...fromP, name: 'other' }, { ...fromP, rule: 's' }]) {
        assert.equal(decideWrite(withLive(true), obj({ owner: D, source: fromP }), obj({ owner: D, source: recorded }), false).reason, R.deliveredByAnotherSource);
      }
    });
    it('lets the owner itself take over from a copy of its object, but not from itself through another rule', () => {
      assert.equal(decideWrite(withLive(true), obj({ owner: P, source: fromP }), obj({ owner: P, source: fromA }), false).action, 'update');
      // From a dead owner's last listing: only once the member that passed it on no longer can.
      const deadOwner = (live: boolean): OwnershipFacts => ({ ...facts(false), recordedSourceLive: () => live });
      assert.equal(decideWrite(deadOwner(true), obj({ owner: P, source: fromP }), obj({ owner: P, source: fromA }), false).reason, R.deliveredByAnotherSource);
      assert.equal(decideWrite(deadOwner(false), obj({ owner: P, source: fromP }), obj({ owner: P, source: fromA }), false).action, 'update');
      const otherRule: SourceIdentity = { ...fromP, rule: 'other' };
      assert.equal(decideWrite(withLive(true), obj({ owner: P, source: fromP }), obj({ owner: P, source: otherRule }), false).reason, R.deliveredByAnotherSource);
    });
    it('keeps another rule of the same peer from taking over while that peer is unreachable', () => {
      const otherRule: SourceIdentity = { ...fromP, rule: 'other' };
      const away = { ...facts(false), recordedSourceLive: () => false };
      assert.equal(decideWrite(away, obj({ owner: D, source: fromP }), obj({ owner: D, source: otherRule }), false).reason, R.deliveredByAnotherSource);
      // Once it is back, a recorded rule that no longer delivers is taken over as before.
      assert.equal(decideWrite(withLive(false), obj({ owner: D, source: fromP }), obj({ owner: D, source: otherRule }), false).action, 'update');
      // Another peer's record is not this peer's to keep.
      assert.equal(decideWrite(away, obj({ owner: D, source: fromP }), obj({ owner: D, source: fromA }), false).action, 'update');
    });
    it('never blocks the recorded source itself, nor copies recorded before rules were', () => {
      assert.equal(decideWrite(withLive(true), obj({ owner: D, source: fromP }), obj({ owner: D, source: fromP }), false).action, 'update');
      const { rule: _, ...legacy } = fromP;
      assert.equal(decideWrite(withLive(true), obj({ owner: D, source: fromP }), obj({ owner: D, source: legacy }), false).action, 'update');
    });
  });
});

describe('decideWrite: owners outside the group', () => {
  const inGroup = (ids: string[]): OwnershipFacts => ({ ...facts(true), ownerRegistered: (id) => ids.includes(id) });
  it('neither creates nor updates a copy of an object whose owner this registry does not know', () => {
    assert.equal(decideWrite(inGroup([P]), obj({ owner: D }), undefined, false).reason, R.ownerNotInGroup);
    assert.equal(decideWrite(inGroup([P]), obj({ owner: D }), obj({ owner: D }), false).reason, R.ownerNotInGroup);
    assert.equal(decideWrite(inGroup([P, D]), obj({ owner: D }), undefined, false).action, 'create');
  });
});

describe('decideDelete: second-hand copies', () => {
  const source: SourceIdentity = { clusterID: P, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm' };
  it('keeps a copy the peer passed on from another owner while the peer cannot reach that owner', () => {
    const current = obj({ owner: D, source });
    assert.equal(decideDelete({ ...facts(true), peerReaches: () => false }, source, current).reason, R.ownerNotReachedByPeer);
    assert.equal(decideDelete({ ...facts(true), peerReaches: () => true }, source, current).action, 'delete');
  });
});

describe('decideWrite: second-hand copies', () => {
  const reaching = (ids: string[]): OwnershipFacts => ({ ...facts(true), peerReaches: (id) => ids.includes(id) });
  it('creates or updates a copy another cluster owns only while the peer reaches that owner', () => {
    assert.equal(decideWrite(reaching([]), obj({ owner: D }), undefined, false).reason, R.ownerNotReachedByPeer);
    assert.equal(decideWrite(reaching([D]), obj({ owner: D }), undefined, false).action, 'create');
    assert.equal(decideWrite(reaching([]), obj({ owner: D }), obj({ owner: D }), false).reason, R.ownerNotReachedByPeer);
    assert.equal(decideWrite(reaching([D]), obj({ owner: D }), obj({ owner: D }), false).action, 'update');
  });
  it('always takes what the peer owns itself', () => {
    assert.equal(decideWrite(reaching([]), obj({ owner: P }), undefined, false).action, 'create');
    assert.equal(decideWrite(reaching([]), obj({ owner: P }), obj({ owner: P }), false).action, 'update');
  });
});

describe('decideDelete', () => {
  const source: SourceIdentity = { clusterID: P, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm' };
  const recordings = {
    none: undefined,
    fromPeerSame: source,
    fromPeerOther: { ...source, name: 'other' },
    fromOtherCluster: { ...source, clusterID: D },
  } as const;
  type Recording = keyof typeof recordings;

  function expected(o: { present: boolean; owner: Owner; rec: Recording }): Decision {
    const none = (reason: Decision['reason']): Decision => ({ action: 'none', reason, writeStatus: false });
    const del: Decision = { action: 'delete', reason: R.delete, writeStatus: false };
    if (!o.present) return none(R.localObjectAbsent);
    if (o.owner === '') return none(R.locallyOwned);
    if (o.owner === A) return none(R.ownedByAnotherAliveCluster);
    if (o.rec === 'fromPeerSame') return del;
    if (o.rec === 'fromPeerOther') return none(R.differentSourceObject);
    if (o.owner === P) return del;
    // Upstream deletes here when the owner is not alive; we never do.
    return none(R.notSyncedFromThisPeer);
  }

  for (const peerAlive of bools)
    for (const present of bools)
      for (const owner of OWNERS)
        for (const rec of Object.keys(recordings) as Recording[]) {
            const o = { present, owner, rec };
            it(`peerAlive=${peerAlive} ${JSON.stringify(o)}`, () => {
              const current = present ? obj({ owner, source: recordings[rec] }) : undefined;
              assert.deepEqual(decideDelete(facts(peerAlive), source, current), expected(o));
            });
          }

  it('does not delete a copy of a dead owner because an unrelated peer lacks the source', () => {
    const current = obj({ owner: D, source: { ...source, clusterID: D } });
    assert.equal(decideDelete(facts(true), source, current).action, 'none');
  });

  it('ignores a hand-edited source annotation and falls back to the owner rule', () => {
    const current = obj({ owner: P });
    current.metadata.annotations![ANNOTATIONS.source] = 'not json';
    assert.equal(decideDelete(facts(true), source, current).action, 'delete');
  });
});

describe('decision reasons', () => {
  it('every reason is produced by some row', () => {
    const seen = new Set<string>();
    const f = facts(true);
    const src: SourceIdentity = { clusterID: P, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm' };
    for (const owner of OWNERS)
      for (const disabled of bools)
        for (const terminating of bools) {
          seen.add(decideWrite(f, obj({ owner, syncDisabled: disabled }), undefined, false).reason);
          seen.add(decideWrite(f, obj({ owner }), obj({ owner, syncDisabled: disabled, terminating }), false).reason);
          seen.add(decideWrite(f, obj({ owner: L }), obj({ owner: P }), false).reason);
          seen.add(decideWrite(f, obj({ owner: P }), obj({ owner: D }), false).reason);
          seen.add(decideWrite({ ...f, ownerRegistered: () => false }, obj({ owner: P }), undefined, false).reason);
          for (const reaches of bools) {
            const sticky = { ...f, recordedSourceLive: () => true, peerReaches: () => reaches };
            seen.add(decideWrite(sticky, obj({ owner: D, source: src }), obj({ owner: D, source: { ...src, clusterID: A } }), false).reason);
          }
          seen.add(decideWrite(facts(false), obj({ owner }), undefined, false).reason);
          seen.add(decideDelete(f, src, undefined).reason);
          seen.add(decideDelete(f, src, obj({ owner, source: terminating ? { ...src, name: 'x' } : undefined })).reason);
          seen.add(decideDelete({ ...f, peerReaches: () => false }, src, obj({ owner: D })).reason);
        }
    // Adopt is decideCopy's, from a rule's adoptionPolicy (copy.test.ts).
    assert.deepEqual([...seen].sort(), Object.values(R).filter((r) => r !== R.adopt).sort());
  });
});

describe('unclaimedOverOwnDelivery', () => {
  const id = (clusterID: string): SourceIdentity => ({ clusterID, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm' });
  const f = facts(true);
  it("refuses a peer's unowned entry passed on for D over the copy D delivered itself", () => {
    assert.equal(unclaimedOverOwnDelivery(f, obj({ owner: '' }), obj({ owner: D }), obj({ owner: D, source: id(D) })), true);
  });
  it('allows everything else: the peer owning the entry, an owned source, a copy another source delivered, no copy', () => {
    assert.equal(unclaimedOverOwnDelivery(f, obj({ owner: '' }), obj({ owner: P }), obj({ owner: P, source: id(P) })), false);
    assert.equal(unclaimedOverOwnDelivery(f, obj({ owner: D }), obj({ owner: D }), obj({ owner: D, source: id(D) })), false);
    assert.equal(unclaimedOverOwnDelivery(f, obj({ owner: '' }), obj({ owner: D }), obj({ owner: D, source: id(A) })), false);
    assert.equal(unclaimedOverOwnDelivery(f, obj({ owner: '' }), obj({ owner: D }), undefined), false);
  });
});

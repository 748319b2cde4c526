import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { ANNOTATIONS, formatSourceIdentity } from '../core/api/index.ts';
import type { KubeObject } from '../kube/index.ts';
import { CopyBudget, type CopyReservation, type NoRoom } from './copy-budget.ts';

/** A copy of `name` that `rule` made from `peer`, with `size` characters of data. */
function copy(name: string, o: { rule?: string; peer?: string; uid?: string; rv?: string; size?: number } = {}): KubeObject {
  const source = formatSourceIdentity({ clusterID: o.peer ?? 'p1', group: '', kind: 'ConfigMap', namespace: 'ns', name, ...(o.rule === undefined ? { rule: 'r1' } : o.rule ? { rule: o.rule } : {}) });
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', uid: o.uid ?? `uid-${name}`, resourceVersion: o.rv ?? '1', annotations: { [ANNOTATIONS.source]: source } },
    data: { k: 'x'.repeat(o.size ?? 10) },
  };
}

function placed(r: CopyReservation | NoRoom): CopyReservation {
  if ('full' in r) assert.fail(`no room: ${r.full}`);
  return r;
}

function full(r: CopyReservation | NoRoom): string {
  assert.ok('full' in r, 'a place was taken where the budget was full');
  return r.full;
}

const WIDE = { maxObjects: 1000, maxBytes: 2 ** 30 };

/** A budget, and where it said room was freed, as `rule|peer`. */
function budget(perPeer: { maxObjects: number; maxBytes: number }): CopyBudget & { gaveBack: string[] } {
  const gaveBack: string[] = [];
  return Object.assign(new CopyBudget(perPeer, (rule, peer) => gaveBack.push(`${rule}|${peer}`)), { gaveBack });
}

describe('CopyBudget', () => {
  it('counts the copies a rule made from a peer by uid, once however many watches show them, and frees a place when one goes', () => {
    const b = budget(WIDE);
    b.observe(copy('a'), false);
    b.observe(copy('a'), false);
    b.observe(copy('b'), false);
    b.observe(copy('c', { peer: 'p2' }), false);
    b.observe(copy('d', { rule: 'r2' }), false);
    b.observe(copy('e', { rule: '' }), false);
    assert.equal(b.free('r1', 'p1', 3), 1);
    full(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('x')));
    b.observe(copy('a'), true);
    assert.equal(b.free('r1', 'p1', 3), 2);
    assert.equal(b.free('r1', 'p2', 3), 2);
    assert.equal(b.free('r2', 'p1', 3), 2);
  });

  it('counts creates on their way until their watch shows them, and frees the place of one that failed', () => {
    const b = budget(WIDE);
    const first = placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a')));
    const second = placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('b')));
    assert.match(full(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('c'))), /rule holds its budget of 2 copies/);
    second.abandon();
    assert.equal(b.free('r1', 'p1', 2), 1);
    const made = copy('a', { rv: '5' });
    first.made(made);
    assert.equal(b.free('r1', 'p1', 2), 1, 'made and not yet seen: still counted');
    b.observe(made, false);
    assert.equal(b.free('r1', 'p1', 2), 1, 'seen: counted once, through its watch');
    b.observe(made, true);
    assert.equal(b.free('r1', 'p1', 2), 2);
  });

  it('lets a write its watch showed already count only there', () => {
    const b = budget(WIDE);
    const r = placed(b.reserve('r1', 'p1', { max: 5, peerWide: true }, copy('a')));
    const made = copy('a', { rv: '7' });
    b.observe(made, false);
    r.made(made);
    assert.equal(b.free('r1', 'p1', 5), 4);
  });

  it('holds all the rules together to the objects and bytes one peer may make us hold', () => {
    const b = budget({ maxObjects: 3, maxBytes: 10_000 });
    b.observe(copy('a', { rule: 'r1' }), false);
    b.observe(copy('b', { rule: 'r2' }), false);
    placed(b.reserve('r3', 'p1', { max: 100, peerWide: true }, copy('c', { rule: 'r3' })));
    assert.match(full(b.reserve('r4', 'p1', { max: 100, peerWide: true }, copy('d', { rule: 'r4' }))), /copies from this peer hold their budget of 3 objects/);
    placed(b.reserve('r4', 'p2', { max: 100, peerWide: true }, copy('d', { rule: 'r4', peer: 'p2' })));

    const bytes = budget({ maxObjects: 100, maxBytes: 10_000 });
    bytes.observe(copy('a', { rule: 'r1', size: 6_000 }), false);
    full(bytes.reserve('r2', 'p1', { max: 100, peerWide: true }, copy('b', { rule: 'r2', size: 6_000 })));
    placed(bytes.reserve('r2', 'p1', { max: 100, peerWide: true }, copy('b', { rule: 'r2', size: 2_000 })));
    full(bytes.reserve('r3', 'p1', { max: 100, peerWide: true }, copy('c', { rule: 'r3', size: 2_000 })));
  });

  it('takes a place for a copy taken over from another rule or peer, and frees it in the one it leaves', () => {
    const b = budget(WIDE);
    const mine = copy('a', { rule: 'r1' });
    b.observe(mine, false);
    b.observe(copy('b', { rule: 'r2' }), false);
    full(b.reserve('r2', 'p1', { max: 1, peerWide: true }, copy('a', { rule: 'r2' }), mine));
    const r = placed(b.reserve('r2', 'p1', { max: 2, peerWide: true }, copy('a', { rule: 'r2' }), mine));
    assert.equal(b.free('r2', 'p1', 2), 0);
    const taken = copy('a', { rule: 'r2', rv: '2' });
    r.made(taken);
    b.observe(taken, false);
    assert.equal(b.free('r2', 'p1', 2), 0);
    assert.equal(b.free('r1', 'p1', 1), 1);
  });

  it('charges an update by the bytes it adds, and nothing for one that shrinks the copy', () => {
    const b = budget({ maxObjects: 100, maxBytes: 10_000 });
    const small = copy('a', { size: 1_000 });
    b.observe(small, false);
    b.observe(copy('b', { size: 5_000 }), false);
    assert.match(full(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a', { size: 6_000 }), small)), /hold their budget of 100 objects and/);
    const grow = placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a', { size: 3_500 }), small));
    full(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a', { size: 2_000 }), small));
    grow.made(copy('a', { size: 3_500, rv: '2' }));
    full(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a', { size: 2_000 }), small));
    b.observe(copy('a', { size: 3_500, rv: '2' }), false);
    placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a', { size: 10 }), copy('a', { size: 3_500, rv: '2' })));
    placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('b', { size: 10 }), copy('b', { size: 5_000 })));
  });

  it('forgets a copy no watch shows any more, and ignores copies no rule recorded', () => {
    const b = budget({ maxObjects: 1, maxBytes: 2 ** 20 });
    b.observe(copy('legacy', { rule: '' }), false);
    const a = copy('a');
    b.observe(a, false);
    full(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('b', { rule: 'r2' })));
    b.observe(a, true);
    placed(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('b', { rule: 'r2' })));
  });

  it('says where room was freed: a copy gone, taken over by another rule or peer, or shrunk; not one that grew or stayed', () => {
    const b = budget(WIDE);
    const steps: [KubeObject, boolean, string[]][] = [
      [copy('a', { size: 100 }), false, []],
      [copy('a', { size: 200, rv: '2' }), false, []],
      [copy('a', { size: 50, rv: '3' }), false, ['r1|p1']],
      [copy('a', { rule: 'r2', rv: '4' }), false, ['r1|p1']],
      [copy('a', { rule: 'r2', peer: 'p2', rv: '5' }), false, ['r2|p1']],
      [copy('a', { rule: 'r2', peer: 'p2', rv: '5' }), true, ['r2|p2']],
      [copy('a', { rule: 'r2', peer: 'p2', rv: '5' }), true, []],
    ];
    for (const [c, gone, freed] of steps) {
      b.gaveBack.length = 0;
      b.observe(c, gone);
      assert.deepEqual(b.gaveBack, freed, `${c.metadata.resourceVersion ?? ''} gone=${String(gone)}`);
    }
  });

  it('gives back the place of a write that failed, and of one made whose watch never showed it, and says so', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const b = budget(WIDE);
      placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a'))).abandon();
      assert.deepEqual(b.gaveBack, ['r1|p1']);
      placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('a'))).made(copy('a', { rv: '3' }));
      placed(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('b'))).made(copy('b', { rv: '4' }));
      full(b.reserve('r1', 'p1', { max: 2, peerWide: true }, copy('c')));
      b.observe(copy('b', { rv: '4' }), false);
      mock.timers.tick(60_001);
      assert.deepEqual(b.gaveBack, ['r1|p1', 'r1|p1'], 'only the write never seen gives its place back');
      assert.equal(b.free('r1', 'p1', 2), 1);
    } finally {
      mock.timers.reset();
    }
  });

  it('counts a new copy its watch showed in a later version already, once', () => {
    const b = budget(WIDE);
    const r = placed(b.reserve('r1', 'p1', { max: 5, peerWide: true }, copy('a')));
    b.observe(copy('a', { rv: '7' }), false);
    b.observe(copy('a', { rv: '8' }), false);
    r.made(copy('a', { rv: '7' }));
    assert.equal(b.free('r1', 'p1', 5), 4);
  });

  it("keeps an update's growth counted until its watch shows a version past the one it was made over", () => {
    const b = budget({ maxObjects: 100, maxBytes: 10_000 });
    const before = copy('a', { size: 1_000, rv: '1' });
    b.observe(before, false);
    placed(b.reserve('r1', 'p1', { max: 5, peerWide: true }, copy('a', { size: 8_000 }), before)).made(copy('a', { size: 8_000, rv: '2' }));
    b.observe(before, false);
    full(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('b', { rule: 'r2', size: 2_000 })));
    b.observe(copy('a', { size: 8_000, rv: '2' }), false);
    placed(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('b', { rule: 'r2', size: 1_000 })));
  });

  it("charges a copy taken over from another rule of the same peer only for its growth in the peer's budget", () => {
    const b = budget({ maxObjects: 1, maxBytes: 10_000 });
    const theirs = copy('a', { rule: 'r1', size: 5_000 });
    b.observe(theirs, false);
    full(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('b', { rule: 'r2' })));
    placed(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('a', { rule: 'r2', size: 5_000 }), theirs));
    full(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('a', { rule: 'r2', size: 20_000 }), theirs));
  });

  it("lets the registry's rules make copies however full the peer's budget is, counting them there", () => {
    const b = budget({ maxObjects: 1, maxBytes: 2 ** 20 });
    b.observe(copy('a'), false);
    full(b.reserve('r2', 'p1', { max: 5, peerWide: true }, copy('b', { rule: 'r2' })));
    placed(b.reserve('clusters', 'p1', { max: 5, peerWide: false }, copy('c', { rule: 'clusters' })));
    b.observe(copy('a'), true);
    assert.equal(b.roomFrom('p1'), false, 'the registry copy on its way takes the room');
  });
});

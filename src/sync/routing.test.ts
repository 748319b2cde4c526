import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, LABELS } from '../core/api/index.ts';
import type { Cluster } from '../core/api/types.ts';
import { BUILTIN_PREFIX } from '../core/rules/index.ts';
import { binding, configMap, configMapRule, FakeCopies, FakeView, FakeWriter, keyOf, LOCAL_ID, peer } from '../../test/support/sync-fakes.ts';
import { SYNC_KEY_CODEC, type SyncKey } from './keys.ts';
import { EventRouter } from './routing.ts';
import { WAIT, Waiters } from './waiters.ts';

/** A router over a fake engine; `queued` holds what it queued, encoded. */
function setup(): { view: FakeView; copies: FakeCopies; writer: FakeWriter; waiters: Waiters; router: EventRouter; queued: string[]; forgotten: string[]; alive: Set<string> } {
  const view = new FakeView();
  const copies = new FakeCopies();
  const writer = new FakeWriter(copies);
  const queued: string[] = [];
  const forgotten: string[] = [];
  const queue = { enqueue: (k: SyncKey) => queued.push(SYNC_KEY_CODEC.encode(k)) };
  const waiters = new Waiters(queue.enqueue);
  // The engine's own stock of the live peers, which the peers' current word may be ahead of.
  const alive = new Set<string>();
  const router = new EventRouter({ view, queue, waiters, copies, writer, status: { forget: (r, p, o) => forgotten.push(`${r}|${p}|${o}`) }, maxCopiesPerRule: 2, alive: () => alive });
  return { view, copies, writer, waiters, router, queued, forgotten, alive };
}

const enc = (k: SyncKey): string => SYNC_KEY_CODEC.encode(k);
const p1 = peer('p1');
const p2 = peer('p2');
const THIRD = 'third-uid';

describe('EventRouter: a source object changed on a peer', () => {
  it('queues the key of an object the peer owns, or that no one owns', () => {
    const { router, queued } = setup();
    const rule = configMapRule('r');
    router.sourceChanged(rule, p1, keyOf(rule, p1, 'a'), configMap('a', { owner: p1.id }));
    router.sourceChanged(rule, p1, keyOf(rule, p1, 'b'), configMap('b'));
    router.sourceChanged(rule, p1, keyOf(rule, p1, 'gone'), undefined);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'a')), enc(keyOf(rule, p1, 'b')), enc(keyOf(rule, p1, 'gone'))]);
  });

  it("parks a peer's copy of a live third cluster's object until that cluster dies, when the rule keeps owners", () => {
    const { router, waiters, queued, forgotten, alive } = setup();
    const rule = configMapRule('r');
    alive.add(THIRD);
    const key = keyOf(rule, p1, 'a');
    router.sourceChanged(rule, p1, key, configMap('a', { owner: THIRD }));
    assert.deepEqual(queued, []);
    assert.ok(waiters.waitsFor(key, WAIT.death(THIRD)));
    assert.deepEqual(forgotten, [`r|p1|ns/a`], 'it no longer counts in the rule status as the peer');
    waiters.release(WAIT.death(THIRD));
    assert.deepEqual(queued, [enc(key)]);
  });

  it("queues a third cluster's object at once when that cluster is not alive, when it is this cluster, or when the rule may change owners", () => {
    const { view, router, queued, alive } = setup();
    const keeps = configMapRule('keeps');
    const changes = configMapRule('changes', [{ mutations: { annotations: { add: { [ANNOTATIONS.ownership]: 'x' } } } }]);
    assert.equal(changes.keepsSourceOwner, false);
    router.sourceChanged(keeps, p1, keyOf(keeps, p1, 'dead-owner'), configMap('dead-owner', { owner: THIRD }));
    // Alive as the peers say now, not yet as the engine took stock: not deferred on that word.
    view.alive.add(THIRD);
    router.sourceChanged(keeps, p1, keyOf(keeps, p1, 'ours'), configMap('ours', { owner: LOCAL_ID }));
    alive.add(THIRD);
    router.sourceChanged(changes, p1, keyOf(changes, p1, 'any'), configMap('any', { owner: THIRD }));
    assert.deepEqual(queued, [enc(keyOf(keeps, p1, 'dead-owner')), enc(keyOf(keeps, p1, 'ours')), enc(keyOf(changes, p1, 'any'))]);
  });
});

describe('EventRouter: a copy here changed', () => {
  const rule = configMapRule('r');
  const source = { clusterID: p1.id, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'src', rule: 'r' };

  it('queues the source it records, through the rule and the peer that made it', () => {
    const { view, router, queued } = setup();
    view.bind(binding(rule, p1), binding(rule, p2));
    router.copyChanged(configMap('copy', { owner: p1.id, source }), false);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'src'))]);
  });

  it('queues the source through its owner too, when another peer delivered it', () => {
    const { view, router, queued } = setup();
    view.bind(binding(rule, p1), binding(rule, p2));
    router.copyChanged(configMap('copy', { owner: p2.id, source }), false);
    assert.deepEqual(queued.sort(), [enc(keyOf(rule, p1, 'src')), enc(keyOf(rule, p2, 'src'))].sort());
  });

  it('lets the echo of our own write go, while its source is still in the peer cache', () => {
    const { view, writer, router, queued } = setup();
    view.bind(binding(rule, p1, [configMap('src', { owner: p1.id })]));
    writer.echoes.add('7');
    router.copyChanged(configMap('copy', { owner: p1.id, source, rv: '7' }), false);
    assert.deepEqual(queued, []);
  });

  it('looks at an echo again when its source went meanwhile, and at a deletion whatever the echo', () => {
    const { view, writer, router, queued } = setup();
    view.bind(binding(rule, p1));
    writer.echoes.add('7');
    router.copyChanged(configMap('copy', { owner: p1.id, source, rv: '7' }), false);
    writer.echoes.add('8');
    router.copyChanged(configMap('copy', { owner: p1.id, source, rv: '8' }), true);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'src')), enc(keyOf(rule, p1, 'src'))]);
  });

  it("routes a copy another implementation made by upstream's labels to its owner's bindings, never to built-in rules", () => {
    const { view, router, queued } = setup();
    const builtin = configMapRule(`${BUILTIN_PREFIX}x`);
    view.bind(binding(rule, p1), binding(rule, p2), binding(builtin, p1));
    const legacy = configMap('renamed', { owner: p1.id, labels: { [LABELS.originalName]: 'orig', [LABELS.originalNamespace]: 'ns' } });
    router.copyChanged(legacy, false);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'orig'))]);
  });

  it('releases the keys waiting for a change at its place', () => {
    const { view, router, waiters, queued } = setup();
    view.bind(binding(rule, p1));
    const copy = configMap('copy', { owner: p1.id, source });
    const waiting = keyOf(rule, p2, 'other');
    waiters.wait(WAIT.target(copy), waiting);
    router.copyChanged(copy, true);
    assert.equal(queued[0], enc(waiting));
  });
});

describe('EventRouter: a binding became active', () => {
  it('queues every source it sees and every copy recorded as made from that peer by that rule', () => {
    const { view, copies, router, queued } = setup();
    const rule = configMapRule('r');
    const other = configMapRule('other');
    const b = binding(rule, p1, [configMap('s1'), configMap('s2')]);
    view.bind(b, binding(other, p1));
    const recorded = (name: string, by: string, from: string): void => copies.put(configMap(`copy-${name}-${by}-${from}`, { owner: from, source: { clusterID: from, group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: by } }));
    recorded('gone-there', 'r', p1.id);
    recorded('theirs', 'other', p1.id);
    recorded('elsewhere', 'r', p2.id);
    router.everythingOf(b);
    assert.deepEqual(queued.sort(), [enc(keyOf(rule, p1, 's1')), enc(keyOf(rule, p1, 's2')), enc(keyOf(rule, p1, 'gone-there'))].sort());
  });
});

describe('EventRouter: a binding left owners out', () => {
  it('queues only the copies made from that peer by that rule of what those owners own', () => {
    const { view, copies, router, queued } = setup();
    const rule = configMapRule('r');
    const b = binding(rule, p1, [configMap('s1')]);
    view.bind(b);
    const recorded = (name: string, owner: string, from = p1.id, by = 'r'): void => copies.put(configMap(`copy-${name}`, { owner, source: { clusterID: from, group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: by } }));
    recorded('relayed', 'third');
    recorded('other-owner', 'fourth');
    recorded('own', p1.id);
    recorded('by-another-rule', 'third', p1.id, 'other');
    recorded('from-another-peer', 'third', p2.id);
    // A source's own label, kept by its copy, may name another owner than the copy's annotation.
    const labelled = configMap('copy-labelled', { owner: 'fourth', labels: { [LABELS.ownership]: 'third' }, source: { clusterID: p1.id, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'labelled', rule: 'r' } });
    copies.put(labelled);
    router.leftOut(b, ['third']);
    assert.deepEqual(queued.sort(), [enc(keyOf(rule, p1, 'relayed')), enc(keyOf(rule, p1, 'labelled'))].sort());
    router.leftOut(b, []);
    assert.equal(queued.length, 2);
  });
});

describe('EventRouter: room in a copy budget came free', () => {
  it("wakes one key waiting for the peer's room, and as many waiting for the rule's as it has places", () => {
    const { view, router, waiters, queued } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1));
    for (const n of ['a', 'b', 'c']) waiters.wait(WAIT.ruleCopies('r', p1.id), keyOf(rule, p1, n));
    for (const n of ['x', 'y']) waiters.wait(WAIT.peerCopies(p1.id), keyOf(rule, p1, n));
    router.budgetFreed('r', p1.id);
    // The rule may make 2 copies from the peer and holds none.
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'x')), enc(keyOf(rule, p1, 'a')), enc(keyOf(rule, p1, 'b'))]);
  });

  it('wakes a key waiting for the peer even when the rule that made the copy is gone', () => {
    const { router, waiters, queued } = setup();
    const rule = configMapRule('r');
    waiters.wait(WAIT.peerCopies(p1.id), keyOf(rule, p1, 'x'));
    router.budgetFreed('deleted-rule', p1.id);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'x'))]);
  });
});

describe('EventRouter: what parked keys wait for', () => {
  const cluster = (id: string, state?: NonNullable<Cluster['status']>['state']): Cluster => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: id }, spec: { clusterID: id }, ...(state ? { status: { state } } : {}) });

  it('wakes the keys waiting for a cluster to be registered at once, and those waiting on the registry as a whole once it settled', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { router, waiters, queued } = setup();
    const rule = configMapRule('r');
    waiters.wait(WAIT.registered(THIRD), keyOf(rule, p1, 'owned'));
    waiters.wait(WAIT.clusters, keyOf(rule, p1, 'templated'));
    router.registryChanged(cluster(THIRD));
    router.registryChanged(cluster('other'));
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'owned'))]);
    t.mock.timers.tick(1000);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'owned')), enc(keyOf(rule, p1, 'templated'))], 'once, however many changes came meanwhile');
    router.close();
  });

  it('looks again, once the registry settled, at everything a listed binding of a rule whose templates read it holds', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const { view, router, queued } = setup();
    const templated = configMapRule('templated', [{ mutations: { overrides: [{ type: 'replace', path: '/data/gateway', value: '{{ index .Cluster.GetAnnotations "gateway" }}' }] } }]);
    const plain = configMapRule('plain');
    for (const r of [templated, plain]) view.rules.set(r.name, r);
    view.bind(binding(templated, p1, [configMap('a')]), binding(templated, p2, [configMap('b')], { synced: false }), binding(plain, p1, [configMap('c')]));
    router.registryChanged(cluster(p1.id));
    assert.deepEqual(queued, []);
    t.mock.timers.tick(1000);
    assert.deepEqual(queued, [enc(keyOf(templated, p1, 'a'))], 'not a binding still listing (it looks at everything once listed), nor a rule without templates');
    router.close();
  });

  it('wakes the keys waiting for a namespace once it is made', () => {
    const { router, waiters, queued } = setup();
    const rule = configMapRule('r');
    waiters.wait(WAIT.namespace('ns'), keyOf(rule, p1, 'a'));
    router.namespaceAdded('other');
    assert.deepEqual(queued, []);
    router.namespaceAdded('ns');
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'a'))]);
  });

  it('wakes the keys waiting for a peer to reach a cluster once its registry shows that cluster Ready, and all of them when the peer goes', () => {
    const { router, waiters, queued } = setup();
    const rule = configMapRule('r');
    waiters.wait(WAIT.reach(p1.name, THIRD), keyOf(rule, p1, 'a'));
    waiters.wait(WAIT.reach(p1.name, 'fourth'), keyOf(rule, p1, 'b'));
    router.peerRegistryChanged(p1.name, cluster(THIRD, 'Failed'));
    router.peerRegistryChanged(p2.name, cluster(THIRD, 'Ready'));
    assert.deepEqual(queued, [], 'not Ready, or another peer reaching it');
    router.peerRegistryChanged(p1.name, cluster(THIRD, 'Ready'));
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'a'))]);
    router.peerClosed(p1.name);
    assert.deepEqual(queued, [enc(keyOf(rule, p1, 'a')), enc(keyOf(rule, p1, 'b'))]);
  });

  it("wakes what waited for a peer's death when it dies, and for its return when it comes back, looking again at everything a listed binding to it holds", () => {
    const { view, router, waiters, queued } = setup();
    const rule = configMapRule('r');
    view.rules.set(rule.name, rule);
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    view.bind(binding(rule, p2, [configMap('b', { owner: p2.id })], { synced: false }));
    waiters.wait(WAIT.death(p2.id), keyOf(rule, p1, 'deferred'));
    waiters.wait(WAIT.alive(p1.id), keyOf(rule, p1, 'waiting'));
    router.aliveChanged(new Set([p2.id]), new Set([p1.id]));
    assert.deepEqual(queued.sort(), [enc(keyOf(rule, p1, 'a')), enc(keyOf(rule, p1, 'deferred')), enc(keyOf(rule, p1, 'waiting'))].sort());
  });
});

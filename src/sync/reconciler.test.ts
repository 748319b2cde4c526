import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SYNC_EVENT_REASONS } from '../core/api/index.ts';
import type { KubeObject } from '../core/api/types.ts';
import type { RuleState } from '../core/rules/index.ts';
import { silentLogger, type ApiResource } from '../kube/index.ts';
import { binding, configMap, configMapRule, FakeCopies, FakeView, FakeWriter, keyOf, member, peer } from '../../test/support/sync-fakes.ts';
import type { SyncKey } from './keys.ts';
import { SyncReconciler } from './reconciler.ts';
import { WAIT, Waiters } from './waiters.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'], subresources: [] };
const p1 = peer('p1');
const THIRD = 'third-uid';

/** A reconciler over a fake engine; what it reports and queues again is recorded. */
function setup(o: { maxCopiesPerRule?: number } = {}) {
  const view = new FakeView();
  view.alive.add(p1.id);
  view.registry = [member(p1)];
  const copies = new FakeCopies();
  const writer = new FakeWriter(copies);
  const queued: SyncKey[] = [];
  const waiters = new Waiters((k) => queued.push(k));
  const outcomes: string[] = [];
  const events: string[] = [];
  const reconciler = new SyncReconciler({
    view,
    copies,
    writer,
    localDiscovery: { resourceFor: () => Promise.resolve(CONFIGMAPS) },
    maxCopiesPerRule: o.maxCopiesPerRule ?? 100,
    waiters,
    status: {
      outcome: (_rule, _peer, object, outcome, opts) => outcomes.push(`${object} ${outcome}${opts?.error ? `: ${opts.error}` : ''}`),
      forget: (_rule, _peer, object) => outcomes.push(`${object} forgotten`),
    },
    events: { event: (_o, type, reason) => events.push(`${type} ${reason}`) },
    log: silentLogger,
  });
  const run = (key: SyncKey): Promise<unknown> => reconciler.reconcile(key, new AbortController().signal);
  return { view, copies, writer, waiters, queued, outcomes, events, run };
}

/** The copy of `source` that `rule` makes from p1, as it stands here. */
function copyOf(source: KubeObject, rule: RuleState, data: Record<string, string> = { k: 'v' }): KubeObject {
  const copy = configMap(source.metadata.name ?? '', { owner: p1.id, source: { clusterID: p1.id, group: '', kind: 'ConfigMap', namespace: 'ns', name: source.metadata.name ?? '', rule: rule.name }, uid: `copy-${source.metadata.name ?? ''}` });
  return { ...copy, data };
}

describe('SyncReconciler', () => {
  it("creates the copy of a source its peer owns, and says it synced", async () => {
    const { view, writer, outcomes, run } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, ['create ConfigMap|ns/a']);
    assert.deepEqual(outcomes, ['ns/a synced']);
  });

  it('applies a copy that differs from what the rule makes of its source', async () => {
    const { view, copies, writer, run } = setup();
    const rule = configMapRule('r');
    const source = configMap('a', { owner: p1.id });
    view.bind(binding(rule, p1, [source]));
    copies.put(copyOf(source, rule, { k: 'old' }));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, ['update ConfigMap|ns/a']);
  });

  it('deletes the copy once its listed peer no longer has the source', async () => {
    const { view, copies, writer, outcomes, run } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, []));
    copies.put(copyOf(configMap('a'), rule));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, ['delete ConfigMap|ns/a']);
    assert.deepEqual(outcomes, ['ns/a forgotten']);
  });

  it('deletes nothing on the word of a peer whose objects are not listed yet', async () => {
    const { view, copies, writer, run } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [], { synced: false }));
    copies.put(copyOf(configMap('a'), rule));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, []);
  });

  it('waits for a namespace that is not here, says so, and is looked at again once it is', async () => {
    const { view, writer, waiters, queued, outcomes, events, run } = setup();
    const rule = configMapRule('r');
    view.namespaces.delete('ns');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    const key = keyOf(rule, p1, 'a');
    await run(key);
    assert.deepEqual(writer.requests, []);
    assert.match(outcomes[0] ?? '', /^ns\/a waiting: .*namespace ns does not exist here/);
    assert.deepEqual(events, [`Warning ${SYNC_EVENT_REASONS.missingNamespace}`]);
    waiters.release(WAIT.namespace('ns'));
    assert.deepEqual(queued, [key]);
  });

  it('writes nothing the trust boundary refuses, and reports why', async () => {
    const { view, writer, outcomes, run } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [{ ...configMap('a', { owner: p1.id }), metadata: { ...configMap('a', { owner: p1.id }).metadata, namespace: 'kube-system' } }]));
    view.namespaces.add('kube-system');
    await run(['r', 'p1', 'kube-system', 'a']);
    assert.deepEqual(writer.requests, []);
    assert.match(outcomes[0] ?? '', /^kube-system\/a failed: /);
  });

  it("leaves a peer's copy of a live third cluster's object to that cluster, and looks again when it dies", async () => {
    const { view, writer, waiters, run } = setup();
    const rule = configMapRule('r');
    view.alive.add(THIRD);
    view.registry.push(member({ name: 'third', id: THIRD }));
    view.bind(binding(rule, p1, [configMap('a', { owner: THIRD })], { reaches: () => true }));
    const key = keyOf(rule, p1, 'a');
    await run(key);
    assert.deepEqual(writer.requests, []);
    assert.ok(waiters.waitsFor(key, WAIT.death(THIRD)));
    // Once it is gone from the group's live peers, the peer that reaches it delivers its object.
    view.alive.delete(THIRD);
    await run(key);
    assert.deepEqual(writer.requests, ['create ConfigMap|ns/a']);
  });

  it('reports a mutation that fails on the object and waits for the registry to change', async () => {
    const { view, writer, waiters, outcomes, run } = setup();
    const rule = configMapRule('r', [{ mutations: { overrides: [{ type: 'replace', path: '/data/k', value: '{{ .Cluster.Nope.Deeper }}' }] } }]);
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    const key = keyOf(rule, p1, 'a');
    await run(key);
    assert.deepEqual(writer.requests, []);
    assert.match(outcomes[0] ?? '', /^ns\/a failed: could not mutate ns\/a/);
    assert.ok(waiters.waitsFor(key, WAIT.clusters));
  });

  it('makes no more copies for a rule than its budget from one peer, says so once, and makes the next when one goes', async () => {
    const { view, copies, writer, waiters, queued, events, run } = setup({ maxCopiesPerRule: 1 });
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id }), configMap('b', { owner: p1.id })]));
    await run(keyOf(rule, p1, 'a'));
    await run(keyOf(rule, p1, 'b'));
    assert.deepEqual(writer.requests, ['create ConfigMap|ns/a']);
    assert.ok(waiters.waitsFor(keyOf(rule, p1, 'b'), WAIT.ruleCopies('r', p1.id)));
    assert.equal(events.filter((e) => e.startsWith('Warning')).length, 1);
    // The copy of a goes; the reconcile of any key of the rule passes the room on.
    const made = copies.get({ kind: 'ConfigMap' }, 'ns', 'a');
    assert.ok(made);
    copies.remove(made);
    await run(keyOf(rule, p1, 'elsewhere'));
    assert.deepEqual(queued, [keyOf(rule, p1, 'b')]);
  });

  it('does nothing for a rule that does not run on that peer', async () => {
    const { view, writer, outcomes, run } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, peer('other'), [configMap('a', { owner: p1.id })]));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual([writer.requests, outcomes], [[], []]);
  });

  it('never takes back an object this cluster owns, or its own copy coming back through the peer', async () => {
    const { view, writer, run } = setup();
    const rule = configMapRule('r');
    const ours = configMap('ours', { owner: view.localClusterID });
    const back = configMap('back', { owner: p1.id, source: { clusterID: view.localClusterID, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'back', rule: 'r' } });
    view.bind(binding(rule, p1, [ours, back]));
    await run(keyOf(rule, p1, 'ours'));
    await run(keyOf(rule, p1, 'back'));
    assert.deepEqual(writer.requests, []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../core/api/types.ts';
import { CopyTargets, type RuleState } from '../core/rules/index.ts';
import { silentLogger, type ApiResource } from '../kube/index.ts';
import { binding, configMap, configMapRule, FakeCopies, FakeView, FakeWriter, LOCAL_ID, member, peer } from '../../test/support/sync-fakes.ts';
import { Collector } from './collector.ts';
import type { SyncKey } from './keys.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] };
const p1 = peer('p1');
const p2 = peer('p2');
const GRACE_MS = 10_000;

/** A collector over a fake engine, with a clock the test moves. */
function setup() {
  const view = new FakeView();
  view.alive = new Set([p1.id, p2.id]);
  view.registry = [member(p1), member(p2)];
  const copies = new FakeCopies();
  const writer = new FakeWriter(copies);
  const queued: SyncKey[] = [];
  const clock = { now: 0 };
  const collector = new Collector({
    view,
    copies,
    targets: new CopyTargets(LOCAL_ID),
    writer,
    localDiscovery: { resourceFor: () => Promise.resolve(CONFIGMAPS) },
    graceMs: GRACE_MS,
    enqueue: (k) => queued.push(k),
    swept: () => undefined,
    events: { event: () => undefined },
    log: silentLogger,
    now: () => clock.now,
  });
  const sweep = (): Promise<void> => collector.sweep(new AbortController().signal);
  return { view, copies, writer, queued, clock, sweep };
}

/** The copy of p1's `name` that `rule` made. */
function copyFrom(from: { id: string }, name: string, rule: RuleState): KubeObject {
  return configMap(name, { owner: from.id, source: { clusterID: from.id, group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: rule.name }, uid: `copy-${name}` });
}

describe('Collector', () => {
  it('keeps a copy whose source its peer still has and the rule still takes', async () => {
    const { view, copies, writer, clock, sweep } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    copies.put(copyFrom(p1, 'a', rule));
    await sweep();
    clock.now += GRACE_MS * 2;
    await sweep();
    assert.deepEqual(writer.requests, []);
  });

  it('deletes a copy whose source went, once it has been an orphan for the whole grace period', async () => {
    const { view, copies, writer, clock, sweep } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, []));
    copies.put(copyFrom(p1, 'a', rule));
    await sweep();
    clock.now += GRACE_MS - 1;
    await sweep();
    assert.deepEqual(writer.requests, [], 'not before the grace period');
    clock.now += 1;
    await sweep();
    assert.deepEqual(writer.requests, ['delete ConfigMap|ns/a']);
  });

  it('never deletes a copy because its peer is unreachable, however long', async () => {
    const { view, copies, writer, clock, sweep } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, []));
    view.alive.delete(p1.id);
    copies.put(copyFrom(p1, 'a', rule));
    for (let i = 0; i < 3; i++) {
      await sweep();
      clock.now += GRACE_MS;
    }
    assert.deepEqual(writer.requests, []);
  });

  it('starts the grace period over for a copy that stopped being an orphan in between', async () => {
    const { view, copies, writer, clock, sweep } = setup();
    const rule = configMapRule('r');
    const b = binding(rule, p1, []);
    view.bind(b);
    copies.put(copyFrom(p1, 'a', rule));
    await sweep();
    clock.now += GRACE_MS / 2;
    b.sources.set('ns/a', configMap('a', { owner: p1.id }));
    await sweep();
    b.sources.delete('ns/a');
    clock.now += GRACE_MS / 2;
    await sweep();
    assert.deepEqual(writer.requests, []);
  });

  it('deletes the copies of a rule that was deleted, after the grace period', async () => {
    const { copies, writer, clock, sweep } = setup();
    copies.put(copyFrom(p1, 'a', configMapRule('gone')));
    await sweep();
    clock.now += GRACE_MS;
    await sweep();
    assert.deepEqual(writer.requests, ['delete ConfigMap|ns/a']);
  });

  it('hands a copy whose recorded source went to another peer that delivers the same copy, instead of deleting it', async () => {
    const { view, copies, writer, queued, clock, sweep } = setup();
    const rule = configMapRule('r');
    // p2 holds its own object of that name: once p1's is gone, p2's delivers the same copy.
    view.bind(binding(rule, p1, []), binding(rule, p2, [configMap('a', { owner: p2.id })]));
    copies.put(copyFrom(p1, 'a', rule));
    await sweep();
    clock.now += GRACE_MS;
    await sweep();
    assert.deepEqual(writer.requests, []);
    assert.deepEqual(queued.at(-1), ['r', 'p2', 'ns', 'a']);
  });
});

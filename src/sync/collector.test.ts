import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { CopyTargets, type RuleState } from '../core/rules/index.ts';
import { registry, silentLogger, type ApiResource } from '../kube/index.ts';
import { eventually } from '../../test/support/eventually.ts';
import { countTurns } from '../../test/support/loop-turns.ts';
import { binding, configMap, configMapRule, FakeCopies, heavyTemplatesRule, FakeView, FakeWriter, LOCAL_ID, member, peer, RecordingRenders } from '../../test/support/sync-fakes.ts';
import { Collector, type SweptCopies } from './collector.ts';
import type { SyncKey } from './keys.ts';
import type { DeleteOutcome } from './writer.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] };
const p1 = peer('p1');
const p2 = peer('p2');
const GRACE_MS = 10_000;

/** A collector over a fake engine, with a clock the test moves; `copies` and `writer` replace the plain fakes. */
function setup(o: { copies?: FakeCopies; writer?: (copies: FakeCopies) => FakeWriter; resource?: ApiResource } = {}) {
  const view = new FakeView();
  view.alive = new Set([p1.id, p2.id]);
  view.registry = [member(p1), member(p2)];
  const copies = o.copies ?? new FakeCopies();
  const writer = o.writer ? o.writer(copies) : new FakeWriter(copies);
  const queued: SyncKey[] = [];
  const reports: SweptCopies[] = [];
  const events: string[] = [];
  const clock = { now: 0 };
  const targets = new CopyTargets(LOCAL_ID);
  const renders = new RecordingRenders();
  const collector = new Collector({
    view,
    copies,
    targets,
    renders,
    writer,
    localDiscovery: { resourceFor: () => Promise.resolve(o.resource ?? CONFIGMAPS) },
    graceMs: GRACE_MS,
    enqueue: (k) => queued.push(k),
    swept: (r) => reports.push(r),
    events: { event: (obj, type, reason, message) => events.push(`${obj.metadata.name ?? ''} ${type} ${reason}: ${message}`) },
    log: silentLogger,
    now: () => clock.now,
  });
  const sweep = (): Promise<void> => collector.sweep(new AbortController().signal);
  return { view, copies, writer, queued, reports, events, clock, collector, sweep, targets, renders };
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

  it("hands the event loop back between the templates that say where a source's copy goes, holding meanwhile what the peer's cache was charged for it", async () => {
    const { view, copies, writer, sweep, renders } = setup();
    view.registry = [member({ id: LOCAL_ID, name: 'local' }), member(p1), member(p2)];
    const rule = heavyTemplatesRule('r');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })], { bytes: 1234 }));
    copies.put(copyFrom(p1, 'a', rule));
    const turns = countTurns();
    try {
      await sweep();
    } finally {
      turns.stop();
    }
    assert.deepEqual(writer.requests, []);
    assert.ok(turns.count() >= 2, 'the loop turned between the templates');
    assert.deepEqual(renders.said, [1234]);
  });

  it("holds, while it renders another peer's source that would deliver a copy, what that peer's cache was charged for it", async () => {
    const { view, copies, queued, sweep, renders } = setup();
    view.registry = [member({ id: LOCAL_ID, name: 'local' }), member(p1), member(p2)];
    const rule = heavyTemplatesRule('r');
    view.bind(binding(rule, p1, []), binding(rule, p2, [configMap('a', { owner: p2.id })], { bytes: 777 }));
    copies.put(copyFrom(p1, 'a', rule));
    await sweep();
    assert.deepEqual(queued.at(-1), ['r', 'p2', 'ns', 'a']);
    assert.deepEqual(renders.said, [777]);
  });

  it('keeps a copy where its source goes when the registry its templates read changes during a sweep', async () => {
    const { view, copies, writer, clock, sweep, targets } = setup();
    const p1In = (tier: string): Cluster => ({ ...member(p1), metadata: { name: 'p1', labels: { tier } } });
    view.registry = [member({ id: LOCAL_ID, name: 'local' }), p1In('old')];
    // The copy's name follows a label of its owner's Cluster.
    const rule = configMapRule('r', [{ mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ index .Cluster.Labels "tier" }}-{{ .Object.GetName }}' }] } }]);
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id }), configMap('b', { owner: p1.id })]));
    // The sync made both copies for the registry as it is about to be.
    for (const n of ['a', 'b']) copies.put(configMap(`new-${n}`, { owner: p1.id, source: { clusterID: p1.id, group: '', kind: 'ConfigMap', namespace: 'ns', name: n, rule: 'r' }, uid: `copy-new-${n}` }));
    // The registry changes on the loop's turn while the sweep's templates take theirs, as the engine does it.
    const first = sweep();
    setImmediate(() => {
      view.registry = [member({ id: LOCAL_ID, name: 'local' }), p1In('new')];
      targets.registryChanged();
    });
    await first;
    for (let i = 0; i < 2; i++) {
      clock.now += GRACE_MS * 2;
      await sweep();
    }
    assert.deepEqual(writer.requests, []);
  });

  it('keeps a copy of a kind cluster-scoped here, written without the namespace its rule gave it', async () => {
    const { view, copies, writer, clock, sweep } = setup({ resource: { ...CONFIGMAPS, namespaced: false } });
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    const copy = copyFrom(p1, 'a', rule);
    delete copy.metadata.namespace;
    copies.put(copy);
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

  it("keeps a copy whose source its peer's filtered watches do not show but the peer, asked, still has", async () => {
    const { view, copies, writer, clock, sweep } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [], { hidden: ['ns/a'] }));
    copies.put(copyFrom(p1, 'a', rule));
    for (let i = 0; i < 3; i++) {
      await sweep();
      clock.now += GRACE_MS;
    }
    assert.deepEqual(writer.requests, []);
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

  describe("a copy a peer passed on for an owner whose objects that peer's watches leave out", () => {
    /** The copy of p2's `name` that p1 passed on, with p1's watches leaving p2's out and p2's holding `owners`. */
    const relayed = (owners: KubeObject[], o: { ownerSynced?: boolean } = {}) => {
      const t = setup();
      const rule = configMapRule('r');
      t.view.bind(binding(rule, p1, [], { leftOut: [LOCAL_ID, p2.id], reaches: () => true }), binding(rule, p2, owners, { synced: o.ownerSynced ?? true }));
      t.copies.put(configMap('a', { owner: p2.id, source: { clusterID: p1.id, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', rule: rule.name }, uid: 'copy-a' }));
      return t;
    };

    it('is handed back to its owner, which still has the source, instead of deleted', async () => {
      const { writer, queued, clock, sweep } = relayed([configMap('a', { owner: p2.id })]);
      await sweep();
      clock.now += GRACE_MS * 2;
      await sweep();
      assert.deepEqual(writer.requests, []);
      assert.deepEqual(queued.at(-1), ['r', 'p2', 'ns', 'a']);
    });

    it("is collected after the grace period once the owner's own listing lacks the source", async () => {
      const { writer, clock, sweep } = relayed([]);
      await sweep();
      clock.now += GRACE_MS;
      await sweep();
      assert.deepEqual(writer.requests, ['delete ConfigMap|ns/a']);
    });

    it("is kept while the owner's objects are not listed yet", async () => {
      const { writer, clock, sweep } = relayed([], { ownerSynced: false });
      await sweep();
      clock.now += GRACE_MS * 2;
      await sweep();
      assert.deepEqual(writer.requests, []);
    });
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

/** Copies whose kind the test says is listed in full, or not yet (still listing, unless refused). */
class PartlyKnownCopies extends FakeCopies {
  known = true;
  refused = false;
  override synced(): boolean {
    return this.known;
  }
  override listing(): boolean {
    return !this.known && !this.refused;
  }
}

/** A writer whose deletes of the copies named in `refused` fail, and that answers `next` (once) instead of deleting. */
class ScriptedWriter extends FakeWriter {
  readonly refused = new Set<string>();
  next: DeleteOutcome | undefined;
  /** The options of every delete asked for. */
  readonly asked: { name: string; exactVersion?: boolean; ownersCopiesGo?: boolean }[] = [];

  override delete(r: unknown, copy: KubeObject, signal?: AbortSignal, opts: { exactVersion?: boolean; ownersCopiesGo?: boolean } = {}): Promise<DeleteOutcome> {
    const name = copy.metadata.name ?? '';
    this.asked.push({ name, ...opts });
    if (this.refused.has(name)) {
      this.requests.push(`refused ${name}`);
      return Promise.reject(new Error('admission webhook denied the request'));
    }
    const outcome = this.next;
    this.next = undefined;
    return outcome === undefined ? super.delete(r, copy) : Promise.resolve(outcome);
  }
}

type Setup = ReturnType<typeof setup>;

/** The collector over a ScriptedWriter (and `copies`, when given). */
function scripted(copies?: FakeCopies): Setup & { writer: ScriptedWriter } {
  let writer: ScriptedWriter | undefined;
  const s = setup({ ...(copies ? { copies } : {}), writer: (c) => (writer = new ScriptedWriter(c)) });
  assert.ok(writer);
  return { ...s, writer };
}

/** Rule r running on p1, where none of the sources of `names` is any more, and their copies: orphans from now on. */
function orphaned(s: Pick<Setup, 'view' | 'copies'>, ...names: string[]): KubeObject[] {
  const rule = configMapRule('r');
  s.view.bind(binding(rule, p1, []));
  const made = names.map((name) => copyFrom(p1, name, rule));
  for (const copy of made) s.copies.put(copy);
  return made;
}

/** Sweeps at the clock's time now and a whole grace period later. */
async function sweepOverGrace(s: Pick<Setup, 'clock' | 'sweep'>): Promise<void> {
  await s.sweep();
  s.clock.now += GRACE_MS;
  await s.sweep();
}

describe('Collector: the grace period', () => {
  it('forgets an orphan no sweep saw any more: seen again, its grace period starts over', async () => {
    const s = setup();
    const [copy] = orphaned(s, 'a');
    await s.sweep();
    s.copies.remove(copy!);
    s.clock.now += GRACE_MS / 2;
    await s.sweep();
    s.copies.put(copy!);
    s.clock.now += GRACE_MS / 2;
    await s.sweep();
    assert.deepEqual(s.writer.requests, [], 'an orphan for half the grace period since it was seen again');
    s.clock.now += GRACE_MS;
    await s.sweep();
    assert.deepEqual(s.writer.requests, ['delete ConfigMap|ns/a']);
  });

  it('neither deletes nor forgets an orphan while its kind is not all known, and deletes it once it is', async () => {
    const copies = new PartlyKnownCopies();
    const s = setup({ copies });
    orphaned(s, 'a');
    await s.sweep();
    copies.known = false;
    s.clock.now += GRACE_MS;
    await s.sweep();
    assert.deepEqual(s.writer.requests, [], 'not while its kind is not all known');
    copies.known = true;
    await s.sweep();
    assert.deepEqual(s.writer.requests, ['delete ConfigMap|ns/a'], 'its grace period ran on meanwhile');
  });

  it('tries a copy that changed before it could be deleted again at the next sweep, without a new grace period', async () => {
    const s = scripted();
    orphaned(s, 'a');
    s.writer.next = 'changed';
    await sweepOverGrace(s);
    assert.ok(s.copies.get({ kind: 'ConfigMap' }, 'ns', 'a'), 'not deleted: it changed');
    await s.sweep();
    assert.deepEqual(s.writer.requests, ['delete ConfigMap|ns/a']);
  });

  it('deletes exactly the version it judged, letting a namespace take its owner’s copies along only when their source went', async () => {
    const s = scripted();
    orphaned(s, 'a');
    s.copies.put(copyFrom(p1, 'b', configMapRule('gone')));
    await sweepOverGrace(s);
    assert.deepEqual(s.writer.asked, [
      { name: 'a', exactVersion: true, ownersCopiesGo: true },
      { name: 'b', exactVersion: true, ownersCopiesGo: false },
    ]);
  });
});

/** A copy recording `a` on `from`, owned by `owner`, made by `rule` (none: a record older than rules). */
function recorded(o: { owner: string; from?: string; rule?: string }): KubeObject {
  return configMap('a', { owner: o.owner, source: { clusterID: o.from ?? o.owner, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', ...(o.rule ? { rule: o.rule } : {}) }, uid: 'copy-a' });
}

/** `a` as p1 holds it. */
const sourceA = (): KubeObject => configMap('a', { owner: p1.id });

/** A rule r that writes ns/a under another name: the local cluster's (so the registry must hold it). */
const renamingRule = (): RuleState => configMapRule('r', [{ mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ .LocalCluster.GetName }}' }] } }]);

/** What a test sets up: the rule and binding, the copy ns/a, and anything else the case needs. */
type Arrange = (s: Setup) => void;

const KEPT: [string, Arrange][] = [
  ['keeps a copy whose rule has not listed the recorded peer yet, however long', ({ view, copies }) => {
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [], { synced: false }));
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['keeps a copy whose rule does not run on the recorded peer yet', ({ view, copies }) => {
    const rule = configMapRule('r');
    view.bind(binding(rule, p2, []));
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['keeps the copies of a rule that is invalid now: bad input is no reason to delete', ({ view, copies }) => {
    const rule = configMapRule('r', [{ mutations: { overrides: [{ type: 'replace', path: 'no-slash' }] } }]);
    assert.equal(rule.compiled, undefined);
    view.bind(binding(rule, p1, []));
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['keeps a copy whose rule cannot say where its source goes now (its template reads a Cluster the registry lacks)', ({ view, copies }) => {
    const rule = renamingRule();
    view.bind(binding(rule, p1, [sourceA()]));
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['keeps a copy passed on by a peer that no longer reaches the cluster owning it', ({ view, copies }) => {
    view.bind(binding(configMapRule('r'), p1, []));
    copies.put(recorded({ owner: p2.id, from: p1.id, rule: 'r' }));
  }],
  ['never touches a copy that records no source of ours, even of a cluster that left', ({ view, copies }) => {
    view.registry = [member(p2)];
    copies.put(configMap('a', { owner: p1.id, uid: 'upstream-copy' }));
  }],
  ['judges a copy whose record names no rule by a rule that could have made it, and keeps what that rule delivers', ({ view, copies }) => {
    view.bind(binding(configMapRule('r'), p1, [sourceA()]));
    copies.put(recorded({ owner: p1.id }));
  }],
];

/** A describe of `cases`, each swept over two grace periods, after which the writer was asked for `requests`. */
function judging(title: string, cases: [string, Arrange][], requests: string[]): void {
  describe(title, () => {
    for (const [name, arrange] of cases) {
      it(name, async () => {
        const s = setup();
        arrange(s);
        await sweepOverGrace(s);
        await sweepOverGrace(s);
        assert.deepEqual(s.writer.requests, requests);
      });
    }
  });
}

judging('Collector: what it keeps because it does not know', KEPT, []);

const COLLECTED: [string, Arrange][] = [
  ['deletes a copy whose source is being deleted', ({ view, copies }) => {
    const rule = configMapRule('r');
    const going = sourceA();
    view.bind(binding(rule, p1, [{ ...going, metadata: { ...going.metadata, deletionTimestamp: '2020-01-01T00:00:00Z' } }]));
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['deletes a copy whose source the rule no longer takes', ({ view, copies }) => {
    const rule = configMapRule('r');
    view.bind({ ...binding(rule, p1, [sourceA()]), lookup: () => ({ inScope: false, object: undefined }) });
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['deletes a copy the rule now writes elsewhere', ({ view, copies }) => {
    view.registry.push(member({ name: 'local', id: LOCAL_ID }));
    const rule = renamingRule();
    view.bind(binding(rule, p1, [sourceA()]));
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['deletes the copies from a peer that no longer has the features the rule needs', ({ view, copies }) => {
    const rule = configMapRule('r');
    view.bind({ ...binding(rule, p1, [sourceA()]), phase: 'featuresUnmet' });
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['deletes the copies a cluster that left the group owns, though it is unreachable', ({ view, copies }) => {
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [sourceA()]));
    view.registry = [member(p2)];
    view.alive.delete(p1.id);
    copies.put(copyFrom(p1, 'a', rule));
  }],
  ['deletes a copy whose record names no rule once no rule could have made it', ({ copies }) => {
    copies.put(recorded({ owner: p1.id }));
  }],
];

judging('Collector: what it deletes after the grace period', COLLECTED, ['delete ConfigMap|ns/a']);

describe('Collector: deleting', () => {
  it('tells the rule of each orphan it collected, with why', async () => {
    const s = setup();
    orphaned(s, 'a');
    await sweepOverGrace(s);
    assert.equal(s.events.length, 1);
    assert.match(s.events[0] ?? '', /^r Normal OrphanCollected: deleted ConfigMap .*a.*: SourceDeleted$/);
  });

  it('lets one copy that cannot be deleted hold up no other, and tries it again at the next sweep', async () => {
    const s = scripted();
    orphaned(s, 'a', 'b');
    s.writer.refused.add('a');
    await sweepOverGrace(s);
    assert.deepEqual(s.writer.requests, ['refused a', 'delete ConfigMap|ns/b']);
    s.writer.refused.clear();
    await s.sweep();
    assert.deepEqual(s.writer.requests.at(-1), 'delete ConfigMap|ns/a', 'at once: its grace period is over');
  });

  it('tells the rule of a namespace copy it kept because it holds what is not going, and starts over with it', async () => {
    const s = scripted();
    orphaned(s, 'a');
    s.writer.next = { kept: 'it holds ConfigMap x, not a copy' };
    await sweepOverGrace(s);
    assert.equal(s.events.length, 1);
    assert.match(s.events[0] ?? '', /^r Warning .*: kept namespace a, no longer a copy, though it is an orphan \(SourceDeleted\): it holds ConfigMap x, not a copy$/);
    await s.sweep();
    assert.equal(s.writer.asked.length, 1, 'what it kept is not looked at as the same orphan again');
  });
});

describe('Collector: what a sweep reports', () => {
  const CM = { group: '', version: 'v1', kind: 'ConfigMap' };

  it('reports where the copies recording a rule lie, once per kind and namespace', async () => {
    const { view, copies, reports, sweep } = setup();
    const r = configMapRule('r');
    view.bind(binding(r, p1, [configMap('a', { owner: p1.id })]));
    const elsewhere = copyFrom(p1, 'c', r);
    copies.put(copyFrom(p1, 'a', r));
    copies.put(copyFrom(p1, 'b', r));
    copies.put({ ...elsewhere, metadata: { ...elsewhere.metadata, namespace: 'other' } });
    copies.put(copyFrom(p1, 'd', configMapRule('gone')));
    await sweep();
    assert.equal(reports.length, 1);
    assert.deepEqual(reports[0]?.recorded, [
      { gvk: CM, namespace: 'ns' },
      { gvk: CM, namespace: 'other' },
    ]);
    assert.deepEqual(reports[0]?.unknownKinds, []);
  });

  it('reports no spot for a copy whose record names no rule', async () => {
    const { copies, reports, sweep } = setup();
    copies.put(recorded({ owner: p1.id }));
    await sweep();
    assert.deepEqual(reports[0]?.recorded, []);
  });

  it('reports a kind whose copies are not all known, and where those known lie (they keep the watches that see them)', async () => {
    const copies = new PartlyKnownCopies();
    const { reports, sweep } = setup({ copies });
    copies.put(copyFrom(p1, 'a', configMapRule('r')));
    copies.known = false;
    await sweep();
    assert.deepEqual(reports[0], { recorded: [{ gvk: CM, namespace: 'ns' }], unknownKinds: [CM] });
  });

  it('reports no kind as unknown whose watch is refused or not served: it shows no copy however long it is kept', async () => {
    const copies = new PartlyKnownCopies();
    const { reports, sweep } = setup({ copies });
    copies.put(copyFrom(p1, 'a', configMapRule('r')));
    copies.known = false;
    copies.refused = true;
    await sweep();
    assert.deepEqual(reports[0], { recorded: [{ gvk: CM, namespace: 'ns' }], unknownKinds: [] });
  });

  it('publishes how many copies the last sweep kept and found orphaned, by reason', async () => {
    const { view, copies, sweep } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [configMap('live', { owner: p1.id })]));
    copies.put(copyFrom(p1, 'live', rule));
    copies.put(copyFrom(p1, 'gone-1', rule));
    copies.put(copyFrom(p1, 'gone-2', rule));
    await sweep();
    const values = (await registry.getSingleMetric('cluster_registry_copies')?.get())?.values ?? [];
    assert.deepEqual(values.map((v) => `${String(v.labels['fate'])}|${String(v.labels['reason'])}=${v.value}`).sort(), ['kept|Live=1', 'orphan|SourceDeleted=2']);
  });
});

describe('Collector: its loop', () => {
  it('sweeps nothing before the rules and the registry have been listed', async () => {
    const { view, collector, reports } = setup();
    let listed = false;
    let asked = 0;
    view.listed = () => {
      asked++;
      return listed;
    };
    const stop = new AbortController();
    const running = collector.run(60_000, stop.signal);
    try {
      collector.kick();
      await eventually('the loop looked', () => asked === 1, 5_000);
      assert.deepEqual(reports, []);
      listed = true;
      collector.kick();
      await eventually('a sweep', () => reports.length === 1, 5_000);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('sweeps again at the next turn after a sweep failed', async () => {
    const { copies, collector, reports } = setup();
    let failures = 0;
    const kinds = copies.kinds.bind(copies);
    copies.kinds = () => {
      failures++;
      throw new Error('the cache went away');
    };
    const stop = new AbortController();
    const running = collector.run(60_000, stop.signal);
    try {
      collector.kick();
      await eventually('a sweep failed', () => failures === 1, 5_000);
      copies.kinds = kinds;
      collector.kick();
      await eventually('a sweep', () => reports.length === 1, 5_000);
    } finally {
      stop.abort();
      await running;
    }
  });
});

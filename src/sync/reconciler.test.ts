import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, CLUSTER_SECRET, CORE_RULE_NAMES, coreResourceSyncRules, formatSourceIdentity, SYNC_EVENT_REASONS } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRuleSpec } from '../core/api/types.ts';
import { CopyTargets, ruleState, type RuleState } from '../core/rules/index.ts';
import { ApiError, GcraRateLimiter, NoKindMatchError, silentLogger, type ApiResource, type ReconcileResult } from '../kube/index.ts';
import { countTurns } from '../../test/support/loop-turns.ts';
import { binding, configMap, configMapRule, heavyTemplatesRule, FakeCopies, FakeView, FakeWriter, keyOf, LOCAL_ID, member, NAMESPACE, peer, RecordingRenders, type HeldRequest, type WriterVerb } from '../../test/support/sync-fakes.ts';
import { syncKey, type SyncKey } from './keys.ts';
import { SyncReconciler } from './reconciler.ts';
import { WAIT, Waiters } from './waiters.ts';
import { CopyChangedError } from './writer.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['create', 'get', 'list', 'watch', 'patch', 'update', 'delete'], subresources: [] };
const p1 = peer('p1');
const THIRD = 'third-uid';

/**
 * A reconciler over a fake engine; what it reports and queues again is recorded. `copies`: the
 * local copies (with their budget); `resource`: how the copies' kind is served here.
 */
function setup(o: { maxCopiesPerRule?: number; copies?: FakeCopies; resource?: () => Promise<ApiResource> } = {}) {
  const view = new FakeView();
  view.alive.add(p1.id);
  view.registry = [member(p1)];
  const copies = o.copies ?? new FakeCopies();
  const writer = new FakeWriter(copies);
  const queued: SyncKey[] = [];
  const waiters = new Waiters((k) => queued.push(k));
  const outcomes: string[] = [];
  const events: string[] = [];
  const renders = new RecordingRenders();
  const reconciler = new SyncReconciler({
    view,
    copies,
    writer,
    targets: new CopyTargets(view.localClusterID),
    renders,
    localDiscovery: { resourceFor: o.resource ?? (() => Promise.resolve(CONFIGMAPS)) },
    maxCopiesPerRule: o.maxCopiesPerRule ?? 100,
    waiters,
    status: {
      outcome: (_rule, _peer, object, outcome, opts) => outcomes.push(`${object} ${outcome}${opts?.error ? `: ${opts.error}` : ''}`),
      forget: (_rule, _peer, object) => outcomes.push(`${object} forgotten`),
    },
    events: { event: (_o, type, reason) => events.push(`${type} ${reason}`) },
    log: silentLogger,
  });
  const run = (key: SyncKey, signal = new AbortController().signal): Promise<ReconcileResult> => reconciler.reconcile(key, signal);
  return { view, copies, writer, waiters, queued, outcomes, events, renders, run };
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

  it("deletes nothing its peer's filtered watches only do not show: the peer, asked, still has it", async () => {
    const { view, copies, writer, run } = setup();
    const rule = configMapRule('r');
    view.bind(binding(rule, p1, [], { hidden: ['ns/a'] }));
    copies.put(copyOf(configMap('a'), rule));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, []);
  });

  it("deletes nothing of an owner whose objects its peer's watches leave out (they are listed again: the owner stopped answering)", async () => {
    const { view, copies, writer, run } = setup();
    const rule = configMapRule('r');
    // p1 passed on p3's object; p3 no longer answers us, and p1 reaches it.
    const relayed = (leftOut: string[]) => binding(rule, p1, [], { leftOut, reaches: () => true });
    const made = copyOf(configMap('a'), rule);
    const copy = { ...made, metadata: { ...made.metadata, annotations: { ...made.metadata.annotations, [ANNOTATIONS.ownership]: 'p3-uid' } } };
    view.registry.push(member(peer('p3')));
    view.bind(relayed([LOCAL_ID, 'p3-uid']));
    copies.put(copy);
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, []);
    // Once p1's watches show p3's objects again, p1's word is taken.
    view.bindings.length = 0;
    view.bind(relayed([LOCAL_ID]));
    await run(keyOf(rule, p1, 'a'));
    assert.deepEqual(writer.requests, ['delete ConfigMap|ns/a']);
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

  it("hands the event loop back between one object's templates, holding meanwhile what the peer's cache was charged for the source", async () => {
    const { view, writer, outcomes, renders, run } = setup();
    view.registry = [member({ id: LOCAL_ID, name: 'local' }), member(p1)];
    const rule = heavyTemplatesRule('r');
    view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })], { bytes: 4321 }));
    // The loop's turns while the reconcile runs; the fakes answer at once, so only the pauses turn it.
    const turns = countTurns();
    try {
      await run(keyOf(rule, p1, 'a'));
    } finally {
      turns.stop();
    }
    assert.deepEqual([writer.requests, outcomes], [['create ConfigMap|ns/a'], ['ns/a synced']]);
    assert.ok(turns.count() >= 2, 'the loop turned between the templates');
    assert.deepEqual(renders.said, [4321]);
  });

  // Rendering hands the loop back: whatever changed on that turn is weighed before anything is written.
  const changedWhileRendering: [string, (s: ReturnType<typeof setup>, rule: RuleState, bound: ReturnType<typeof binding>, abort: AbortController) => void][] = [
    ['its rule went', (s) => {
      s.view.rules.delete('r');
      s.view.bindings.length = 0;
    }],
    ['its source went', (_s, _r, bound) => bound.sources.delete('ns/a')],
    ['the reconcile was aborted', (_s, _r, _b, abort) => abort.abort()],
  ];
  it("writes what it rendered when only its rule's status, or its source's cached copy, changed while its templates took turns", async () => {
    const s = setup();
    s.view.registry = [member({ id: LOCAL_ID, name: 'local' }), member(p1)];
    const rule = heavyTemplatesRule('r');
    const bound = binding(rule, p1, [configMap('a', { owner: p1.id })]);
    s.view.bind(bound);
    const done = s.run(keyOf(rule, p1, 'a'));
    setImmediate(() => {
      s.view.rules.set('r', { ...rule, object: { ...rule.object, status: { conditions: [] } } as RuleState['object'] });
      bound.sources.set('ns/a', structuredClone(bound.sources.get('ns/a')!));
    });
    await done;
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a']);
  });

  for (const [what, change] of changedWhileRendering) {
    it(`writes nothing when ${what} while its templates took turns`, async () => {
      const s = setup();
      s.view.registry = [member({ id: LOCAL_ID, name: 'local' }), member(p1)];
      const rule = heavyTemplatesRule('r');
      const bound = binding(rule, p1, [configMap('a', { owner: p1.id })]);
      s.view.bind(bound);
      const abort = new AbortController();
      const done = s.run(keyOf(rule, p1, 'a'), abort.signal);
      setImmediate(() => change(s, rule, bound, abort));
      await done.catch(() => undefined);
      assert.deepEqual(s.writer.requests, []);
    });
  }

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

const p2 = peer('p2');
const third = { name: 'third', id: THIRD };
/** A cluster no Cluster here describes. */
const STRANGER = 'stranger-uid';

type Setup = ReturnType<typeof setup>;

/** What the API server answers a write it does not take, by HTTP code (and reason, where the code says too little). */
function apiError(code: number, reason?: string): ApiError {
  return new ApiError({ code, ...(reason ? { reason } : {}), message: 'as the API server said', method: 'PATCH', path: '/api/v1/namespaces/ns/configmaps/a' });
}

/** The copy `rule` made from p1 of a source ns/`name` that p1 owns, recording `o.from` (p1 unless told) and `o.rule`. */
function recordedCopy(name: string, o: { owner?: string; from?: string; rule?: string } = {}): KubeObject {
  return configMap(name, { owner: o.owner ?? p1.id, source: { clusterID: o.from ?? p1.id, group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: o.rule ?? 'r' }, uid: `copy-${name}` });
}

/** Rule r on p1 over p1's ConfigMap ns/a: the key of a. */
function ownSource(s: Setup, o: { synced?: boolean } = {}): SyncKey {
  const rule = configMapRule('r');
  s.view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })], o));
  return keyOf(rule, p1, 'a');
}

/** Rule r on p1 over ConfigMap ns/a owned by `owner`, which p1 reaches (or not): the key of a. */
function sourceOwnedBy(s: Setup, owner: string, reaches = true): SyncKey {
  const rule = configMapRule('r');
  s.view.bind(binding(rule, p1, [configMap('a', { owner })], reaches ? { reaches: () => true } : {}));
  return keyOf(rule, p1, 'a');
}

/** Rule r on p1 over p1's ns/a, changed since its copy here was made: the key of a (whose reconcile updates the copy). */
function changedSource(s: Setup): SyncKey {
  const rule = configMapRule('r');
  s.copies.put(recordedCopy('a'));
  s.view.bind(binding(rule, p1, [{ ...configMap('a', { owner: p1.id }), data: { k: 'new' } }]));
  return keyOf(rule, p1, 'a');
}

/** Rule r on p1 over p1's ns/a and ns/b, with room for one copy from p1 (set up with maxCopiesPerRule 1): the keys of a and b. */
function twoForOnePlace(s: Setup): [SyncKey, SyncKey] {
  const rule = configMapRule('r');
  s.view.bind(binding(rule, p1, [configMap('a', { owner: p1.id }), configMap('b', { owner: p1.id })]));
  return [keyOf(rule, p1, 'a'), keyOf(rule, p1, 'b')];
}

/** The create of a held on its way while b is reconciled, which finds the one place taken. */
async function bWhileACreates(s: Setup): Promise<{ held: HeldRequest; a: Promise<ReconcileResult>; b: SyncKey }> {
  const [keyA, b] = twoForOnePlace(s);
  const held = s.writer.holdNext('create');
  const a = s.run(keyA);
  await held.reached;
  await s.run(b);
  assert.ok(s.waiters.waitsFor(b, WAIT.ruleCopies('r', p1.id)), 'the place is taken while the create is on its way');
  return { held, a, b };
}

/** The core rule passing registry credentials on, as this member runs it. */
function credentialsRule(): RuleState {
  const core = coreResourceSyncRules(NAMESPACE).find((r) => r.metadata.name === CORE_RULE_NAMES.clusterSecrets);
  assert.ok(core);
  return ruleState(CORE_RULE_NAMES.clusterSecrets, core.spec, core, NAMESPACE);
}

/** The registry credentials Secret `name` in the controller namespace, owned by `owner`. */
function credentials(name: string, owner: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', type: CLUSTER_SECRET.type, metadata: { name, namespace: NAMESPACE, uid: `uid-${name}`, resourceVersion: '1', annotations: { [ANNOTATIONS.ownership]: owner } }, data: {} };
}

/** `c` reading its cluster's credentials from the Secret `name` in the controller namespace. */
function naming(c: Cluster, name: string): Cluster {
  return { ...c, spec: { ...c.spec, authInfo: { secretRef: { name, namespace: NAMESPACE } } } };
}

/** Local copies that also hold copies made without our source record (which the copies' cache finds by name). */
class LegacyCopies extends FakeCopies {
  readonly legacyCopies: KubeObject[] = [];
  override legacy(): KubeObject[] {
    return this.legacyCopies;
  }
}

/** The credentials rule on p1 over p1's credentials Secret, which no Cluster here names (yet): its key. */
function unnamedCredentials(s: Setup): SyncKey {
  const rule = credentialsRule();
  s.view.namespaces.add(NAMESPACE);
  s.view.bind(binding(rule, p1, [credentials('p1-creds', p1.id)]));
  return syncKey(rule.name, p1.name, NAMESPACE, 'p1-creds');
}

interface Blocked {
  readonly what: string;
  readonly options?: Parameters<typeof setup>[0];
  /** Sets the scene; returns the key reconciled. */
  readonly arrange: (s: Setup) => SyncKey;
  /** What the rule's status says of the object. */
  readonly outcome: RegExp;
  /** Each of which looks at the key again; it waits on nothing else. */
  readonly waits: readonly string[];
}

const A = configMap('a');
const BLOCKED: Blocked[] = [
  {
    what: 'whose source another live cluster owns: until that cluster dies or the place of its copy changes',
    arrange: (s) => {
      s.view.alive.add(THIRD);
      s.view.registry.push(member(third));
      return sourceOwnedBy(s, THIRD);
    },
    outcome: /^ns\/a synced$/,
    waits: [WAIT.death(THIRD), WAIT.target(A)],
  },
  {
    what: "whose copy another live source delivers: until that source's cluster dies or the copy changes",
    arrange: (s) => {
      s.view.alive.add(p2.id);
      s.view.registry.push(member(p2), member(third));
      const rule = configMapRule('r');
      s.view.bind(binding(rule, p2, [configMap('a', { owner: THIRD })], { reaches: () => true }));
      s.copies.put(recordedCopy('a', { owner: THIRD, from: p2.id }));
      return sourceOwnedBy(s, THIRD);
    },
    outcome: /^ns\/a synced$/,
    waits: [WAIT.death(p2.id), WAIT.target(A)],
  },
  {
    what: 'whose owner the peer does not reach: until the peer reaches it, or it is alive here to deliver it',
    arrange: (s) => {
      s.view.registry.push(member(third));
      return sourceOwnedBy(s, THIRD, false);
    },
    outcome: /^ns\/a waiting: ns\/a: OwnerNotReachedByPeer$/,
    waits: [WAIT.reach(p1.name, THIRD), WAIT.alive(THIRD)],
  },
  {
    what: 'whose owner is not in the group: until its Cluster is registered here',
    arrange: (s) => sourceOwnedBy(s, STRANGER),
    outcome: /^ns\/a waiting: ns\/a: OwnerNotInGroup$/,
    waits: [WAIT.registered(STRANGER)],
  },
  {
    what: "whose copy another member of the group owns: until the registry changes, that owner is alive again, or the copy changes",
    arrange: (s) => {
      s.view.registry.push(member(p2));
      s.copies.put(recordedCopy('a', { owner: p2.id, from: p2.id }));
      return ownSource(s);
    },
    outcome: /^ns\/a waiting: ns\/a: OwnerWouldChange$/,
    waits: [WAIT.clusters, WAIT.alive(p2.id), WAIT.target(A)],
  },
  {
    what: 'from a peer that does not answer: until it answers again',
    arrange: (s) => {
      s.view.alive.delete(p1.id);
      return ownSource(s);
    },
    outcome: /^ns\/a waiting: ns\/a: SourceUnreachable$/,
    waits: [WAIT.alive(p1.id)],
  },
  {
    what: 'from a peer whose watches fail (its last listing is all there is): until it answers again',
    arrange: (s) => ownSource(s, { synced: false }),
    outcome: /^ns\/a waiting: ns\/a: SourceUnreachable$/,
    waits: [WAIT.alive(p1.id)],
  },
  {
    what: "whose copy's place holds a local object: until that object changes",
    arrange: (s) => {
      s.copies.put(configMap('a'));
      return ownSource(s);
    },
    outcome: /^ns\/a synced$/,
    waits: [WAIT.target(A)],
  },
  {
    what: 'whose namespace is not here: until it is',
    arrange: (s) => {
      s.view.namespaces.delete('ns');
      return ownSource(s);
    },
    outcome: /^ns\/a waiting: ns\/a: namespace ns does not exist here; waiting for it$/,
    waits: [WAIT.namespace('ns')],
  },
  {
    what: 'whose mutation fails on the registry: until the registry changes',
    arrange: (s) => {
      const rule = configMapRule('r', [{ mutations: { overrides: [{ type: 'replace', path: '/data/k', value: '{{ .Cluster.Nope.Deeper }}' }] } }]);
      s.view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
      return keyOf(rule, p1, 'a');
    },
    outcome: /^ns\/a failed: could not mutate ns\/a: /,
    waits: [WAIT.clusters],
  },
  {
    what: "over its rule's budget of copies from the peer: until one of them goes",
    options: { maxCopiesPerRule: 0 },
    arrange: (s) => ownSource(s),
    outcome: /^ns\/a failed: ns\/a: the rule holds its budget of 0 copies from this peer here, so no more are made from p1 \(the controller's --rule-max-copies\)$/,
    waits: [WAIT.ruleCopies('r', p1.id)],
  },
  {
    what: 'over the budget of all copies from the peer: until one of them goes',
    options: { copies: new FakeCopies({ maxObjects: 0, maxBytes: 2 ** 30 }) },
    arrange: (s) => ownSource(s),
    outcome: /^ns\/a failed: ns\/a: the copies from this peer hold their budget of 0 objects .*--peer-cache-max-objects and --peer-cache-max-bytes\)$/,
    waits: [WAIT.peerCopies(p1.id)],
  },
  {
    what: 'the trust boundary refuses until the registry says more: until the registry changes',
    arrange: (s) => unnamedCredentials(s),
    outcome: /^cluster-registry\/p1-creds waiting: cluster-registry\/p1-creds: credentials are synced only for the cluster whose Cluster names them/,
    waits: [WAIT.clusters],
  },
];

describe('SyncReconciler: what a blocked key waits for', () => {
  for (const b of BLOCKED) {
    it(`parks a key ${b.what}`, async () => {
      const s = setup(b.options);
      const key = b.arrange(s);
      await s.run(key);
      assert.deepEqual(s.writer.requests, [], 'nothing written');
      assert.match(s.outcomes.join('\n'), b.outcome);
      assert.deepEqual(
        b.waits.filter((e) => s.waiters.waitsFor(key, e)),
        b.waits,
      );
      for (const e of b.waits) s.waiters.release(e);
      assert.deepEqual(
        s.queued,
        b.waits.map(() => key),
      );
      assert.equal(s.waiters.size, 0, 'it waited on nothing else');
    });
  }

  it('asks whether the source a copy records still delivers it in turns with the rest of the process', async () => {
    const s = setup();
    const delivered = BLOCKED.find((b) => b.what.startsWith('whose copy another live source delivers'))!;
    const key = delivered.arrange(s);
    // The fake's answer comes after one pause, as the engine's may when templates must say it.
    const turns = countTurns();
    try {
      await s.run(key);
    } finally {
      turns.stop();
    }
    assert.deepEqual(s.writer.requests, []);
    assert.ok(turns.count() >= 1, 'the loop turned while it was asked');
  });

  it('forgets what a key waited for once it is looked at again', async () => {
    const s = setup();
    s.view.namespaces.delete('ns');
    const key = ownSource(s);
    await s.run(key);
    s.view.namespaces.add('ns');
    await s.run(key);
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a']);
    assert.equal(s.waiters.waitsFor(key, WAIT.namespace('ns')), false);
  });

  it('delivers what the trust boundary held back once the registry says whose it is', async () => {
    const s = setup();
    const key = unnamedCredentials(s);
    await s.run(key);
    s.view.registry = [naming(member(p1), 'p1-creds')];
    await s.run(key);
    assert.deepEqual(s.writer.requests, [`create Secret|${NAMESPACE}/p1-creds`]);
  });
});

describe('SyncReconciler: writes that fail', () => {
  it('reports a create the API server forbids, and leaves the retry to the queue', async () => {
    const s = setup();
    const forbidden = apiError(403);
    s.writer.failNext('create', forbidden);
    await assert.rejects(s.run(ownSource(s)), forbidden);
    assert.match(s.outcomes.join('\n'), /^ns\/a failed: .*403 Forbidden: as the API server said$/);
    assert.deepEqual(s.events, [`Warning ${SYNC_EVENT_REASONS.notReconciled}`]);
  });

  const refused: [string, WriterVerb, (s: Setup) => SyncKey, ApiError][] = [
    ['a copy the API server refuses as invalid', 'create', ownSource, apiError(422)],
    ['an update the API server cannot decode', 'update', changedSource, apiError(400)],
  ];
  for (const [what, verb, arrange, err] of refused) {
    it(`reports ${what} as the rule's doing, and does not retry it`, async () => {
      const s = setup();
      s.writer.failNext(verb, err);
      assert.deepEqual(await s.run(arrange(s)), {});
      assert.deepEqual(s.outcomes, [`ns/a failed: ns/a: the API server refused the copy: ${err.code} ${err.reason}: as the API server said`]);
      assert.deepEqual(s.events, [`Warning ${SYNC_EVENT_REASONS.notReconciled}`]);
    });
  }

  const stale: [string, () => Error][] = [
    ['its update conflicts with a newer version', () => apiError(409)],
    ['the copy was replaced since it was read', () => new CopyChangedError()],
  ];
  for (const [what, err] of stale) {
    it(`looks again with fresh data when ${what}, reporting nothing`, async () => {
      const s = setup();
      s.writer.failNext('update', err());
      assert.deepEqual(await s.run(changedSource(s)), { requeue: true });
      assert.deepEqual([s.outcomes, s.events], [[], []]);
    });
  }

  it('reports an update of a copy gone meanwhile, and leaves the retry to the queue', async () => {
    const s = setup();
    const notFound = apiError(404);
    s.writer.failNext('update', notFound);
    await assert.rejects(s.run(changedSource(s)), notFound);
    assert.match(s.outcomes.join('\n'), /^ns\/a failed: .*404 NotFound/);
  });

  it('gives back the place a failed create took in the budget, and wakes the key waiting for it', async () => {
    const s = setup({ maxCopiesPerRule: 1 });
    const { held, a, b } = await bWhileACreates(s);
    held.fail(apiError(403));
    await assert.rejects(a);
    assert.deepEqual(s.queued, [b]);
    await s.run(b);
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a', 'create ConfigMap|ns/b']);
  });

  it("keeps the place of a create the API server took, before the copy's watch shows it: the key waiting for it waits on", async () => {
    const s = setup({ maxCopiesPerRule: 1 });
    s.writer.cacheBehind = true;
    const { held, a, b } = await bWhileACreates(s);
    held.release();
    assert.deepEqual(await a, {});
    assert.deepEqual(s.queued, []);
    assert.ok(s.waiters.waitsFor(b, WAIT.ruleCopies('r', p1.id)));
  });

  it('gives back the place of a copy the API server refused', async () => {
    const s = setup({ maxCopiesPerRule: 1 });
    const [a, b] = twoForOnePlace(s);
    s.writer.failNext('create', apiError(422));
    await s.run(a);
    await s.run(b);
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a', 'create ConfigMap|ns/b']);
  });

  it('reports nothing of a write cut short by shutdown', async () => {
    const s = setup();
    const stop = new AbortController();
    const held = s.writer.holdNext('create');
    const run = s.run(ownSource(s), stop.signal);
    await held.reached;
    stop.abort();
    held.fail(new DOMException('aborted', 'AbortError'));
    await assert.rejects(run, { name: 'AbortError' });
    assert.deepEqual([s.outcomes, s.events], [[], []]);
  });
});

describe('SyncReconciler: a create that finds something in the way', () => {
  it('leaves alone a local object of that name the copies cache does not show', async () => {
    const s = setup();
    s.writer.failNext('create', apiError(409, 'AlreadyExists'));
    s.writer.others.set('ns/a', configMap('a'));
    const key = ownSource(s);
    assert.deepEqual(await s.run(key), {});
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a']);
    assert.deepEqual(s.outcomes, ['ns/a synced']);
    assert.ok(s.waiters.waitsFor(key, WAIT.target(A)));
  });

  it('updates its own copy the copies cache did not show yet', async () => {
    const s = setup();
    s.writer.failNext('create', apiError(409, 'AlreadyExists'));
    s.writer.others.set('ns/a', { ...recordedCopy('a'), data: { k: 'old' } });
    await s.run(ownSource(s));
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a', 'update ConfigMap|ns/a']);
  });

  it('looks again when what was in the way is gone before it is read', async () => {
    const s = setup();
    s.writer.failNext('create', apiError(409, 'AlreadyExists'));
    assert.deepEqual(await s.run(ownSource(s)), { requeue: true });
    assert.deepEqual(s.outcomes, []);
  });

  it('leaves alone a local object where the trust boundary would refuse the copy', async () => {
    const s = setup();
    const rule = configMapRule('r');
    const source = configMap('a', { owner: p1.id });
    s.view.bind(binding(rule, p1, [{ ...source, metadata: { ...source.metadata, namespace: 'kube-system' } }]));
    s.view.namespaces.add('kube-system');
    s.writer.others.set('kube-system/a', { ...configMap('a'), metadata: { ...configMap('a').metadata, namespace: 'kube-system' } });
    await s.run(syncKey('r', p1.name, 'kube-system', 'a'));
    assert.deepEqual([s.writer.requests, s.outcomes], [[], ['kube-system/a synced']]);
  });
});

describe('SyncReconciler: status', () => {
  const WITH_STATUS: ApiResource = { ...CONFIGMAPS, subresources: ['status'] };
  /** Rule r syncing status, on p1 over p1's ns/a which has a status. */
  function statusSource(s: Setup): SyncKey {
    const rule = configMapRule('r', [{ mutations: { syncStatus: true } }]);
    s.view.bind(binding(rule, p1, [{ ...configMap('a', { owner: p1.id }), status: { phase: 'Ready' } }]));
    return keyOf(rule, p1, 'a');
  }

  it("writes a copy's status through its subresource when the rule syncs status", async () => {
    const s = setup({ resource: () => Promise.resolve(WITH_STATUS) });
    await s.run(statusSource(s));
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a', 'status ConfigMap|ns/a']);
  });

  it('writes no status where the kind has no status subresource here', async () => {
    const s = setup();
    await s.run(statusSource(s));
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a']);
  });

  it('looks again when its status write conflicts', async () => {
    const s = setup({ resource: () => Promise.resolve(WITH_STATUS) });
    s.writer.failNext('status', apiError(409));
    assert.deepEqual(await s.run(statusSource(s)), { requeue: true });
  });

  it('reports a status the API server refuses, and does not retry it', async () => {
    const s = setup({ resource: () => Promise.resolve(WITH_STATUS) });
    s.writer.failNext('status', apiError(422));
    assert.deepEqual(await s.run(statusSource(s)), {});
    assert.deepEqual(s.outcomes, ['ns/a failed: ns/a: the API server refused the copy: 422 Invalid: as the API server said']);
  });
});

describe('SyncReconciler: a source gone', () => {
  it('leaves a copy already on its way out', async () => {
    const s = setup();
    s.view.bind(binding(configMapRule('r'), p1, []));
    const copy = recordedCopy('a');
    s.copies.put({ ...copy, metadata: { ...copy.metadata, deletionTimestamp: '2024-01-01T00:00:00Z' } });
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual(s.writer.requests, []);
  });

  it('leaves the copy another rule made of the same source', async () => {
    const s = setup();
    s.view.bind(binding(configMapRule('r'), p1, []));
    s.copies.put(recordedCopy('a', { rule: 's' }));
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual(s.writer.requests, []);
  });

  it('keeps credentials the registry reads their owner with, though their source is gone', async () => {
    const s = setup();
    const rule = ruleState('r', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{}] } satisfies ResourceSyncRuleSpec, undefined, NAMESPACE);
    s.view.registry = [naming(member(p1), 'p1-creds')];
    s.view.namespaces.add(NAMESPACE);
    s.view.bind(binding(rule, p1, []));
    const source = { clusterID: p1.id, group: '', kind: 'Secret', namespace: NAMESPACE, name: 'p1-creds', rule: 'r' };
    s.copies.put({ ...credentials('p1-creds', p1.id), metadata: { ...credentials('p1-creds', p1.id).metadata, annotations: { [ANNOTATIONS.ownership]: p1.id, [ANNOTATIONS.source]: formatSourceIdentity(source) } } });
    await s.run(syncKey('r', p1.name, NAMESPACE, 'p1-creds'));
    assert.deepEqual(s.writer.requests, []);
  });

  it('deletes by name a copy made without our source record, as upstream makes them', async () => {
    const copies = new LegacyCopies();
    const s = setup({ copies });
    s.view.bind(binding(configMapRule('r'), p1, []));
    copies.legacyCopies.push(configMap('a', { owner: p1.id }));
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual(s.writer.requests, ['delete ConfigMap|ns/a']);
  });

  it('leaves a copy whose source record does not parse: it is no copy made without one', async () => {
    const copies = new LegacyCopies();
    const s = setup({ copies });
    s.view.bind(binding(configMapRule('r'), p1, []));
    const copy = configMap('a', { owner: p1.id });
    copies.legacyCopies.push({ ...copy, metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, [ANNOTATIONS.source]: 'not a record' } } });
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual(s.writer.requests, []);
  });

  it('looks again when the copy changed since the cache showed it, keeping its status', async () => {
    const s = setup();
    s.view.bind(binding(configMapRule('r'), p1, []));
    s.copies.put(recordedCopy('a'));
    s.writer.answerNextDelete('changed');
    assert.deepEqual(await s.run(keyOf(configMapRule('r'), p1, 'a')), { requeue: true });
    assert.deepEqual(s.outcomes, []);
  });

  it('says so when a Namespace copy whose source went is kept, since it holds more than copies', async () => {
    const s = setup();
    s.view.bind(binding(configMapRule('r'), p1, []));
    s.copies.put(recordedCopy('a'));
    s.writer.answerNextDelete({ kept: 'it holds a Secret of its own' });
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual(s.events, [`Warning ${SYNC_EVENT_REASONS.namespaceKept}`]);
    assert.deepEqual(s.outcomes, ['ns/a forgotten']);
  });

  it('reports a delete that fails, and leaves the retry to the queue', async () => {
    const s = setup();
    s.view.bind(binding(configMapRule('r'), p1, []));
    s.copies.put(recordedCopy('a'));
    const forbidden = apiError(403);
    s.writer.failNext('delete', forbidden);
    await assert.rejects(s.run(keyOf(configMapRule('r'), p1, 'a')), forbidden);
    assert.match(s.outcomes.join('\n'), /^ns\/a failed: .*403 Forbidden/);
  });
});

describe('SyncReconciler: what it reports', () => {
  it('records no Event for a key it wrote nothing for', async () => {
    const s = setup();
    s.copies.put(configMap('a'));
    await s.run(ownSource(s));
    assert.deepEqual([s.writer.requests, s.events], [[], []]);
  });

  it('records an Event for every copy it wrote', async () => {
    const s = setup();
    await s.run(ownSource(s));
    assert.deepEqual(s.events, [`Normal ${SYNC_EVENT_REASONS.reconciled}`]);
  });

  it('forgets the echo of a write of its own still on the way for the copy it decides on', async () => {
    const s = setup();
    s.copies.put(recordedCopy('a'));
    await s.run(ownSource(s));
    assert.deepEqual(s.writer.forgotten, ['copy-a@1']);
  });

  it('forgets a source the rule no longer watches, leaving its copy to the collector', async () => {
    const s = setup();
    s.view.bind({ ...binding(configMapRule('r'), p1, [configMap('a', { owner: p1.id })]), lookup: () => ({ inScope: false }) });
    s.copies.put(recordedCopy('a'));
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual([s.writer.requests, s.outcomes], [[], ['ns/a forgotten']]);
  });

  it('forgets a source the rule does not take', async () => {
    const s = setup();
    const rule = configMapRule('r', [{ match: [{ namespaces: ['other'] }] }]);
    s.view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    await s.run(keyOf(rule, p1, 'a'));
    assert.deepEqual([s.writer.requests, s.outcomes], [[], ['ns/a forgotten']]);
  });

  it("reports as failed a copy the rule's mutations left without an owner", async () => {
    const s = setup();
    s.view.registry.push(member({ name: 'local', id: LOCAL_ID }));
    const rule = configMapRule('r', [{ mutations: { overrides: [{ type: 'remove', path: `/metadata/annotations/${ANNOTATIONS.ownership.replace('/', '~1')}` }] } }]);
    s.view.bind(binding(rule, p1, [configMap('a', { owner: p1.id })]));
    await s.run(keyOf(rule, p1, 'a'));
    assert.deepEqual([s.writer.requests, s.outcomes, s.events], [[], ['ns/a failed: ns/a: NoOwner'], [`Warning ${SYNC_EVENT_REASONS.notReconciled}`]]);
  });

  it('says so, and writes nothing, when a key comes back sooner than its rate allows', async () => {
    const s = setup();
    const rule = configMapRule('r');
    s.view.bind({ ...binding(rule, p1, [configMap('a', { owner: p1.id })]), limiter: new GcraRateLimiter({ ratePerSecond: 1, burst: 0, maxKeys: 10, now: () => 0 }) });
    await s.run(keyOf(rule, p1, 'a'));
    assert.deepEqual(await s.run(keyOf(rule, p1, 'a')), { requeueAfter: 1000 });
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a']);
    assert.deepEqual(s.events.at(-1), `Warning ${SYNC_EVENT_REASONS.rateLimited}`);
  });

  it('does nothing with a binding whose cache cannot be read yet', async () => {
    const s = setup();
    s.view.bind({ ...binding(configMapRule('r'), p1, [configMap('a', { owner: p1.id })]), readable: false });
    await s.run(keyOf(configMapRule('r'), p1, 'a'));
    assert.deepEqual([s.writer.requests, s.outcomes], [[], []]);
  });
});

describe('SyncReconciler: the kind here', () => {
  it('reports a copy whose kind is no longer served here, and looks again later', async () => {
    const s = setup({ resource: () => Promise.reject(new NoKindMatchError('no ConfigMap')) });
    assert.deepEqual(await s.run(ownSource(s)), { requeue: true });
    assert.match(s.outcomes.join('\n'), /^ns\/a failed: ns\/a: kind ConfigMap of v1 is not served here/);
  });

  it('writes the copy of a namespaced source without its namespace where its kind is cluster-scoped here', async () => {
    const s = setup({ resource: () => Promise.resolve({ ...CONFIGMAPS, namespaced: false }) });
    await s.run(ownSource(s));
    assert.deepEqual(s.writer.requests, ['create ConfigMap|/a']);
  });

  it('fails the copy of a cluster-scoped source where its kind is namespaced here', async () => {
    const s = setup();
    const rule = configMapRule('r');
    const source = configMap('a', { owner: p1.id });
    s.view.bind(binding(rule, p1, [{ ...source, metadata: { ...source.metadata, namespace: undefined } }]));
    await s.run(syncKey('r', p1.name, '', 'a'));
    assert.deepEqual([s.writer.requests, s.outcomes], [[], ['a failed: a: ConfigMap is namespaced here, but the copy has no namespace']]);
  });
});

describe('SyncReconciler: the peer-wide budget', () => {
  it('makes no more copies from a peer than all copies from it may hold, whichever rule makes them, and makes the next when one goes', async () => {
    const s = setup({ copies: new FakeCopies({ maxObjects: 1, maxBytes: 2 ** 30 }) });
    const r = configMapRule('r');
    const t = configMapRule('t');
    s.view.bind(binding(r, p1, [configMap('a', { owner: p1.id })]), binding(t, p1, [configMap('b', { owner: p1.id })]));
    await s.run(keyOf(r, p1, 'a'));
    await s.run(keyOf(t, p1, 'b'));
    assert.deepEqual(s.writer.requests, ['create ConfigMap|ns/a']);
    const made = s.copies.get({ kind: 'ConfigMap' }, 'ns', 'a');
    assert.ok(made);
    s.copies.remove(made);
    await s.run(keyOf(r, p1, 'elsewhere'));
    assert.deepEqual(s.queued, [keyOf(t, p1, 'b')]);
  });

  it("takes no room there for the registry's own entries: the registry keeps flowing from a peer whose workloads fill it", async () => {
    const s = setup({ copies: new FakeCopies({ maxObjects: 0, maxBytes: 2 ** 30 }) });
    const rule = credentialsRule();
    s.view.namespaces.add(NAMESPACE);
    s.view.registry = [naming(member(p1), 'p1-creds')];
    s.view.bind(binding(rule, p1, [credentials('p1-creds', p1.id)]));
    await s.run(syncKey(rule.name, p1.name, NAMESPACE, 'p1-creds'));
    assert.deepEqual(s.writer.requests, [`create Secret|${NAMESPACE}/p1-creds`]);
  });
});

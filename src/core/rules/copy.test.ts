import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreResourceSyncRules } from '../api/core-rules.ts';
import { ANNOTATIONS, API_GROUP_VERSION, CORE_RULE_NAMES, KINDS, LABELS } from '../api/keys.ts';
import { formatSourceIdentity, ownerOf, sourceIdentityOf, type SourceIdentity } from '../api/source-identity.ts';
import type { Cluster, KubeObject, ResourceSyncRuleSpec } from '../api/types.ts';
import { copyPlace, CopyTargets, decideCopy, desiredCopy, ruleTakes, standsAt } from './copy.ts';
import { runThrough } from './pausable.ts';
import { RuleError } from './errors.ts';
import { DECISION_REASONS as R, type OwnershipFacts } from './ownership.ts';
import { ruleState, type PeerRef, type RuleState } from './rule-state.ts';

const NS = 'cluster-registry';
const LOCAL = 'local-uid';
const PEER = 'peer-uid';
const OTHER = 'other-uid';
/** A cluster no Cluster here describes. */
const STRANGER = 'stranger-uid';
const PEER_REF: PeerRef = { id: PEER, name: 'peer', ownCluster: () => undefined };
const CONFIGMAPS: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{}] };

/** The ResourceSyncRule `name` with `spec` (ConfigMaps, every one of them, unless told). */
function rule(spec: ResourceSyncRuleSpec = CONFIGMAPS, name = 'r'): RuleState {
  return ruleState(name, spec, { apiVersion: API_GROUP_VERSION, kind: KINDS.resourceSyncRule, metadata: { name }, spec }, NS);
}

/** A built-in rule over `spec` with the narrowing and adoption given. */
function builtin(o: Pick<RuleState, 'accepts' | 'adopts'>, spec: ResourceSyncRuleSpec = CONFIGMAPS): RuleState {
  return ruleState('builtin/test', spec, undefined, NS, o);
}

/** ConfigMap ns/`name` as a peer holds it: owned by `owner`, a copy recording `source`, when given. */
function configMap(name: string, o: { owner?: string; source?: SourceIdentity; namespace?: string; rv?: string; status?: unknown } = {}): KubeObject {
  const annotations: Record<string, string> = {};
  const labels: Record<string, string> = {};
  if (o.owner) annotations[ANNOTATIONS.ownership] = labels[LABELS.ownership] = o.owner;
  if (o.source) annotations[ANNOTATIONS.source] = formatSourceIdentity(o.source);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: o.namespace ?? 'ns', uid: `uid-${name}`, resourceVersion: o.rv ?? '1', annotations, labels },
    data: { k: 'v' },
    ...(o.status === undefined ? {} : { status: o.status }),
  };
}

/** The Cluster `name` describing `id`, owned by `owner` when given. */
function entry(name: string, id: string, owner?: string): Cluster {
  const marks = owner ? { annotations: { [ANNOTATIONS.ownership]: owner }, labels: { [LABELS.ownership]: owner } } : {};
  return { apiVersion: API_GROUP_VERSION, kind: KINDS.cluster, metadata: { name, ...marks }, spec: { clusterID: id } };
}

function coreSpec(name: string): ResourceSyncRuleSpec {
  const core = coreResourceSyncRules(NS).find((r) => r.metadata.name === name);
  assert.ok(core, name);
  return core.spec;
}

const CTX = { localClusterID: LOCAL, clusters: [entry('local', LOCAL), entry('peer', PEER)] };

describe('ruleTakes', () => {
  const cases: [string, RuleState, KubeObject, boolean][] = [
    ['a source the rule matches', rule(), configMap('a', { owner: PEER }), true],
    ['a source with no owner, as the peer made it', rule(), configMap('a'), true],
    ['an object this cluster owns', rule(), configMap('a', { owner: LOCAL }), false],
    ['our own copy coming back through the peer', rule(), configMap('a', { owner: OTHER, source: { clusterID: LOCAL, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a' } }), false],
    ['a source outside what the rule matches', rule({ ...CONFIGMAPS, rules: [{ match: [{ namespaces: ['other'] }] }] }), configMap('a'), false],
    ['an object of another kind', rule(), { ...configMap('a'), kind: 'Secret' }, false],
    ['anything, for an invalid rule', rule({ ...CONFIGMAPS, rules: [{ match: [{ content: [{ key: '', value: 'x' }] }] }] }), configMap('a'), false],
    ["a source a built-in rule's narrowing refuses", builtin({ accepts: () => false }), configMap('a'), false],
    ["a source a built-in rule's narrowing accepts", builtin({ accepts: () => true }), configMap('a'), true],
  ];
  for (const [what, r, source, taken] of cases) {
    it(`${taken ? 'takes' : 'never takes'} ${what}`, () => {
      assert.equal(ruleTakes(r, PEER_REF, source, LOCAL)?.matched ?? false, taken);
    });
  }

  it("asks a built-in rule's narrowing about the peer the source comes from", () => {
    const asked: string[] = [];
    ruleTakes(builtin({ accepts: (_o, p) => (asked.push(p.id), true) }), PEER_REF, configMap('a'), LOCAL);
    assert.deepEqual(asked, [PEER]);
  });

  it('says which rules of the spec matched, in order', () => {
    const r = rule({ ...CONFIGMAPS, rules: [{ match: [{ namespaces: ['ns'] }] }, { match: [{ namespaces: ['other'] }] }, {}] });
    assert.deepEqual(ruleTakes(r, PEER_REF, configMap('a'), LOCAL)?.matchedRules, [{ match: [{ namespaces: ['ns'] }] }, {}]);
  });
});

describe('desiredCopy', () => {
  it('makes no copy of a source the rule does not take', () => {
    assert.equal(desiredCopy(rule(), PEER_REF, configMap('a', { owner: LOCAL }), CTX), undefined);
  });

  it('gives a copy of an unowned source to the peer it comes from, marked so it can be found', () => {
    const desired = desiredCopy(rule(), PEER_REF, configMap('a'), CTX)?.desired;
    assert.ok(desired);
    assert.deepEqual([ownerOf(desired), desired.metadata.labels?.[LABELS.ownership]], [PEER, PEER]);
  });

  it('keeps the owner a source already has, however many members it went through', () => {
    const desired = desiredCopy(rule(), PEER_REF, configMap('a', { owner: OTHER }), CTX)?.desired;
    assert.equal(desired && ownerOf(desired), OTHER);
  });

  it('records the source it was made from: the peer, the object and the rule', () => {
    const desired = desiredCopy(rule(), PEER_REF, configMap('a', { owner: OTHER }), CTX)?.desired;
    assert.deepEqual(desired && sourceIdentityOf(desired), { clusterID: PEER, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', rule: 'r' });
  });

  it('applies the mutations of every rule of the spec that matched', () => {
    const r = rule({ ...CONFIGMAPS, rules: [{ mutations: { labels: { add: { first: '1' } } } }, { match: [{ namespaces: ['other'] }], mutations: { labels: { add: { skipped: '1' } } } }, { mutations: { labels: { add: { second: '2' } } } }] });
    const labels = desiredCopy(r, PEER_REF, configMap('a'), CTX)?.desired.metadata.labels ?? {};
    assert.deepEqual([labels['first'], labels['skipped'], labels['second']], ['1', undefined, '2']);
  });

  const statuses: [string, ResourceSyncRuleSpec['rules'], boolean][] = [
    ['no matched rule syncs status', [{}], false],
    ['a matched rule syncs status', [{}, { mutations: { syncStatus: true } }], true],
  ];
  for (const [what, rules, kept] of statuses) {
    it(`${kept ? 'keeps' : 'drops'} the source's status when ${what}`, () => {
      const copy = desiredCopy(rule({ ...CONFIGMAPS, rules }), PEER_REF, configMap('a', { status: { phase: 'Ready' } }), CTX);
      assert.deepEqual([copy?.mutations.syncStatus, copy?.desired['status']], [kept, kept ? { phase: 'Ready' } : undefined]);
    });
  }

  it('throws a RuleError when a mutation fails on the source', () => {
    const r = rule({ ...CONFIGMAPS, rules: [{ mutations: { overrides: [{ type: 'replace', path: '/data/k', value: '{{ .Cluster.Spec.ClusterID }}' }] } }] });
    assert.throws(() => desiredCopy(r, PEER_REF, configMap('a'), { ...CTX, clusters: [] }), RuleError);
  });

  const registryOwners: [string, string, string][] = [
    ['the core Cluster rule passes an unowned entry of another cluster on for that cluster', CORE_RULE_NAMES.clusters, OTHER],
    ['a rule of another name over the same spec gives it to the peer', 'r', PEER],
  ];
  for (const [what, name, owner] of registryOwners) {
    it(`owns copies of registry entries as the rule's name says: ${what}`, () => {
      const desired = desiredCopy(rule(coreSpec(CORE_RULE_NAMES.clusters), name), PEER_REF, entry('other', OTHER), CTX)?.desired;
      assert.equal(desired && ownerOf(desired), owner);
    });
  }
});

describe('decideCopy', () => {
  const registered = new Set([LOCAL, PEER, OTHER]);
  const facts: OwnershipFacts = { localClusterID: LOCAL, syncedFromClusterID: PEER, alivePeerIDs: new Set([PEER]), ownerRegistered: (id) => registered.has(id) };
  const decide = (r: RuleState, c: { source: KubeObject; desired: KubeObject; current?: KubeObject }) => decideCopy(r, PEER_REF, facts, { current: undefined, syncStatus: false, clusters: CTX.clusters, ...c });

  it('creates a copy by the ownership table when nothing is at its place', () => {
    const source = configMap('a', { owner: PEER });
    assert.deepEqual(decide(rule(), { source, desired: source }), { action: 'create', reason: R.create, writeStatus: false });
  });

  it('makes no copy of an object whose owner is not in the group', () => {
    const source = configMap('a', { owner: STRANGER });
    assert.equal(decide(rule(), { source, desired: source }).reason, R.ownerNotInGroup);
  });

  it('copies the registry entry of a cluster not in the group yet: it is how that cluster joins', () => {
    const source = entry('stranger', STRANGER, STRANGER);
    assert.deepEqual(decide(rule(coreSpec(CORE_RULE_NAMES.clusters)), { source, desired: source }), { action: 'create', reason: R.create, writeStatus: false });
  });

  const fromOwner: SourceIdentity = { clusterID: OTHER, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', rule: 'r' };
  const deliveredByOwner = configMap('a', { owner: OTHER, source: fromOwner });
  const passedOn = configMap('a', { owner: OTHER, source: { ...fromOwner, clusterID: PEER } });

  it("never puts a peer's unowned copy of another cluster's object over the copy that cluster delivered itself", () => {
    assert.deepEqual(decide(rule(), { source: configMap('a'), desired: passedOn, current: deliveredByOwner }), { action: 'none', reason: R.deliveredByAnotherSource, writeStatus: false });
  });

  it("updates the owner's own delivery from a peer's source that names that owner", () => {
    assert.equal(decide(rule(), { source: configMap('a', { owner: OTHER }), desired: passedOn, current: deliveredByOwner }).action, 'update');
  });

  /** The rule with an adoptionPolicy, made here or (a copy of it) on the peer. */
  const adopting = (adoptionPolicy: ResourceSyncRuleSpec['adoptionPolicy'], madeOn?: string): RuleState => {
    const spec = { ...CONFIGMAPS, adoptionPolicy };
    const annotations = madeOn ? { [ANNOTATIONS.ownership]: madeOn } : undefined;
    return ruleState('r', spec, { apiVersion: API_GROUP_VERSION, kind: KINDS.resourceSyncRule, metadata: { name: 'r', ...(annotations ? { annotations } : {}) }, spec }, NS);
  };
  const differing = { ...configMap('a'), data: { k: 'local' } };
  const adoptions: [string, RuleState, KubeObject, string][] = [
    ['a built-in rule adopting it takes it over', builtin({ adopts: () => true }), configMap('a'), R.update],
    ['a built-in rule not adopting it leaves it', builtin({ adopts: () => false }), configMap('a'), R.locallyOwned],
    ['a ResourceSyncRule leaves it by default', rule(), configMap('a'), R.locallyOwned],
    ['Never leaves it, identical or not', adopting('Never'), configMap('a'), R.locallyOwned],
    ['IfIdentical takes over one that holds the copy already', adopting('IfIdentical'), configMap('a'), R.adopt],
    ['IfIdentical leaves one that holds something else', adopting('IfIdentical'), differing, R.locallyOwned],
    ['Always takes over one that holds something else', adopting('Always'), differing, R.adopt],
    ["Always from a peer's copy of the rule leaves it: adoption is only the rule's author's", adopting('Always', PEER), differing, R.locallyOwned],
  ];
  for (const [what, r, current, reason] of adoptions) {
    it(`decides on a local object with no owner at the copy's place as the rule adopts it: ${what}`, () => {
      const d = decide(r, { source: configMap('a', { owner: PEER }), desired: configMap('a', { owner: PEER }), current });
      assert.deepEqual(d, { action: reason === R.locallyOwned ? 'none' : 'update', reason, writeStatus: false });
    });
  }

  it("asks a built-in rule about adopting the local object with the peer and this cluster's registry", () => {
    const asked: unknown[] = [];
    const r = builtin({ adopts: (local, p, clusters) => (asked.push([local.metadata.name, p.id, clusters.length]), false) });
    decide(r, { source: configMap('a', { owner: PEER }), desired: configMap('a', { owner: PEER }), current: configMap('local') });
    assert.deepEqual(asked, [['local', PEER, CTX.clusters.length]]);
  });
});

describe('copyPlace', () => {
  const cases: [string, KubeObject, string][] = [
    ['a namespaced object of the core group', configMap('a'), '/v1/ConfigMap|ns/a'],
    ['a cluster-scoped object of a named group', entry('peer', PEER), `${API_GROUP_VERSION}/Cluster|/peer`],
  ];
  for (const [what, o, place] of cases) {
    it(`names group, version, kind, namespace and name of ${what}`, () => {
      assert.equal(copyPlace(o), place);
    });
  }
});

describe('standsAt', () => {
  const at = (o: KubeObject): string => copyPlace(o);
  const inNs = configMap('a', { namespace: 'ns' });
  const noNs = { ...inNs, metadata: { ...inNs.metadata, namespace: undefined } } as KubeObject;
  const cases: [string, KubeObject, string | undefined | null, boolean][] = [
    ['the very place', inNs, at(inNs), true],
    ['another namespace', inNs, at(configMap('a', { namespace: 'other' })), false],
    ['another name', inNs, at(configMap('b', { namespace: 'ns' })), false],
    ['a copy without namespace (cluster-scoped here) where the rule gave one', noNs, at(inNs), true],
    ['a copy without namespace, another name', noNs, at(configMap('b', { namespace: 'ns' })), false],
    ['a copy without namespace where the rule gave one with a slash in it', noNs, at(configMap('a', { namespace: 'x/y' })), true],
    ['a copy without namespace, another kind', noNs, at({ ...inNs, kind: 'Secret' }), false],
    ['a copy in a namespace where the rule gave none', inNs, at(noNs), false],
    ['no place (the rule does not take the source)', inNs, undefined, false],
    ['no place said (a template fails)', inNs, null, false],
  ];
  for (const [what, copy, place, stands] of cases) {
    it(`${stands ? 'holds' : 'denies'} ${what}`, () => assert.equal(standsAt(copy, place), stands));
  }
});

describe('CopyTargets', () => {
  /** The registry as CopyTargets reads it, counting how often it is read: once per copy actually built. */
  function registry(clusters: readonly Cluster[] = CTX.clusters): { read: () => readonly Cluster[]; reads: () => number } {
    let n = 0;
    return { read: () => (n++, clusters), reads: () => n };
  }
  const RENAMED: ResourceSyncRuleSpec = { ...CONFIGMAPS, rules: [{ mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ .Cluster.Name }}-copy' }] } }] };

  it('says where the rule puts the copy of a source', () => {
    assert.equal(runThrough(new CopyTargets(LOCAL).finding(rule(RENAMED), PEER_REF, configMap('a'), registry().read)), '/v1/ConfigMap|ns/peer-copy');
  });

  it('says undefined for a source the rule does not take', () => {
    assert.equal(runThrough(new CopyTargets(LOCAL).finding(rule(), PEER_REF, configMap('a', { owner: LOCAL }), registry().read)), undefined);
  });

  it('says null for a source a template fails on', () => {
    assert.equal(runThrough(new CopyTargets(LOCAL).finding(rule(RENAMED), PEER_REF, configMap('a'), registry([]).read)), null);
  });

  it('builds the copy of one version of a source once, whatever it came to', () => {
    const targets = new CopyTargets(LOCAL);
    for (const clusters of [CTX.clusters, []]) {
      const r = registry(clusters);
      const first = runThrough(targets.finding(rule(RENAMED), PEER_REF, configMap(`a-${clusters.length}`), r.read));
      assert.equal(runThrough(targets.finding(rule(RENAMED), PEER_REF, configMap(`a-${clusters.length}`), r.read)), first);
      assert.equal(r.reads(), 1);
    }
  });

  const anew: [string, (r: RuleState) => [RuleState, PeerRef, KubeObject]][] = [
    ['a new version of the source', (r) => [r, PEER_REF, configMap('a', { rv: '2' })]],
    ['another object', (r) => [r, PEER_REF, { ...configMap('a'), metadata: { ...configMap('a').metadata, uid: 'uid-2' } }]],
    ['another peer', (r) => [r, { ...PEER_REF, id: OTHER }, configMap('a')]],
    ['an edited spec of the rule', () => [rule({ ...RENAMED, rules: [{}] }), PEER_REF, configMap('a')]],
    ['another rule of the same spec', () => [rule(RENAMED, 's'), PEER_REF, configMap('a')]],
  ];
  for (const [what, next] of anew) {
    it(`builds the copy again for ${what}`, () => {
      const targets = new CopyTargets(LOCAL);
      const r = registry();
      const first = rule(RENAMED);
      runThrough(targets.finding(first, PEER_REF, configMap('a'), r.read));
      runThrough(targets.finding(...next(first), r.read));
      assert.equal(r.reads(), 2);
    });
  }

  it('builds every copy again once the registry changed: templates read it', () => {
    const targets = new CopyTargets(LOCAL);
    const before = registry();
    assert.equal(runThrough(targets.finding(rule(RENAMED), PEER_REF, configMap('a'), before.read)), '/v1/ConfigMap|ns/peer-copy');
    targets.registryChanged();
    const after = registry([entry('local', LOCAL), entry('renamed', PEER)]);
    assert.equal(runThrough(targets.finding(rule(RENAMED), PEER_REF, configMap('a'), after.read)), '/v1/ConfigMap|ns/renamed-copy');
  });

  it("never remembers a built-in rule's answer: what it takes depends on the registry, not only on the source", () => {
    const targets = new CopyTargets(LOCAL);
    const r = registry();
    const b = builtin({ accepts: () => true });
    runThrough(targets.finding(b, PEER_REF, configMap('a'), r.read));
    runThrough(targets.finding(b, PEER_REF, configMap('a'), r.read));
    assert.equal(r.reads(), 2);
  });

  /** The copies a rule with several templates makes, pausing before each; each override names the registry. */
  const TWO_TEMPLATES: ResourceSyncRuleSpec = {
    ...CONFIGMAPS,
    rules: [{ mutations: { overrides: [RENAMED.rules[0]!.mutations!.overrides![0]!, { type: 'replace', path: '/data/k', value: '{{ .LocalCluster.Name }}' }] } }],
  };
  /** Runs a pausable computation through, counting its pauses; `between` runs at each. */
  function drive<T>(steps: Generator<void, T, void>, between: () => void = () => undefined): { value: T; pauses: number } {
    for (let pauses = 0; ; pauses++) {
      const r = steps.next();
      if (r.done) return { value: r.value, pauses };
      between();
    }
  }

  it('makes the copy as desiredCopy does, pausing before its copy, each of its two templates and its patch, and remembers where it goes', () => {
    const targets = new CopyTargets(LOCAL);
    const { value, pauses } = drive(targets.making(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), CTX.clusters));
    assert.deepEqual(value, desiredCopy(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), CTX));
    assert.equal(pauses, 4);
    assert.equal(value?.desired.metadata.name, 'peer-copy');
    const r = registry();
    assert.equal(runThrough(targets.finding(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), r.read)), '/v1/ConfigMap|ns/peer-copy');
    assert.equal(r.reads(), 0, 'the sync and the collector share one rendering');
  });

  it('does not pause for a rule without overrides', () => {
    assert.equal(drive(new CopyTargets(LOCAL).making(rule(), PEER_REF, configMap('a'), CTX.clusters)).pauses, 0);
  });

  it('remembers a source a template fails on, and still throws the failure', () => {
    const targets = new CopyTargets(LOCAL);
    assert.throws(() => drive(targets.making(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), [])), RuleError);
    const r = registry();
    assert.equal(runThrough(targets.finding(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), r.read)), null);
    assert.equal(r.reads(), 0);
  });

  it('remembers nothing made against a registry that changed while it paused', () => {
    const targets = new CopyTargets(LOCAL);
    drive(targets.making(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), CTX.clusters), () => targets.registryChanged());
    const after = registry([entry('local', LOCAL), entry('renamed', PEER)]);
    assert.equal(runThrough(targets.finding(rule(TWO_TEMPLATES), PEER_REF, configMap('a'), after.read)), '/v1/ConfigMap|ns/renamed-copy');
    assert.equal(after.reads(), 1);
  });

  it("never remembers a built-in rule's copy", () => {
    const targets = new CopyTargets(LOCAL);
    const b = builtin({ accepts: () => true });
    drive(targets.making(b, PEER_REF, configMap('a'), CTX.clusters));
    const r = registry();
    runThrough(targets.finding(b, PEER_REF, configMap('a'), r.read));
    assert.equal(r.reads(), 1);
  });

  it('remembers a source whatever its uid and version are made of, under a key of its own', () => {
    const targets = new CopyTargets(LOCAL);
    const r = registry();
    const odd = (name: string, uid: unknown): KubeObject => ({ ...configMap(name), metadata: { ...configMap(name).metadata, uid: uid as string } });
    for (const uid of ['u'.repeat(200_000), ['u'.repeat(200_000)], undefined]) {
      runThrough(targets.finding(rule(RENAMED), PEER_REF, odd('a', uid), r.read));
      runThrough(targets.finding(rule(RENAMED), PEER_REF, odd('a', uid), r.read));
    }
    assert.equal(r.reads(), 3, 'once each');
    // Two sources without a uid are two sources.
    runThrough(targets.finding(rule(RENAMED), PEER_REF, odd('b', undefined), r.read));
    assert.equal(r.reads(), 4);
    assert.ok([...(targets as unknown as { memo: Map<string, unknown> }).memo.keys()].every((k) => k.length <= 44), 'every key a digest');
  });

  it('forgets everything once it holds 50,000 answers, so a peer cannot make it grow without end', () => {
    const targets = new CopyTargets(LOCAL);
    const r = registry();
    const cheap = rule({ ...CONFIGMAPS, rules: [{ match: [{ namespaces: ['none'] }] }] });
    for (let i = 0; i < 50_000; i++) runThrough(targets.finding(cheap, PEER_REF, configMap('a', { rv: String(i) }), r.read));
    runThrough(targets.finding(cheap, PEER_REF, configMap('a', { rv: '0' }), r.read));
    assert.equal(r.reads(), 50_000, 'remembered while there is room');
    runThrough(targets.finding(cheap, PEER_REF, configMap('a', { rv: 'one more' }), r.read));
    runThrough(targets.finding(cheap, PEER_REF, configMap('a', { rv: '1' }), r.read));
    assert.equal(r.reads(), 50_002, 'started over');
  });
});

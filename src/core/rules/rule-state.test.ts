import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreResourceSyncRules } from '../api/core-rules.ts';
import { ANNOTATIONS, API_GROUP, CLUSTER_SECRET, CORE_RULE_NAMES, KINDS, LABELS } from '../api/keys.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../api/types.ts';
import { parseSelector } from '../../go/labels/index.ts';
import { BUILTIN_PREFIX, builtinRules, fingerprint, MAX_LEFT_OUT, narrows, peerWatchFilter, relaysRegistry, ruleState, type PeerRef, type PeerWatchFilter, type RuleState } from './rule-state.ts';

const NS = 'cluster-registry';
const CONFIGMAPS: ResourceSyncRuleSpec = { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{}] };

function object(name: string, spec: ResourceSyncRuleSpec): ResourceSyncRule {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: KINDS.resourceSyncRule, metadata: { name }, spec };
}

/** The state of the ResourceSyncRule `name` with `spec`. */
function state(spec: ResourceSyncRuleSpec, name = 'r'): RuleState {
  return ruleState(name, spec, object(name, spec), NS);
}

function coreSpec(name: string): ResourceSyncRuleSpec {
  const core = coreResourceSyncRules(NS).find((r) => r.metadata.name === name);
  assert.ok(core, name);
  return core.spec;
}

describe('ruleState', () => {
  it('compiles a valid rule, reading and writing its own kind', () => {
    const r = state(CONFIGMAPS);
    assert.ok(r.compiled);
    assert.deepEqual(r.issues, []);
    assert.deepEqual(r.sourceGVK, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(r.targetGVKs, [{ group: '', version: 'v1', kind: 'ConfigMap' }]);
  });

  it('leaves an invalid rule uncompiled, writing nothing, with the issues that say why', () => {
    const r = state({ ...CONFIGMAPS, rules: [{ match: [{ content: [{ key: '', value: 'x' }] }] }] });
    assert.equal(r.compiled, undefined);
    assert.deepEqual(r.targetGVKs, []);
    assert.deepEqual(
      r.issues.map((i) => i.path),
      ['spec.rules[0].match[0].content[0].key'],
    );
  });

  it('writes every kind its GVK mutations may turn a source into', () => {
    const r = state({ ...CONFIGMAPS, rules: [{ match: [{ namespaces: ['a'] }], mutations: { groupVersionKind: { version: 'v1', kind: 'Secret' } } }, {}] });
    assert.deepEqual(
      r.targetGVKs.map((g) => g.kind),
      ['ConfigMap', 'Secret'],
    );
  });

  const flags: [string, ResourceSyncRuleSpec['rules'], Pick<RuleState, 'syncsStatus' | 'keepsSourceOwner' | 'readsRegistry'>][] = [
    ['no mutations', [{}], { syncsStatus: false, keepsSourceOwner: true, readsRegistry: false }],
    ['one rule of several syncing status', [{}, { mutations: { syncStatus: true } }], { syncsStatus: true, keepsSourceOwner: true, readsRegistry: false }],
    ['an annotation mutation naming the owner', [{ mutations: { annotations: { remove: [ANNOTATIONS.ownership] } } }], { syncsStatus: false, keepsSourceOwner: false, readsRegistry: false }],
    ['a label mutation naming the owner', [{ mutations: { labels: { add: { [LABELS.ownership]: 'x' } } } }], { syncsStatus: false, keepsSourceOwner: false, readsRegistry: false }],
    ['an override reaching the annotations', [{ mutations: { overrides: [{ type: 'remove', path: '/metadata/annotations' }] } }], { syncsStatus: false, keepsSourceOwner: false, readsRegistry: false }],
    ['an override of the data only', [{ mutations: { overrides: [{ type: 'replace', path: '/data/k', value: 'v' }] } }], { syncsStatus: false, keepsSourceOwner: true, readsRegistry: false }],
    ['one rule of several templating an override', [{}, { mutations: { overrides: [{ type: 'replace', path: '/data/k', value: '{{ .Cluster.GetName }}' }] } }], { syncsStatus: false, keepsSourceOwner: true, readsRegistry: true }],
  ];
  for (const [what, rules, expected] of flags) {
    it(`says whether status matters, whether copies keep their source's owner and whether they may move with the registry: ${what}`, () => {
      const r = state({ ...CONFIGMAPS, rules });
      assert.deepEqual({ syncsStatus: r.syncsStatus, keepsSourceOwner: r.keepsSourceOwner, readsRegistry: r.readsRegistry }, expected);
    });
  }

  const channels: [string, string, ResourceSyncRuleSpec, RuleState['channel']][] = [
    ['any other rule', 'r', CONFIGMAPS, 'rule'],
    ['the core Cluster rule', CORE_RULE_NAMES.clusters, coreSpec(CORE_RULE_NAMES.clusters), 'registry'],
    ['the core credentials rule', CORE_RULE_NAMES.clusterSecrets, coreSpec(CORE_RULE_NAMES.clusterSecrets), 'registry'],
    ['the core rule of rules', CORE_RULE_NAMES.syncRules, coreSpec(CORE_RULE_NAMES.syncRules), 'rules'],
    ['a core name over another spec', CORE_RULE_NAMES.clusters, { ...coreSpec(CORE_RULE_NAMES.clusters), rules: [{ mutations: { labels: { add: { x: 'y' } } } }] }, 'rule'],
  ];
  for (const [what, name, spec, channel] of channels) {
    it(`delivers through the channel its name and exact spec give: ${what}`, () => {
      assert.equal(state(spec, name).channel, channel);
    });
  }

  it('runs a ResourceSyncRule only where the peer advertises what it asks for', () => {
    assert.equal(state(CONFIGMAPS).ignoresFeatures, false);
  });

  it('changes its fingerprint with its spec', () => {
    assert.equal(state(CONFIGMAPS).fingerprint, state(structuredClone(CONFIGMAPS)).fingerprint);
    assert.notEqual(state(CONFIGMAPS).fingerprint, state({ ...CONFIGMAPS, rules: [{ mutations: { syncStatus: true } }] }).fingerprint);
  });
});

describe('fingerprint', () => {
  it('tells a built-in rule from a ResourceSyncRule of the same spec', () => {
    assert.notEqual(fingerprint(CONFIGMAPS, true), fingerprint(CONFIGMAPS, false));
  });

  it('is sixteen hex digits', () => {
    assert.match(fingerprint(CONFIGMAPS, false), /^[0-9a-f]{16}$/);
  });
});

describe('relaysRegistry', () => {
  const cases: [string, boolean][] = [
    [CORE_RULE_NAMES.clusters, true],
    [CORE_RULE_NAMES.clusterSecrets, true],
    [CORE_RULE_NAMES.syncRules, false],
    [`${BUILTIN_PREFIX}peer-cluster`, false],
    ['r', false],
  ];
  for (const [name, relays] of cases) {
    it(`${relays ? 'passes' : 'does not pass'} the registry on under the name ${name}`, () => {
      assert.equal(relaysRegistry(name), relays);
    });
  }
});

describe('peerWatchFilter', () => {
  const LOCAL = '6f1d2c3b-0a9e-4f8d-8c7b-6a5f4e3d2c1b';
  const PEER = 'peer-uid';
  const withLabels = (labels: object): ResourceSyncRuleSpec => ({ ...CONFIGMAPS, rules: [{ mutations: { labels } }] });
  const filter = (...leftOut: string[]) => ({ labelSelector: `${LABELS.ownership} notin (${leftOut.join(',')})`, leftOut });
  const cases: [string, RuleState, string, string[], ReturnType<typeof filter> | undefined][] = [
    ['leaves out what the peer copied from us', state(CONFIGMAPS), LOCAL, [], filter(LOCAL)],
    ["leaves out what it passes on for settled owners, ours first and theirs sorted", state(CONFIGMAPS), LOCAL, ['b-uid', 'a-uid', 'b-uid'], filter(LOCAL, 'a-uid', 'b-uid')],
    ['never leaves out the peer itself, nor names us twice', state(CONFIGMAPS), LOCAL, [PEER, LOCAL, 'a-uid'], filter(LOCAL, 'a-uid')],
    ['leaves no owner out whose ID no label value can hold', state(CONFIGMAPS), LOCAL, ['a,b', '', 'a-uid'], filter(LOCAL, 'a-uid')],
    ['keeps a rule whose mutations may set the owner label whole', state(withLabels({ add: { [LABELS.ownership]: 'x' } })), LOCAL, ['a-uid'], undefined],
    ['keeps a rule whose mutations may drop the owner label whole', state(withLabels({ remove: [LABELS.ownership] })), LOCAL, ['a-uid'], undefined],
    ['leaves out no more owners than the cap: the first ones, sorted', state(CONFIGMAPS), LOCAL, Array.from({ length: MAX_LEFT_OUT + 5 }, (_, i) => `o${String(i).padStart(3, '0')}`).reverse(), filter(LOCAL, ...Array.from({ length: MAX_LEFT_OUT - 1 }, (_, i) => `o${String(i).padStart(3, '0')}`))],
    ['keeps the core Cluster rule whole (the registry shares its watch)', state(coreSpec(CORE_RULE_NAMES.clusters), CORE_RULE_NAMES.clusters), LOCAL, [], undefined],
    ['keeps the built-in Cluster rule whole', builtinRules(NS)[0]!, LOCAL, ['a-uid'], undefined],
    ["filters the core credentials rule: a peer's copies of every member's Secret would grow with the square of the group", state(coreSpec(CORE_RULE_NAMES.clusterSecrets), CORE_RULE_NAMES.clusterSecrets), LOCAL, ['a-uid'], filter(LOCAL, 'a-uid')],
    ['filters the built-in credentials rule alike (it takes only the peer\'s own, which no filter leaves out)', builtinRules(NS)[1]!, LOCAL, ['a-uid'], filter(LOCAL, 'a-uid')],
    ['keeps everything while our ID is not known', state(CONFIGMAPS), '', ['a-uid'], undefined],
    ['keeps everything for an ID of ours no label value can hold', state(CONFIGMAPS), 'a,b', [], undefined],
  ];
  for (const [what, rule, local, settled, want] of cases) {
    it(what, () => {
      assert.deepEqual(peerWatchFilter(rule, local, PEER, settled), want);
    });
  }
});

describe('narrows', () => {
  const filter = (...leftOut: string[]): PeerWatchFilter => ({ labelSelector: `${LABELS.ownership} notin (${leftOut.join(',')})`, leftOut });
  const filters: [string, PeerWatchFilter | undefined][] = [
    ['none', undefined],
    ['ours', filter('local')],
    ['ours and a', filter('local', 'a')],
    ['ours, a and b', filter('local', 'a', 'b')],
    ['ours and b', filter('local', 'b')],
  ];
  const labels: Record<string, string>[] = [{}, { team: 'x' }, ...['local', 'a', 'b', 'c', ''].map((owner) => ({ [LABELS.ownership]: owner }))];
  // The API server's word, through the Go selector's port.
  const admits = (f: PeerWatchFilter | undefined, l: Record<string, string>): boolean => !f || parseSelector(f.labelSelector).matches(l);
  for (const [from, f] of filters) {
    for (const [to, t] of filters) {
      const want = labels.every((l) => !admits(t, l) || admits(f, l));
      it(`${want ? 'narrows' : 'does not narrow'} from ${from} to ${to}`, () => assert.equal(narrows(f, t), want));
    }
  }
});

const PEER_ID = 'peer-uid';
const OTHER_ID = 'other-uid';

function peer(own?: Cluster): PeerRef {
  return { id: PEER_ID, name: 'peer', ownCluster: () => own };
}

/** A Cluster `name` describing `id`, owned by `owner` when given, reading its credentials from `secret`. */
function entry(name: string, id: string, o: { owner?: string; secret?: { name: string; namespace: string } } = {}): Cluster {
  return {
    apiVersion: `${API_GROUP}/v1alpha1`,
    kind: KINDS.cluster,
    metadata: { name, ...(o.owner ? { annotations: { [ANNOTATIONS.ownership]: o.owner } } : {}) },
    spec: { clusterID: id, ...(o.secret ? { authInfo: { secretRef: o.secret } } : {}) },
  };
}

/** A registry credentials Secret at `namespace/name`, owned by `owner` when given. */
function secret(name: string, o: { namespace?: string; owner?: string } = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', type: CLUSTER_SECRET.type, metadata: { name, namespace: o.namespace ?? NS, ...(o.owner ? { annotations: { [ANNOTATIONS.ownership]: o.owner } } : {}) } };
}

describe('builtinRules', () => {
  const [peerCluster, peerCredentials] = builtinRules(NS);
  assert.ok(peerCluster && peerCredentials);

  it('are the peer-cluster and peer-credentials rules, named as no ResourceSyncRule can be', () => {
    assert.deepEqual(
      builtinRules(NS).map((r) => r.name),
      [`${BUILTIN_PREFIX}peer-cluster`, `${BUILTIN_PREFIX}peer-credentials`],
    );
  });

  it('read what the core Cluster and credentials rules read, whatever the peer advertises', () => {
    for (const [r, core] of [
      [peerCluster, CORE_RULE_NAMES.clusters],
      [peerCredentials, CORE_RULE_NAMES.clusterSecrets],
    ] as const) {
      assert.deepEqual({ gvk: r.spec.groupVersionKind, rules: r.spec.rules, features: r.spec.clusterFeatureMatch }, { gvk: coreSpec(core).groupVersionKind, rules: coreSpec(core).rules, features: undefined }, r.name);
      assert.equal(r.ignoresFeatures, true, r.name);
    }
  });

  it('deliver through the registry channel, with no ResourceSyncRule to report on', () => {
    for (const r of [peerCluster, peerCredentials]) assert.deepEqual({ channel: r.channel, object: r.object, compiled: r.compiled !== undefined }, { channel: 'registry', object: undefined, compiled: true }, r.name);
  });

  describe('peer-cluster', () => {
    const accepts: [string, Cluster, boolean][] = [
      ["the peer's own entry, as it holds it", entry('peer', PEER_ID), true],
      ['an entry of that name describing another cluster', entry('peer', OTHER_ID), false],
      ['an entry of another name describing the peer', entry('peer-2', PEER_ID), false],
      ["another cluster's entry", entry('other', OTHER_ID), false],
      ['a copy the peer holds of its own entry', entry('peer', PEER_ID, { owner: PEER_ID }), false],
      ['a copy the peer holds of an entry it was given', entry('peer', PEER_ID, { owner: OTHER_ID }), false],
    ];
    for (const [what, o, taken] of accepts) {
      it(`${taken ? 'takes' : 'refuses'} from the peer ${what}`, () => {
        assert.equal(peerCluster.accepts?.(o, peer()), taken);
      });
    }

    const adopts: [string, Cluster, boolean][] = [
      ['the entry of the peer written here by hand', entry('peer', PEER_ID), true],
      ['an entry here of that name describing another cluster', entry('peer', OTHER_ID), false],
      ['an entry here of another name describing the peer', entry('peer-2', PEER_ID), false],
      ['a copy owned by a cluster', entry('peer', PEER_ID, { owner: OTHER_ID }), false],
    ];
    for (const [what, local, adopted] of adopts) {
      it(`${adopted ? 'adopts' : 'never adopts'} ${what}`, () => {
        assert.equal(peerCluster.adopts?.(local, peer(), []), adopted);
      });
    }
  });

  describe('peer-credentials', () => {
    const own = entry('peer', PEER_ID, { secret: { name: 'peer-creds', namespace: NS } });
    const accepts: [string, KubeObject, Cluster | undefined, boolean][] = [
      ["the Secret the peer's own Cluster names", secret('peer-creds'), own, true],
      ["another Secret than the peer's own Cluster names", secret('other-creds'), own, false],
      ["a Secret of that name in another namespace than the Cluster's", secret('peer-creds', { namespace: 'elsewhere' }), own, false],
      ['a copy the peer holds of the Secret its Cluster names', secret('peer-creds', { owner: OTHER_ID }), own, false],
      ['any Secret while the peer shows no Cluster of its own', secret('peer-creds'), undefined, false],
      ['any Secret when its own Cluster names none', secret('peer-creds'), entry('peer', PEER_ID), false],
    ];
    for (const [what, o, ownCluster, taken] of accepts) {
      it(`${taken ? 'takes' : 'refuses'} from the peer ${what}`, () => {
        assert.equal(peerCredentials.accepts?.(o, peer(ownCluster)), taken);
      });
    }

    const ours = entry('peer', PEER_ID, { secret: { name: 'peer-creds', namespace: NS } });
    const adopts: [string, KubeObject, Cluster[], boolean][] = [
      ['the Secret our Cluster of that peer reads, written here by hand', secret('peer-creds'), [ours], true],
      ['a Secret no Cluster here names', secret('peer-creds'), [entry('peer', PEER_ID)], false],
      ['the Secret a Cluster of that name here reads for another cluster', secret('peer-creds'), [entry('peer', OTHER_ID, { secret: { name: 'peer-creds', namespace: NS } })], false],
      ['the Secret a Cluster of another name here reads for that peer', secret('peer-creds'), [entry('peer-2', PEER_ID, { secret: { name: 'peer-creds', namespace: NS } })], false],
      ['a copy owned by a cluster, even the one our Cluster names', secret('peer-creds', { owner: PEER_ID }), [ours], false],
    ];
    for (const [what, local, clusters, adopted] of adopts) {
      it(`${adopted ? 'adopts' : 'never adopts'} ${what}`, () => {
        // What the peer itself shows is not what adoption goes by.
        assert.equal(peerCredentials.adopts?.(local, peer(ours), clusters), adopted);
      });
    }
  });
});

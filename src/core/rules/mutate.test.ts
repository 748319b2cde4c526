import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ANNOTATIONS, CLUSTER_SECRET, LABELS, STRIPPED_ANNOTATIONS } from '../api/keys.ts';
import { parseSourceIdentity } from '../api/source-identity.ts';
import type { Cluster, KubeObject, Override, ResourceSyncRuleSpec, SyncRule } from '../api/types.ts';
import { RuleError } from './errors.ts';
import { buildDesiredCopy, combineMutations, mayChangeOwner, possibleTargetGVKs, stripSourceMetadata, targetGVK, type MutationContext } from './mutate.ts';

const PEER = 'peer-uid';
const LOCAL = 'local-uid';

function cluster(name: string, clusterID: string, region = ''): Cluster {
  return {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'Cluster',
    metadata: { name },
    spec: { clusterID },
    status: { locality: { region } },
  };
}

const ctx: MutationContext = {
  syncedFromClusterID: PEER,
  localClusterID: LOCAL,
  clusters: [cluster('peer', PEER, 'eu'), cluster('local', LOCAL, 'us'), cluster('owner', 'owner-uid')],
};

function source(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'cm',
      namespace: 'ns',
      uid: 'u',
      resourceVersion: '7',
      generation: 2,
      selfLink: '/api/v1/namespaces/ns/configmaps/cm',
      creationTimestamp: '2024-01-01T00:00:00Z',
      finalizers: ['f'],
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' }],
      managedFields: [{ manager: 'm' }],
      generateName: 'c',
      labels: { app: 'web', drop: 'me' },
      annotations: {
        keep: 'yes',
        'banzaicloud.com/last-applied': 'x',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        'banzaicloud.io/managed-component': 'c',
        'banzaicloud.io/related-to': 'r',
      },
    },
    data: { a: '1' },
    status: { phase: 'Ready' },
  };
}

function build(rules: SyncRule[], obj: KubeObject = source(), c: MutationContext = ctx): KubeObject {
  return buildDesiredCopy(obj, combineMutations(rules), c);
}

const overrides = (...o: Override[]): SyncRule => ({ mutations: { overrides: o } });

describe('combineMutations', () => {
  it('merges maps later-wins, concatenates lists, ORs syncStatus, overlays GVK fields', () => {
    const m = combineMutations([
      { mutations: { annotations: { add: { a: '1', b: '1' }, remove: ['x'] }, labels: { add: { l: '1' } }, groupVersionKind: { group: 'g1', kind: 'K1' }, overrides: [{ type: 'remove', path: '/a' }] } },
      {},
      { mutations: { annotations: { add: { b: '2' }, remove: ['y'] }, labels: { remove: ['m'] }, groupVersionKind: { kind: 'K2', version: 'v9' }, overrides: [{ type: 'remove', path: '/b' }], syncStatus: true } },
      { mutations: { syncStatus: false, groupVersionKind: {} } },
    ]);
    assert.deepEqual(m.annotations, { add: { a: '1', b: '2' }, remove: ['x', 'y'] });
    assert.deepEqual(m.labels, { add: { l: '1' }, remove: ['m'] });
    assert.deepEqual(m.groupVersionKind, { group: 'g1', kind: 'K2', version: 'v9' });
    assert.deepEqual(
      m.overrides.map((o) => [o.override.path, o.at]),
      [
        ['/a', 'matchedRules[0].mutations.overrides[0]'],
        ['/b', 'matchedRules[2].mutations.overrides[0]'],
      ],
    );
    assert.equal(m.syncStatus, true);
  });

  it('locates overrides in the rule when given the spec', () => {
    const rules: SyncRule[] = [{}, overrides({ type: 'remove', path: '/a' })];
    const m = combineMutations([rules[1]!], { groupVersionKind: {}, rules });
    assert.equal(m.overrides[0]?.at, 'spec.rules[1].mutations.overrides[0]');
  });

  it('no matched rules: nothing to do', () => {
    assert.deepEqual(combineMutations([]), {
      annotations: { add: {}, remove: [] },
      labels: { add: {}, remove: [] },
      groupVersionKind: undefined,
      overrides: [],
      syncStatus: false,
    });
  });
});

describe('possibleTargetGVKs / targetGVK', () => {
  it('lists the GVK of every ordered subset of the rules', () => {
    const s: ResourceSyncRuleSpec = {
      groupVersionKind: { group: 'a', version: 'v1', kind: 'K' },
      rules: [{ mutations: { groupVersionKind: { group: 'b' } } }, {}, { mutations: { groupVersionKind: { kind: 'L' } } }],
    };
    assert.deepEqual(
      possibleTargetGVKs(s).map((g) => `${g.group}/${g.version}/${g.kind}`).sort(),
      ['a/v1/K', 'a/v1/L', 'b/v1/K', 'b/v1/L'],
    );
  });

  it('applies only non-empty fields', () => {
    assert.deepEqual(targetGVK({ group: 'a', version: 'v1', kind: 'K' }, combineMutations([{ mutations: { groupVersionKind: { version: 'v2' } } }])), {
      group: 'a',
      version: 'v2',
      kind: 'K',
    });
  });
});

describe('buildDesiredCopy', () => {
  it('without mutations: owner set, history stripped, identity recorded, status dropped', () => {
    assert.deepEqual(build([{}]), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'ns',
        labels: { app: 'web', drop: 'me', [LABELS.ownership]: PEER },
        annotations: {
          keep: 'yes',
          [ANNOTATIONS.ownership]: PEER,
          [ANNOTATIONS.source]: '{"clusterID":"peer-uid","group":"","kind":"ConfigMap","namespace":"ns","name":"cm"}',
        },
      },
      data: { a: '1' },
    });
  });

  it('keeps status with syncStatus', () => {
    assert.deepEqual(build([{ mutations: { syncStatus: true } }]).status, { phase: 'Ready' });
  });

  it('adds then removes annotations and labels (remove wins)', () => {
    const out = build([{ mutations: { annotations: { add: { n: '1', keep: 'changed' }, remove: ['n', 'absent'] }, labels: { add: { x: '1' }, remove: ['drop'] } } }]);
    assert.equal(out.metadata?.annotations?.n, undefined);
    assert.equal(out.metadata?.annotations?.keep, 'changed');
    assert.deepEqual(out.metadata?.labels, { app: 'web', x: '1', [LABELS.ownership]: PEER });
  });

  it('keeps a transitive owner; annotation and label are set independently', () => {
    const src = source();
    src.metadata.annotations![ANNOTATIONS.ownership] = 'owner-uid';
    const out = build([{}], src);
    assert.equal(out.metadata?.annotations?.[ANNOTATIONS.ownership], 'owner-uid');
    // Upstream edge: only the annotation arrived, so the label names the synced-from peer.
    assert.equal(out.metadata?.labels?.[LABELS.ownership], PEER);
  });

  it('re-sets an owner a rule removed, and an empty one', () => {
    const src = source();
    src.metadata.annotations![ANNOTATIONS.ownership] = 'owner-uid';
    src.metadata.labels![LABELS.ownership] = '';
    const out = build([{ mutations: { annotations: { remove: [ANNOTATIONS.ownership] } } }], src);
    assert.equal(out.metadata?.annotations?.[ANNOTATIONS.ownership], PEER);
    assert.equal(out.metadata?.labels?.[LABELS.ownership], PEER);
  });

  it('mutates the GVK and records the original', () => {
    const out = build([{ mutations: { groupVersionKind: { group: 'example.com', kind: 'Thing' } } }]);
    assert.equal(out.apiVersion, 'example.com/v1');
    assert.equal(out.kind, 'Thing');
    assert.equal(out.metadata?.annotations?.[ANNOTATIONS.originalGVK], 'ConfigMap./v1');
    assert.deepEqual(parseSourceIdentity(out.metadata?.annotations?.[ANNOTATIONS.source]), { clusterID: PEER, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm' });
  });

  it('an added stripped annotation is still stripped (step 5 follows step 2)', () => {
    const out = build([{ mutations: { annotations: { add: { 'banzaicloud.com/last-applied': 'x' } } } }]);
    assert.equal(out.metadata?.annotations?.['banzaicloud.com/last-applied'], undefined);
  });

  describe("another cluster's registry entry that the peer holds as its own (placed by hand)", () => {
    const entry = (clusterID: string): Cluster => ({ ...cluster('third', clusterID), status: {} });
    const credentials = (name: string, type: string = CLUSTER_SECRET.type): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: 'cluster-registry' }, data: { kubeconfig: 'eA==' } });
    const naming = (name: string, clusterID: string): Cluster => ({ ...cluster(name, clusterID), spec: { clusterID, authInfo: { secretRef: { name, namespace: 'cluster-registry' } } } });
    const owners = (o: KubeObject) => [o.metadata?.annotations?.[ANNOTATIONS.ownership], o.metadata?.labels?.[LABELS.ownership]];
    const relay: MutationContext = { ...ctx, relaysRegistry: true };

    it('a Cluster is passed on for the cluster it describes, by the rules that relay the registry only', () => {
      assert.deepEqual(owners(build([{}], entry('third-uid'), relay)), ['third-uid', 'third-uid']);
      assert.deepEqual(owners(build([{}], entry('third-uid'))), [PEER, PEER]);
      // The peer's own entry, and one without an ID, stay the peer's.
      assert.deepEqual(owners(build([{}], entry(PEER), relay)), [PEER, PEER]);
      assert.deepEqual(owners(build([{}], entry(''), relay)), [PEER, PEER]);
    });

    it('credentials are passed on for the one member whose Cluster names them', () => {
      const c = { ...relay, clusters: [...ctx.clusters, naming('third', 'third-uid')] };
      assert.deepEqual(owners(build([{}], credentials('third'), c)), ['third-uid', 'third-uid']);
      // Named by no Cluster here (yet), by two, or not credentials at all: the peer's.
      assert.deepEqual(owners(build([{}], credentials('third'), relay)), [PEER, PEER]);
      assert.deepEqual(owners(build([{}], credentials('third'), { ...c, clusters: [...c.clusters, naming('third', 'fourth-uid')] })), [PEER, PEER]);
      assert.deepEqual(owners(build([{}], credentials('third', 'Opaque'), c)), [PEER, PEER]);
    });

    it('an owner the entry names is kept', () => {
      const e = entry('third-uid');
      e.metadata.annotations = { [ANNOTATIONS.ownership]: 'owner-uid' };
      assert.equal(build([{}], e, relay).metadata?.annotations?.[ANNOTATIONS.ownership], 'owner-uid');
    });
  });

  it('works on an object without metadata maps', () => {
    const out = build([{}], { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    assert.deepEqual(out.metadata?.labels, { [LABELS.ownership]: PEER });
  });
});

describe('buildDesiredCopy: overrides', () => {
  it('renders templates with .Object, .Cluster and .LocalCluster and applies replace', () => {
    const out = build([
      overrides(
        { type: 'replace', path: '/metadata/name', value: '{{ printf "%s-%s" .Object.GetName .Cluster.GetName }}' },
        { type: 'replace', path: '/data/region?', value: '{{ .LocalCluster.Status.Locality.Region }}' },
        { type: 'replace', path: '/data/id?', value: '{{ .Cluster.Spec.ClusterID }}' },
      ),
    ]);
    assert.equal(out.metadata?.name, 'cm-peer');
    assert.deepEqual(out.data, { a: '1', region: 'us', id: PEER });
  });

  it('.Cluster is the transitive owner when the source has one', () => {
    const src = source();
    src.metadata.annotations![ANNOTATIONS.ownership] = 'owner-uid';
    const out = build([overrides({ type: 'replace', path: '/data/c?', value: '{{ .Cluster.GetName }}' })], src);
    assert.equal((out.data as Record<string, string>).c, 'owner');
  });

  it('parseValue YAML-parses the rendered value (YAML 1.1)', () => {
    const out = build([
      overrides(
        { type: 'replace', path: '/data/n?', value: '42', parseValue: true },
        { type: 'replace', path: '/data/y?', value: 'yes', parseValue: true },
        { type: 'replace', path: '/data/m?', value: '{a: [1, "2"]}', parseValue: true },
        { type: 'replace', path: '/data/e?', value: '', parseValue: true },
        { type: 'replace', path: '/data/s?', value: '42' },
      ),
    ]);
    assert.deepEqual(out.data, { a: '1', n: 42, y: true, m: { a: [1, '2'] }, e: null, s: '42' });
  });

  it('parseValue: the last of duplicate keys wins, as in yaml.v2', () => {
    const out = build([
      overrides(
        { type: 'replace', path: '/data/m?', value: '{a: 1, b: 2, a: 3}', parseValue: true },
        { type: 'replace', path: '/data/n?', value: 'x:\n  k: 1\n  k: [2]\n', parseValue: true },
      ),
    ]);
    assert.deepEqual(out.data, { a: '1', m: { a: 3, b: 2 }, n: { x: { k: [2] } } });
  });

  it('an absent value renders as ""', () => {
    assert.equal((build([overrides({ type: 'replace', path: '/data/a' })]).data as Record<string, string>).a, '');
  });

  it('remove', () => {
    assert.deepEqual(build([overrides({ type: 'remove', path: '/data/a' })]).data, {});
  });

  it('renames and re-namespaces are tracked by labels and the source annotation', () => {
    const out = build([overrides({ type: 'replace', path: '/metadata/name', value: 'new' }, { type: 'replace', path: '/metadata/namespace', value: 'other' })]);
    assert.equal(out.metadata?.labels?.[LABELS.originalName], 'cm');
    assert.equal(out.metadata?.labels?.[LABELS.originalNamespace], 'ns');
    assert.deepEqual(parseSourceIdentity(out.metadata?.annotations?.[ANNOTATIONS.source]), { clusterID: PEER, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'cm' });
  });

  it('a name too long for a label value is tracked by the annotation only, never written as a label the API server refuses', () => {
    const src = source();
    src.metadata.name = 'n'.repeat(70);
    const out = build([overrides({ type: 'replace', path: '/metadata/name', value: 'short' })], src);
    assert.equal(out.metadata?.labels?.[LABELS.originalName], undefined);
    assert.equal(parseSourceIdentity(out.metadata?.annotations?.[ANNOTATIONS.source])?.name, 'n'.repeat(70));
  });

  it("a copy always has a name of its own: generateName is never written, a source's is dropped", () => {
    const src = source();
    src.metadata.generateName = 'cm-';
    assert.equal(build([], src).metadata?.generateName, undefined);
    for (const ops of [
      [{ type: 'remove', path: '/metadata/name' }, { type: 'replace', path: '/metadata/generateName?', value: 'x-' }],
      [{ type: 'replace', path: '/metadata/generateName?', value: 'x-' }],
      [{ type: 'remove', path: '/metadata/name' }],
      [{ type: 'replace', path: '/metadata/name', value: '' }],
    ]) {
      assert.throws(() => build([overrides(...ops)]), (e: unknown) => e instanceof RuleError && /name/.test(e.message), JSON.stringify(ops));
    }
  });

  it("overrides cannot put back our own bookkeeping a copy never carries (a hub sync's marks, cluster-disabled)", () => {
    for (const key of STRIPPED_ANNOTATIONS.filter((k) => k.startsWith('cluster-registry.k8s.cisco.com/'))) {
      const out = build([overrides({ type: 'replace', path: `/metadata/annotations/${key.replace('/', '~1')}?`, value: 'forged' })]);
      assert.equal(out.metadata?.annotations?.[key], undefined, key);
    }
  });

  it('overrides cannot forge the source annotation', () => {
    const out = build([overrides({ type: 'replace', path: `/metadata/annotations/${ANNOTATIONS.source.replace('/', '~1')}?`, value: 'forged' })]);
    assert.equal(parseSourceIdentity(out.metadata?.annotations?.[ANNOTATIONS.source])?.clusterID, PEER);
  });

  it('overrides may change the ownership annotation (upstream allows it)', () => {
    const key = ANNOTATIONS.ownership.replace('/', '~1');
    const out = build([overrides({ type: 'replace', path: `/metadata/annotations/${key}`, value: 'x' })]);
    assert.equal(out.metadata?.annotations?.[ANNOTATIONS.ownership], 'x');
  });

  const failing: [string, SyncRule, MutationContext, RegExp][] = [
    ['unknown type', overrides({ type: 'test', path: '/data' }), ctx, /matchedRules\[0\]\.mutations\.overrides\[0\]\.type: /],
    ['template error', overrides({ type: 'replace', path: '/data/a', value: '{{ fail "boom" }}' }), ctx, /matchedRules\[0\]\.mutations\.overrides\[0\]\.value: /],
    ['template parse error', overrides({ type: 'replace', path: '/data/a', value: '{{ if }}' }), ctx, /overrides\[0\]\.value: /],
    ['bad parseValue YAML', overrides({ type: 'replace', path: '/data/a', value: '{a: [', parseValue: true }), ctx, /overrides\[0\]\.value: could not unmarshal value/],
    [
      'parseValue text over 256 KiB',
      overrides({ type: 'replace', path: '/data/a', value: `a: ${'é'.repeat(128 << 10)}`, parseValue: true }),
      ctx,
      /^.*overrides\[0\]\.value: could not unmarshal value: the rendered value is larger than 256 KiB$/,
    ],
    ['parseValue YAML alias', overrides({ type: 'replace', path: '/data/a', value: 'a: &x 1\nb: *x', parseValue: true }), ctx, /overrides\[0\]\.value: could not unmarshal value: Alias resolution is disabled/],
    ['override changing the kind', overrides({ type: 'replace', path: '/kind', value: 'PersistentVolume' }), ctx, /^matchedRules\[0\]\.mutations\.overrides\[0\]: an override may not change apiVersion or kind/],
    ['override changing the apiVersion', overrides({ type: 'replace', path: '/apiVersion', value: 'v2' }), ctx, /overrides\[0\]: an override may not change apiVersion or kind/],
    ['override removing the kind', overrides({ type: 'remove', path: '/data/a' }, { type: 'remove', path: '/kind' }), ctx, /overrides\[1\]: an override may not change apiVersion or kind/],
    ['missing map key', overrides({ type: 'replace', path: '/nope/x', value: '1' }), ctx, /matchedRules\[0\]\.mutations\.overrides\[0\]: could not apply patch op/],
    ['patched root is not a map', overrides({ type: 'replace', path: '', value: 'x' }), ctx, /not a map/],
    ['no local cluster', overrides({ type: 'remove', path: '/data/a' }), { ...ctx, clusters: [cluster('peer', PEER)] }, /could not find local cluster by id/],
    ['no synced cluster', overrides({ type: 'remove', path: '/data/a' }), { ...ctx, clusters: [cluster('local', LOCAL)] }, /could not find synced cluster by id/],
  ];
  for (const [name, rule, c, re] of failing) {
    it(`error: ${name}`, () => {
      assert.throws(() => build([rule], source(), c), (err: unknown) => err instanceof RuleError && re.test(err.message));
    });
  }

  it("shares one budget among an object's templates", () => {
    // Each alone is within one execution's limit (about 610 000 steps); the seventh exhausts the object's budget.
    const heavy = (i: number): Override => ({ type: 'replace', path: `/data/k${i}?`, value: '{{ range until 2000 }}{{ range until 100 }}{{ end }}{{ end }}' });
    assert.doesNotThrow(() => build([overrides(heavy(0))]));
    assert.throws(
      () => build([overrides(...Array.from({ length: 64 }, (_, i) => heavy(i)))]),
      (err: unknown) => err instanceof RuleError && /overrides\[6\]\.value: .*the templates for one object exceed 4000000 steps together$/.test(err.message),
    );
    // Work done inside a function call is charged to the same budget, and said the same way.
    const regex = (i: number): Override => ({ type: 'replace', path: `/data/k${i}?`, value: '{{ $s := repeat 100000 "ab" }}{{ range until 30 }}{{ $x := regexFindAll "a.b" $s -1 }}{{ end }}' });
    assert.throws(
      () => build([overrides(heavy(0), heavy(1), heavy(2), heavy(3), heavy(4), heavy(5), regex(6))]),
      (err: unknown) => err instanceof RuleError && /overrides\[6\]\.value: .*the templates for one object exceed 4000000 steps together$/.test(err.message),
    );
    const wide = (i: number): Override => ({ type: 'replace', path: `/data/k${i}?`, value: '{{ repeat 1000000 "x" }}' });
    assert.throws(
      () => build([overrides(...Array.from({ length: 8 }, (_, i) => wide(i)))]),
      (err: unknown) => err instanceof RuleError && /overrides\[4\]\.value: .*the templates for one object output more than 4 MiB together$/.test(err.message),
    );
  });

  it('clusters are needed only when there are overrides', () => {
    assert.doesNotThrow(() => build([{}], source(), { ...ctx, clusters: [] }));
  });
});

// JSON-shaped Kubernetes objects with the metadata buildDesiredCopy reads and clears. Passed
// through JSON so they have ordinary prototypes, as objects from the apiserver do.
const key = fc.constantFrom('a', 'b', 'app', 'example.com/x', ANNOTATIONS.ownership, ANNOTATIONS.source, ...STRIPPED_ANNOTATIONS);
const strMap = fc.dictionary(key, fc.string({ maxLength: 5 }), { maxKeys: 5 });
// Arbitrary data and status: kinds upstream's scheme does not know, so they stay unstructured
// (a typed kind's JSON must fit its Go type to be templated).
const arbObject: fc.Arbitrary<KubeObject> = fc.record(
  {
    apiVersion: fc.constantFrom('example.com/v1', 'example.com/v2'),
    kind: fc.constantFrom('Widget', 'Gadget'),
    metadata: fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 70 }),
        namespace: fc.constantFrom('ns', 'other'),
        uid: fc.string(),
        resourceVersion: fc.string(),
        generation: fc.nat(),
        finalizers: fc.array(fc.string()),
        labels: strMap,
        annotations: strMap,
      },
      { requiredKeys: ['name'] },
    ),
    data: fc.jsonValue(),
    status: fc.jsonValue(),
  },
  { requiredKeys: ['apiVersion', 'kind', 'metadata'] },
).map((o) => JSON.parse(JSON.stringify(o)) as KubeObject);
const arbRule: fc.Arbitrary<SyncRule> = fc.record(
  {
    mutations: fc.record(
      {
        annotations: fc.record({ add: strMap, remove: fc.array(key, { maxLength: 3 }) }),
        labels: fc.record({ add: strMap, remove: fc.array(key, { maxLength: 3 }) }),
        groupVersionKind: fc.record({ group: fc.constantFrom('', 'g'), kind: fc.constantFrom('', 'K') }),
        overrides: fc.constant([{ type: 'replace', path: '/metadata/name', value: '{{ .Object.GetName }}-x' }]),
        syncStatus: fc.boolean(),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);

/** A context knowing the Cluster of whatever owner the generated object names. */
function ctxFor(obj: KubeObject): MutationContext {
  const owner = obj.metadata?.annotations?.[ANNOTATIONS.ownership];
  return owner ? { ...ctx, clusters: [...ctx.clusters, cluster('generated-owner', owner)] } : ctx;
}

describe('properties', () => {
  it('never changes its input', () => {
    fc.assert(
      fc.property(arbObject, fc.array(arbRule, { maxLength: 3 }), (obj, rules) => {
        const before = structuredClone(obj);
        build(rules, obj, ctxFor(obj));
        assert.deepEqual(obj, before);
      }),
    );
  });

  it('stripping is idempotent and leaves none of the stripped metadata', () => {
    fc.assert(
      fc.property(arbObject, (obj) => {
        const once = structuredClone(obj);
        stripSourceMetadata(once);
        const twice = structuredClone(once);
        stripSourceMetadata(twice);
        assert.deepEqual(twice, once);
        for (const k of STRIPPED_ANNOTATIONS) assert.equal(once.metadata?.annotations?.[k], undefined);
        for (const f of ['uid', 'resourceVersion', 'generation', 'finalizers'] as const) assert.equal(once.metadata?.[f], undefined);
      }),
    );
  });

  it('always carries an owner, our source identity and no server-set metadata', () => {
    fc.assert(
      fc.property(arbObject, fc.array(arbRule, { maxLength: 3 }), (obj, rules) => {
        const out = build(rules, obj, ctxFor(obj));
        const m = combineMutations(rules);
        assert.ok(out.metadata?.labels?.[LABELS.ownership]);
        assert.equal(parseSourceIdentity(out.metadata?.annotations?.[ANNOTATIONS.source])?.name, obj.metadata?.name);
        assert.equal(out.metadata?.uid, undefined);
        assert.equal(out.metadata?.resourceVersion, undefined);
        assert.equal('status' in out, m.syncStatus && 'status' in obj);
      }),
    );
  });

  it('is deterministic: the same input gives the same copy', () => {
    fc.assert(fc.property(arbObject, fc.array(arbRule, { maxLength: 3 }), (obj, rules) => assert.deepEqual(build(rules, obj, ctxFor(obj)), build(rules, obj, ctxFor(obj)))));
  });
});

describe('mayChangeOwner', () => {
  const withMutations = (mutations: SyncRule['mutations']): SyncRule[] => [{ match: [{}] }, { mutations }];

  it('is false for rules whose mutations leave the owner alone', () => {
    assert.equal(mayChangeOwner([]), false);
    assert.equal(mayChangeOwner([{ match: [{}] }]), false);
    assert.equal(
      mayChangeOwner(
        withMutations({
          annotations: { add: { team: 'a' }, remove: ['b'] },
          labels: { add: { tier: 'x' }, remove: ['y'] },
          groupVersionKind: { kind: 'Secret' },
          overrides: [
            { type: 'replace', path: '/metadata/name', value: 'x' },
            { type: 'replace', path: '/metadata/annotations/team', value: 'x' },
            { type: 'replace', path: '/metadata/labels?/tier', value: 'x' },
            { type: 'remove', path: '/data/key' },
            { type: 'replace', path: '/spec/items/name=a/value', value: 'x' },
          ],
        }),
      ),
      false,
    );
  });

  it('is never wrong: while it is false, every copy keeps its source owner (or the peer as owner)', () => {
    const escaped = ANNOTATIONS.ownership.replace('/', '~1');
    const someKey = fc.constantFrom(ANNOTATIONS.ownership, 'team', 'tier');
    const keyChanges = fc.record({ add: fc.dictionary(someKey, fc.constantFrom('', 'other-uid')), remove: fc.array(someKey, { maxLength: 2 }) }, { requiredKeys: [] });
    const path = fc.constantFrom('/metadata/name', '/metadata/annotations?/team', `/metadata/annotations?/${escaped}`, `/metadata/labels?/${escaped}`, '/metadata/labels', '/metadata', '/data?/k');
    const override = fc.record({ type: fc.constantFrom('replace', 'remove'), path, value: fc.constantFrom('other-uid', '') });
    const rule: fc.Arbitrary<SyncRule> = fc.record({ mutations: fc.record({ annotations: keyChanges, labels: keyChanges, overrides: fc.array(override, { maxLength: 2 }) }, { requiredKeys: [] }) });
    let kept = 0;
    fc.assert(
      fc.property(arbObject, fc.array(rule, { maxLength: 3 }), (obj, rules) => {
        if (mayChangeOwner(rules)) return;
        let out: KubeObject;
        try {
          out = build(rules, obj, ctxFor(obj));
        } catch (err) {
          if (err instanceof RuleError) return;
          throw err;
        }
        kept++;
        assert.equal(out.metadata?.annotations?.[ANNOTATIONS.ownership], obj.metadata?.annotations?.[ANNOTATIONS.ownership] || PEER);
        assert.equal(out.metadata?.labels?.[LABELS.ownership], obj.metadata?.labels?.[LABELS.ownership] || PEER);
      }),
      { numRuns: 500 },
    );
    assert.ok(kept > 50, `only ${kept} cases were checked`);
  });

  for (const [what, mutations] of [
    ['an annotation added under the ownership key', { annotations: { add: { [ANNOTATIONS.ownership]: 'x' } } }],
    ['the ownership annotation removed', { annotations: { remove: [ANNOTATIONS.ownership] } }],
    ['a label added under the ownership key', { labels: { add: { [LABELS.ownership]: 'x' } } }],
    ['the ownership label removed', { labels: { remove: [LABELS.ownership] } }],
    ['an override of the ownership annotation', { overrides: [{ type: 'replace', path: `/metadata/annotations/${ANNOTATIONS.ownership.replace('/', '~1')}`, value: 'x' }] }],
    ['an optional override of the ownership label', { overrides: [{ type: 'remove', path: `/metadata/labels?/${LABELS.ownership.replace('/', '~1')}` }] }],
    ['an override of all annotations', { overrides: [{ type: 'replace', path: '/metadata/annotations', value: '{}' }] }],
    ['an override of all labels', { overrides: [{ type: 'remove', path: '/metadata/labels?' }] }],
    ['an override of the metadata', { overrides: [{ type: 'replace', path: '/metadata', value: 'name: x' }] }],
    ['an override of the whole object', { overrides: [{ type: 'replace', path: '', value: 'x' }] }],
    ['an override whose path does not parse', { overrides: [{ type: 'replace', path: 'metadata', value: 'x' }] }],
  ] as const) {
    it(`is true for ${what}`, () => {
      assert.equal(mayChangeOwner(withMutations(mutations as SyncRule['mutations'])), true);
    });
  }
});

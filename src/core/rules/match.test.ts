import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContentSelector, KubeObject, ResourceSyncRuleSpec, SyncRuleMatch } from '../api/types.ts';
import { RuleError } from './errors.ts';
import { compileRule, matchRule, RULE_LIMITS, validateRule } from './match.ts';

const GVK = { version: 'v1', kind: 'ConfigMap' };

function cm(opts: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; data?: unknown } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: opts.name ?? 'cm',
      ...(opts.namespace === '' ? {} : { namespace: opts.namespace ?? 'ns' }),
      ...(opts.labels ? { labels: opts.labels } : {}),
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    ...(opts.data === undefined ? {} : { data: opts.data }),
  };
}

function spec(...match: SyncRuleMatch[]): ResourceSyncRuleSpec {
  return { groupVersionKind: GVK, rules: [{ match }] };
}

function matches(m: SyncRuleMatch | SyncRuleMatch[], obj: KubeObject): boolean {
  return matchRule(spec(...(Array.isArray(m) ? m : [m])), obj).matched;
}

describe('matchRule: GVK gate and rule combination', () => {
  it('requires the exact group, version and kind', () => {
    const s: ResourceSyncRuleSpec = { groupVersionKind: GVK, rules: [{}] };
    assert.equal(matchRule(s, cm()).matched, true);
    assert.equal(matchRule(s, { ...cm(), apiVersion: 'v2' }).matched, false);
    assert.equal(matchRule(s, { ...cm(), kind: 'Secret' }).matched, false);
    assert.equal(matchRule(s, { ...cm(), apiVersion: 'x/v1' }).matched, false);
    const apps = { groupVersionKind: { group: 'apps', version: 'v1', kind: 'Deployment' }, rules: [{}] };
    assert.equal(matchRule(apps, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }).matched, true);
  });

  it('an empty rules list matches nothing; a rule without match entries matches everything', () => {
    assert.deepEqual(matchRule({ groupVersionKind: GVK, rules: [] }, cm()), { matched: false, matchedRules: [] });
    assert.equal(matchRule({ groupVersionKind: GVK, rules: [{ match: [] }] }, cm()).matched, true);
  });

  it('collects every matching rule, in order (OR over rules)', () => {
    const r0 = { match: [{ objectKey: { name: 'other' } }] };
    const r1 = { match: [{ objectKey: { name: 'cm' } }], mutations: { syncStatus: true } };
    const r2 = {};
    const res = matchRule({ groupVersionKind: GVK, rules: [r0, r1, r2] }, cm());
    assert.equal(res.matched, true);
    assert.deepEqual(res.matchedRules, [r1, r2]);
    assert.equal(res.matchedRules[0], r1, 'the rules themselves, not copies');
  });

  it('ORs match entries and ANDs the criteria of one entry', () => {
    assert.equal(matches([{ objectKey: { name: 'x' } }, { objectKey: { name: 'cm' } }], cm()), true);
    assert.equal(matches([{ objectKey: { name: 'cm' }, namespaces: ['other'] }], cm()), false);
    assert.equal(matches([{ objectKey: { name: 'cm' }, namespaces: ['ns'] }], cm()), true);
  });
});

describe('matchRule: criteria', () => {
  const table: [string, SyncRuleMatch, KubeObject, boolean][] = [
    ['empty entry', {}, cm(), true],
    ['objectKey.name equal', { objectKey: { name: 'cm' } }, cm(), true],
    ['objectKey.name differs', { objectKey: { name: 'x' } }, cm(), false],
    ['objectKey.namespace equal', { objectKey: { namespace: 'ns' } }, cm(), true],
    ['objectKey.namespace differs', { objectKey: { namespace: 'x' } }, cm(), false],
    ['objectKey.namespace vs cluster-scoped', { objectKey: { namespace: 'ns' } }, cm({ namespace: '' }), false],
    ['namespaces contains', { namespaces: ['a', 'ns'] }, cm(), true],
    ['namespaces lacks', { namespaces: ['a', 'b'] }, cm(), false],
    ['namespaces ignored for cluster-scoped objects', { namespaces: ['a'] }, cm({ namespace: '' }), true],
    ['labels: empty selector matches everything', { labels: [{}] }, cm(), true],
    ['labels: matchLabels', { labels: [{ matchLabels: { app: 'x' } }] }, cm({ labels: { app: 'x' } }), true],
    ['labels: matchLabels, other value', { labels: [{ matchLabels: { app: 'x' } }] }, cm({ labels: { app: 'y' } }), false],
    ['labels: any of the selectors', { labels: [{ matchLabels: { app: 'y' } }, { matchLabels: { app: 'x' } }] }, cm({ labels: { app: 'x' } }), true],
    ['labels: matchLabels AND expressions', { labels: [{ matchLabels: { app: 'x' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }] }, cm({ labels: { app: 'x' } }), false],
    ['labels: In', { labels: [{ matchExpressions: [{ key: 'app', operator: 'In', values: ['a', 'x'] }] }] }, cm({ labels: { app: 'x' } }), true],
    ['labels: NotIn with the label absent', { labels: [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['x'] }] }] }, cm(), true],
    ['labels: DoesNotExist', { labels: [{ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }] }, cm({ labels: { app: 'x' } }), false],
    ['labels: object without labels vs matchLabels', { labels: [{ matchLabels: { app: 'x' } }] }, cm(), false],
    ['annotations: matchAnnotations', { annotations: [{ matchAnnotations: { team: 'a' } }] }, cm({ annotations: { team: 'a' } }), true],
    ['annotations: matchAnnotations, other value', { annotations: [{ matchAnnotations: { team: 'a' } }] }, cm({ annotations: { team: 'b' } }), false],
    ['annotations: Exists', { annotations: [{ matchExpressions: [{ key: 'example.com/sync', operator: 'Exists' }] }] }, cm({ annotations: { 'example.com/sync': '' } }), true],
    ['annotations: Exists, absent', { annotations: [{ matchExpressions: [{ key: 'example.com/sync', operator: 'Exists' }] }] }, cm(), false],
    ['annotations: Exists on a value no label could hold', { annotations: [{ matchExpressions: [{ key: 'big', operator: 'Exists' }] }] }, cm({ annotations: { big: '{"json": ' + 'x'.repeat(100) + '}' } }), true],
    ['annotations: DoesNotExist, absent', { annotations: [{ matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] }] }, cm({ annotations: { other: '1' } }), true],
    ['annotations: DoesNotExist, present', { annotations: [{ matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] }] }, cm({ annotations: { skip: 'true' } }), false],
    ['annotations: DoesNotExist, no annotations at all', { annotations: [{ matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] }] }, cm(), true],
    ['annotations: NotIn', { annotations: [{ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }] }, cm({ annotations: { env: 'dev' } }), true],
    ['annotations: any of the selectors', { annotations: [{ matchAnnotations: { a: '1' } }, { matchAnnotations: { b: '2' } }] }, cm({ annotations: { b: '2' } }), true],
    ['annotations are not labels', { annotations: [{ matchAnnotations: { app: 'x' } }] }, cm({ labels: { app: 'x' } }), false],
  ];
  for (const [name, m, obj, want] of table) it(name, () => assert.equal(matches(m, obj), want));
});

describe('matchRule: content (gjson paths, int-or-string values)', () => {
  // A kind upstream's scheme does not know: matched as the unstructured map, any JSON allowed.
  const WIDGET = { group: 'example.com', version: 'v1', kind: 'Widget' };
  const obj: KubeObject = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'cm', namespace: 'ns', labels: { 'app.kubernetes.io/name': 'web' } },
    data: { s: 'abc', n: '3', int: 3, float: 3.7, neg: -2, t: true, f: false, z: null, o: { a: 1 }, arr: [1, 2], e: '' },
  };
  const matches = (m: SyncRuleMatch, o: KubeObject): boolean => matchRule({ groupVersionKind: WIDGET, rules: [{ match: [m] }] }, o).matched;
  const table: [string, string, number | string, boolean][] = [
    ['string equal', 'data.s', 'abc', true],
    ['string differs', 'data.s', 'abd', false],
    ['missing path', 'data.missing', 'abc', false],
    ['missing path vs 0', 'data.missing', 0, false],
    ['null exists, String() is ""', 'data.z', '', true],
    ['empty string', 'data.e', '', true],
    ['escaped dots', 'metadata.labels.app\\.kubernetes\\.io/name', 'web', true],
    ['int vs int', 'data.int', 3, true],
    ['int vs other int', 'data.int', 4, false],
    ['int vs its text', 'data.int', '3', true],
    ['numeric string vs int (Int() parses it)', 'data.n', 3, true],
    ['numeric string vs string', 'data.n', '3', true],
    ['float vs int (Int() truncates)', 'data.float', 3, true],
    ['float vs its shortest text', 'data.float', '3.7', true],
    ['negative int', 'data.neg', -2, true],
    ['true vs 1', 'data.t', 1, true],
    ['true vs "true"', 'data.t', 'true', true],
    ['false vs "false"', 'data.f', 'false', true],
    ['value 0 matches false', 'data.f', 0, true],
    ['value 0 matches null', 'data.z', 0, true],
    ['value 0 matches an object', 'data.o', 0, true],
    ['value 0 matches an array', 'data.arr', 0, true],
    ['value 0 matches a non-numeric string', 'data.s', 0, true],
    ['value 0 does not match 3', 'data.int', 0, false],
    ['object vs its raw JSON', 'data.o', '{"a":1}', true],
    ['array length', 'data.arr.#', 2, true],
    ['array index', 'data.arr.1', 2, true],
    ['kind of an unstructured object', 'kind', 'Widget', true],
  ];
  for (const [name, key, value, want] of table) {
    it(name, () => assert.equal(matches({ content: [{ key, value }] }, obj), want));
  }

  it('fails with a rule error on an object a content key would copy many times over', () => {
    const large: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large', namespace: 'ns' }, data: { k: 'd'.repeat(900_000) } };
    const matching = (key: string): boolean => matchRule({ groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ content: [{ key, value: 'ConfigMap' }] }] }] }, large).matched;
    assert.throws(() => matching(`${'@reverse|'.repeat(40)}kind`), (e: unknown) => e instanceof RuleError && /^content key "@reverse\|@reverse.*": the path builds more than 16 MiB of JSON/.test(e.message));
    assert.equal(matching('@reverse|@reverse|kind'), true);
  });

  it('every content entry must hold', () => {
    assert.equal(matches({ content: [{ key: 'data.s', value: 'abc' }, { key: 'data.int', value: 3 }] }, obj), true);
    assert.equal(matches({ content: [{ key: 'data.s', value: 'abc' }, { key: 'data.int', value: 4 }] }, obj), false);
  });

  // Kinds upstream's scheme knows are matched as the JSON of their Go type.
  const typed = (kind: string, content: ContentSelector[], o: KubeObject): boolean =>
    matchRule({ groupVersionKind: { version: 'v1', kind }, rules: [{ match: [{ content }] }] }, o).matched;

  it('a Secret is marshalled from its Go type: data as base64, zero values, unknown fields dropped', () => {
    const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dmFs' }, extra: 'x' };
    assert.equal(typed('Secret', [{ key: 'data.k', value: 'dmFs' }], secret), true);
    assert.equal(typed('Secret', [{ key: 'metadata.creationTimestamp', value: '' }], secret), true, 'creationTimestamp: null exists');
    assert.equal(typed('Secret', [{ key: 'extra', value: 'x' }], secret), false);
    assert.equal(typed('Secret', [{ key: 'apiVersion', value: 'v1' }, { key: 'kind', value: 'Secret' }], secret), true);
  });

  it('a Service gets its typed defaults (status.loadBalancer) and canonical ports', () => {
    const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ port: 80, targetPort: 'http' }] } };
    assert.equal(typed('Service', [{ key: 'status.loadBalancer', value: '{}' }], svc), true);
    assert.equal(typed('Service', [{ key: 'spec.ports.0.targetPort', value: 'http' }], svc), true);
  });

  it('an object that does not fit its Go type matches no content', () => {
    const bad: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { n: 3 } };
    assert.equal(typed('ConfigMap', [{ key: 'metadata.name', value: 'cm' }], bad), false);
    assert.equal(typed('ConfigMap', [], bad), true, 'without content matchers nothing is marshalled');
  });

  it('matches the core secrets rule the way upstream does', () => {
    const s: ResourceSyncRuleSpec = {
      groupVersionKind: { version: 'v1', kind: 'Secret' },
      rules: [{ match: [{ content: [{ key: 'type', value: 'k8s.cisco.com/cluster-registry-secret' }], namespaces: ['cluster-registry'], objectKey: {} }] }],
    };
    const secret = (type: string, namespace: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', type, metadata: { name: 's', namespace } });
    assert.equal(matchRule(s, secret('k8s.cisco.com/cluster-registry-secret', 'cluster-registry')).matched, true);
    assert.equal(matchRule(s, secret('Opaque', 'cluster-registry')).matched, false);
    assert.equal(matchRule(s, secret('k8s.cisco.com/cluster-registry-secret', 'default')).matched, false);
  });
});

describe('validateRule and RuleError', () => {
  it('reports label and annotation values that are not strings (YAML booleans and numbers from a file) by their path', () => {
    const spec = { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ mutations: { labels: { add: { explained: true } }, annotations: { add: { n: 3 } } } }] } as unknown as ResourceSyncRuleSpec;
    assert.deepEqual(
      validateRule(spec).map((i) => i.path),
      ['spec.rules[0].mutations.labels.add.explained', 'spec.rules[0].mutations.annotations.add.n'],
    );
  });

  it('accepts a valid rule', () => {
    assert.deepEqual(
      validateRule({
        groupVersionKind: GVK,
        clusterFeatureMatch: [{ featureName: 'f', matchLabels: { a: 'b' } }],
        rules: [
          {
            match: [{ labels: [{ matchExpressions: [{ key: 'a', operator: 'Exists' }] }], content: [{ key: 'data.x', value: 1 }] }],
            mutations: { labels: { add: { a: 'b' } }, annotations: { add: { 'example.com/x': 'any value at all: {}' } }, overrides: [{ type: 'replace', path: '/metadata/name', value: 'x' }, { type: 'remove', path: '/data/x?' }] },
          },
        ],
      }),
      [],
    );
  });

  it('reports every problem with its location', () => {
    const s = {
      groupVersionKind: { version: '', kind: '' },
      clusterFeatureMatch: [{ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }],
      rules: [
        {
          match: [
            {},
            {
              labels: [{}, { matchLabels: { 'bad key!': 'v' } }],
              annotations: [{ matchAnnotations: { a: 'x'.repeat(64) } }, { matchExpressions: [{ key: 'a', operator: 'In' }] }],
              content: [{ key: '', value: 1.5 }, { key: 'a', value: true as unknown as string }],
            },
          ],
          mutations: { labels: { add: { ok: 'not ok!' } }, annotations: { add: { '/bad': 'v' } }, overrides: [{ type: 'add', path: 'no-slash' }, { type: 'replace', path: '/a:bogus' }] },
        },
      ],
    } as ResourceSyncRuleSpec;
    const paths = validateRule(s).map((i) => i.path);
    assert.deepEqual(paths, [
      'spec.groupVersionKind.version',
      'spec.groupVersionKind.kind',
      'spec.clusterFeatureMatch[0]',
      'spec.rules[0].match[1].labels[1]',
      'spec.rules[0].match[1].annotations[0]',
      'spec.rules[0].match[1].annotations[1]',
      'spec.rules[0].match[1].content[0].key',
      'spec.rules[0].match[1].content[0].value',
      'spec.rules[0].match[1].content[1].value',
      'spec.rules[0].mutations.labels.add',
      'spec.rules[0].mutations.annotations.add',
      'spec.rules[0].mutations.overrides[0].type',
      'spec.rules[0].mutations.overrides[0].path',
      'spec.rules[0].mutations.overrides[1].path',
    ]);
    for (const issue of validateRule(s)) assert.ok(issue.message.length > 0);
  });

  it('bounds the size of a rule, and accepts one at every bound', () => {
    const L = RULE_LIMITS;
    const at = (n: number) => Array.from({ length: n }, (_, i) => i);
    const sized = (n: { rules: number; match: number; overrides: number; kinds: number; template: number }): ResourceSyncRuleSpec => ({
      groupVersionKind: GVK,
      rules: at(n.rules).map((i) => ({
        match: at(n.match).map(() => ({})),
        mutations: {
          groupVersionKind: { group: 'example.com', version: 'v1', kind: `K${i % n.kinds}` },
          overrides: at(n.overrides).map(() => ({ type: 'replace', path: '/data/x', value: 'x'.repeat(n.template) })),
        },
      })),
    });
    assert.deepEqual(validateRule(sized({ rules: L.rules, match: L.matchEntries, overrides: L.overrides, kinds: L.targetKinds, template: 1 })), []);
    assert.deepEqual(validateRule(sized({ rules: 1, match: 0, overrides: 1, kinds: 1, template: L.templateBytes })), []);
    const paths = (n: Parameters<typeof sized>[0]) => validateRule(sized(n)).map((i) => `${i.path}: ${i.message}`);
    assert.deepEqual(paths({ rules: L.rules + 1, match: 0, overrides: 0, kinds: 1, template: 0 }), ['spec.rules: at most 64 rules']);
    const tooManyKinds = ["spec.rules: at most 16 target kinds besides the source's (mutations.groupVersionKind, combined as objects match several rules)"];
    assert.deepEqual(paths({ rules: L.targetKinds + 1, match: 0, overrides: 0, kinds: L.targetKinds + 1, template: 0 }), tooManyKinds);
    // Partial mutations combine: 3 groups and 3 kinds make 15 kinds past the source's (counted), 4 and 4 make 24.
    const partial = (n: number): ResourceSyncRuleSpec => ({
      groupVersionKind: GVK,
      rules: at(n).flatMap((i) => [{ mutations: { groupVersionKind: { group: `g${i}.example.com` } } }, { mutations: { groupVersionKind: { kind: `K${i}` } } }]),
    });
    assert.deepEqual(validateRule(partial(3)), []);
    assert.deepEqual(validateRule(partial(4)).map((i) => `${i.path}: ${i.message}`), tooManyKinds);
    assert.deepEqual(paths({ rules: 1, match: L.matchEntries + 1, overrides: 0, kinds: 1, template: 0 }), ['spec.rules[0].match: at most 64 entries']);
    assert.deepEqual(paths({ rules: 1, match: 0, overrides: L.overrides + 1, kinds: 1, template: 0 }), ['spec.rules[0].mutations.overrides: at most 64 overrides']);
    assert.deepEqual(paths({ rules: 1, match: 0, overrides: 1, kinds: 1, template: L.templateBytes + 1 }), ['spec.rules[0].mutations.overrides[0].value: at most 65536 bytes']);
  });

  it('names the invalid key in the message', () => {
    const [issue] = validateRule(spec({ labels: [{ matchLabels: { 'bad key!': 'v' } }] }));
    assert.equal(issue?.path, 'spec.rules[0].match[0].labels[0]');
    assert.match(issue?.message ?? '', /bad key!/);
  });

  it('matchRule throws RuleError instead of silently not matching', () => {
    const s = spec({ objectKey: { name: 'other' } }, { labels: [{ matchExpressions: [{ key: 'a', operator: 'In' }] }] });
    assert.throws(
      () => matchRule(s, cm()),
      (err: unknown) => err instanceof RuleError && err.issues.length === 1 && err.message.startsWith('spec.rules[0].match[1].labels[0]: '),
    );
    assert.throws(() => compileRule(s), RuleError);
  });

  it('a compiled rule matches many objects', () => {
    const c = compileRule(spec({ labels: [{ matchLabels: { app: 'x' } }] }));
    assert.deepEqual(
      [cm({ labels: { app: 'x' } }), cm(), cm({ labels: { app: 'y' } })].map((o) => c.match(o).matched),
      [true, false, false],
    );
  });
});

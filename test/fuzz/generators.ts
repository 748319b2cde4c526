// fast-check arbitraries for bad input: ResourceSyncRules (selectors, gjson paths, go-patch paths,
// Go templates, GVKs served and not), ClusterFeatures, Cluster specs with their kubeconfig
// Secrets, and the objects a compromised member writes to make another misbehave; and the attacks
// on the trust boundary: identities squatted, credentials named elsewhere, rules delivering into
// the controller namespace, nameless copies, costly templates, our own kinds and Events served for
// copying, floods past a rule's copy budget, and the attacker's copies of others' registry entries
// rewritten. Most of what they make is wrong on purpose; where the generator knows for sure that an
// object is bad it says so, so the verdict the controller gives can be checked against it.
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ANNOTATIONS, API_GROUP, API_GROUP_VERSION, API_VERSION, CLUSTER_SECRET, CORE_FEATURE, HUB_CREDENTIALS, KINDS, LABELS, OVERRIDE_TYPES, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE } from '../../src/core/api/keys.ts';
import type { GroupVersionKind, KubeObject, LabelSelector, Override, ResourceSyncRuleSpec, SyncRule, SyncRuleMatch } from '../../src/core/api/types.ts';

/** Namespaces of the fuzz group (made on every member before the run). */
export const NS = {
  /** Sources the generated rules match, on the peer. */
  src: 'fuzz-src',
  /** The victim's own objects, which nothing a peer or a rule does may change. */
  victim: 'fuzz-victim',
  /** Widgets with oversized status, synced with their status. */
  status: 'fuzz-status',
  /** The canary's Widgets: no generated rule reads Widgets, so nothing but the canary touches them. */
  canary: 'fuzz-canary',
  /** More small ConfigMaps on the peer than a rule may make copies of (FLOOD). */
  flood: 'fuzz-flood',
  /** Where the peer puts more than the victim's cache of it may hold, now and then (engine's oversize round). */
  bulk: 'fuzz-bulk',
} as const;

/** The ConfigMaps in NS.flood, and the copies a rule may make (the controllers' --rule-max-copies). */
export const FLOOD = { sources: 48, ruleMaxCopies: 32 } as const;

/**
 * What the attacker plants in its controller namespace for rules to deliver into the victim's: a
 * plain Secret (the quickstart's, which must still go through), Secrets of the types and names the
 * controller namespace must never receive from a peer (a Helm release's state, tokens, hub and
 * registry credentials, TLS pairs), a ConfigMap under a Helm name and a Deployment. Its webhook's
 * TLS Secret is there already, under the name the victim's own has.
 */
export const PLANTED = {
  secrets: [
    { name: 'test-secret', type: 'Opaque' },
    { name: 'sh.helm.release.v1.cluster-registry.v99', type: 'helm.sh/release.v1', labels: { owner: 'helm', name: 'cluster-registry', version: '99' } },
    { name: 'sh.helm.release.v1.cluster-registry.v98', type: 'Opaque' },
    { name: 'fz-sa-token', type: SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, annotations: { 'kubernetes.io/service-account.name': 'default' } },
    { name: 'bootstrap-token-fzfzfz', type: 'bootstrap.kubernetes.io/token', data: { 'token-id': 'fzfzfz', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' } },
    { name: 'fz-hub-credentials', type: HUB_CREDENTIALS.type },
    { name: 'fz-unnamed-credentials', type: CLUSTER_SECRET.type },
    { name: 'fz-tls', type: 'kubernetes.io/tls', data: { 'tls.crt': 'x', 'tls.key': 'x' } },
    { name: 'fz-dockerconfig', type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': '{"auths":{}}' } },
  ],
  configMaps: ['planted', 'sh.helm.release.v1.cluster-registry.v97'],
  deployment: 'planted',
  /** An Event (in NS.src), a HubSyncRule (naming no hub there is) and a ClusterFeature of the attacker's, for rules that would copy them. */
  event: 'planted-event',
  hubSyncRule: 'fz-planted-hub',
  feature: 'fz-planted-feature',
  /** A Secret of the victim outside its controller namespace, of the registry's type: nothing may ever read it as credentials. */
  foreign: { namespace: NS.victim, name: 'foreign-creds' },
  /** A plain Secret in NS.src, which rules may move and retype into the controller namespace. */
  srcSecret: 'src-secret',
} as const;

/** Names of the victim's own ConfigMaps in NS.victim; hostile peers aim at them. */
export const VICTIM_NAMES = ['victim-a', 'victim-b', 'victim-c'] as const;
/** Feature names the peer may advertise and rules may ask for. */
const FEATURES = ['fuzz-alpha', 'fuzz-beta', CORE_FEATURE.featureName] as const;

/** What a run knows when it generates: the attacker's servers and the files worth stealing on our side. */
export interface FuzzContext {
  /** A plain-HTTP server of the attacker: no connection may ever reach it. */
  readonly plainUrl: string;
  /** A TLS server of the attacker, and its CA as base64 (a kubeconfig that trusts it is acceptable). */
  readonly tlsUrl: string;
  readonly tlsCaB64: string;
  /** Where an exec plugin would leave its marker: nothing may ever appear there. */
  readonly markerDir: string;
  /** Files on the victim's side holding credentials (the controller's kubeconfig, token files, keys). */
  readonly localFiles: readonly string[];
  /** Inline tokens start with this: the only Authorization the attacker's servers may ever see. */
  readonly tokenPrefix: string;
  /** kube-system UIDs: the victim's (cluster1) and the hostile peer's (cluster2). */
  readonly victimID: string;
  readonly peerID: string;
  /**
   * kube-system UIDs of a third member that is away (both members hold its entry as it delivered
   * it, its API server gone) and of a cluster the victim's admin has described first-hand but
   * that has not joined yet.
   */
  readonly ghostID: string;
  readonly futureID: string;
  /** The controller namespace, and the Secret a controller's webhook serves with there. */
  readonly namespace: string;
  readonly webhookSecret: string;
}

/** Where a case is written: on the victim by its own admin, or on the hostile peer by its admin. */
export type Side = 'victim' | 'peer';
export type CaseKind = 'rule' | 'feature' | 'cluster' | 'peer-object';

export interface Expectation {
  /** The rule is invalid for certain (Valid must be False). */
  readonly ruleInvalid?: string;
  /** The Cluster's credentials are forbidden for certain: it must never be Ready (why, in words). */
  readonly neverReady?: string;
  /** A Cluster of the attacker's describing this cluster under another name: who it squats. */
  readonly squats?: Squatted;
}

/** Whose identity a squatting Cluster claims: the victim's, the away member's, the not-yet-member's, or one no one describes. */
export type Squatted = 'victim' | 'ghost' | 'future' | 'fresh';

export interface FuzzCase {
  readonly kind: CaseKind;
  readonly side: Side;
  /** The generator's branch, e.g. `rule/template`, for the figures by kind. */
  readonly label: string;
  /** Objects in creation order; for rules and Clusters the first one is the one that gets a verdict. */
  readonly objects: KubeObject[];
  readonly expect: Expectation;
  /** The Cluster gets a fresh Ready heartbeat in its status once made, as if its writer reached that cluster. */
  readonly heartbeat?: true;
}

/** A case before it has a name: built with the batch's unique name for it. */
export type CaseTemplate = (name: string) => FuzzCase;

export const b64 = (text: string): string => Buffer.from(text).toString('base64');

/** Some of `record`'s keys, without the undefined values JSON would drop anyway (kept out of object shapes). */
function defined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;
}

const weird = fc.string({ unit: 'binary', maxLength: 40 });
const anyText = fc.oneof(fc.string({ maxLength: 30 }), weird);

// ------------------------------------------------------------------------------- selectors

const labelKey = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('app', 'tier', 'fuzz.io/role', 'fuzz') },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(63), 'a'.repeat(64), `${'d'.repeat(254)}/k`, 'bad key', '', '-x', 'x/', '/x', 'a/b/c', LABELS.ownership) },
  { weight: 1, arbitrary: anyText },
);
const labelValue = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('web', 'db', 'cache', '') },
  { weight: 1, arbitrary: fc.constantFrom('v'.repeat(63), 'v'.repeat(64), 'x y', '-lead', 'trail-') },
  { weight: 1, arbitrary: anyText },
);
const VALID_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
const operator = fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...VALID_OPERATORS) }, { weight: 1, arbitrary: fc.constantFrom('Gt', 'Lt', 'in', '', 'Equals', 'exists') });
const requirement = fc.oneof(
  { weight: 5, arbitrary: fc.record({ key: labelKey, operator: fc.constantFrom('In', 'NotIn'), values: fc.array(labelValue, { minLength: 1, maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ key: labelKey, operator: fc.constantFrom('Exists', 'DoesNotExist') }) },
  { weight: 1, arbitrary: fc.record({ key: labelKey, operator, values: fc.option(fc.array(labelValue, { maxLength: 3 }), { nil: undefined }) }).map(defined) },
);
const labelSelector: fc.Arbitrary<LabelSelector> = fc.record(
  { matchLabels: fc.dictionary(labelKey, labelValue, { maxKeys: 3 }), matchExpressions: fc.array(requirement, { maxLength: 3 }) },
  { requiredKeys: [] },
);
/** An operator no LabelSelector accepts: a rule using it is invalid for certain. */
const badOperator = (r: { operator: string }): boolean => !(VALID_OPERATORS as readonly string[]).includes(r.operator);

// ------------------------------------------------------------------------------- gjson paths

const gjsonPath = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('data.k', 'metadata.name', 'metadata.labels.app', 'metadata.labels.fuzz\\.io/role', 'kind', 'data.size', 'metadata.annotations.note') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '..', '#', '@reverse', '@this', '@pretty', '@ugly', '@valid', '@flatten', '@join', '@keys', '@values', '{data,kind}', '[data.k,kind]', 'data|@reverse',
      'metadata.annotations.#', 'data.*', 'data.?', '#(name%"*")#', '#(k>1)#|#', '@pretty:{"indent":"          ","width":-1}', '@tostr', '@fromstr', '@group',
      '@dig:k', 'data.k|@reverse|@reverse..', '\\', 'data.\\', '..0', '[', '{', '}', ']', '"', 'a'.repeat(10_000), `${'0.'.repeat(2_000)}x`, `${'@reverse|'.repeat(500)}@this`,
      `${'['.repeat(500)}`, `${'{a:'.repeat(300)}b`, '!true', '#.#.#.#.#.#', '@pretty:{"prefix":"' + ' '.repeat(200) + '"}',
    ),
  },
  { weight: 2, arbitrary: anyText },
);
const contentValue = fc.oneof(fc.integer(), fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53, 0), fc.constantFrom('web', 'ConfigMap', 'v', ''), anyText);

// ------------------------------------------------------------------------------- templates

/** Function names: Go's builtins, sprig's, ours removed on purpose, and made-up ones. */
const FUNCS = [
  'printf', 'print', 'len', 'index', 'slice', 'and', 'or', 'not', 'eq', 'ne', 'lt', 'html', 'js', 'urlquery', 'call',
  'upper', 'lower', 'trim', 'repeat', 'replace', 'regexMatch', 'regexReplaceAll', 'splitList', 'join', 'until', 'untilStep', 'seq', 'toYaml', 'fromYaml',
  'toJson', 'fromJson', 'b64dec', 'b64enc', 'sha256sum', 'randAlphaNum', 'uuidv4', 'now', 'date', 'default', 'required', 'fail', 'tpl', 'include',
  'env', 'expandenv', 'getHostByName', 'readFile', 'exec', 'osExec', 'nosuchfunc', 'semverCompare', 'dict', 'list', 'get', 'set', 'deepCopy', 'quote',
] as const;
const templateArg = fc.oneof(
  fc.constantFrom('.', '.Object', '.Object.GetName', '.Cluster.GetName', '.LocalCluster', '.Object.Data', '.Nope.Deeper', '$', 'nil', 'true', '1', '-1', '1e308', '100000000', '"x"', '"(a+)+$"', '"/etc/passwd"', '"HOME"', '"touch /tmp/x"'),
  fc.integer().map(String),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
);
const calledTemplate = fc.tuple(fc.constantFrom(...FUNCS), fc.array(templateArg, { maxLength: 3 })).map(([f, args]) => `{{ ${[f, ...args].join(' ')} }}`);
const template = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('{{ .Object.GetName }}-copy', '{{ printf "%s-from-%s" .Object.GetName .Cluster.GetName }}', 'fixed', '', '{{ .Object.GetNamespace }}', '{{ index .Object.Data "k" }}') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '{{', '}}', '{{ .Object.GetName ', '{{ end }}', '{{ if }}', '{{ range }}', '{{ else }}', '{{ template "nope" }}', '{{ define "x" }}', '{{/* unclosed', '{{ $x := }}', '{{ 1 2 }}',
      '{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}',
      '{{ range $i, $e := until 100000 }}xxxxxxxxxxxxxxxx{{ end }}',
      '{{ repeat 100000000 "x" }}',
      '{{ printf "%0100000000d" 1 }}',
      '{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}x{{ end }}{{ end }}{{ end }}',
      '{{ regexMatch "(a+)+$" (repeat 40 "a") }}',
      '{{ toYaml . }}', '{{ toJson .Object }}', '{{ .Object.GetName | upper | lower | repeat 3 }}', '{{ index .Object.Data "missing" "deeper" }}',
      `${'{{ if true }}'.repeat(2_000)}x${'{{ end }}'.repeat(2_000)}`,
      `${'('.repeat(3_000)}1${')'.repeat(3_000)}`.replace(/^/, '{{ ').replace(/$/, ' }}'),
      'x'.repeat(70 * 1024),
      '{{ fail "boom" }}', '{{ required "needed" .Nope }}', '{{ env "PATH" }}', '{{ expandenv "$HOME" }}', '{{ getHostByName "example.com" }}', '{{ tpl "{{ .x }}" . }}',
      '{{ call .Object.GetName }}', '{{ .Object.DeepCopy }}', '{{ .Object.SetName "evil" }}', '{{ (index .Object.Spec 0) }}', '{{ slice "abc" 5 1 }}', '{{ index (list 1 2) 99 }}',
      '{{ until 1000000000 }}', '{{ seq 1 100000000 }}', '{{ b64dec "%%%" }}', '{{ fromYaml "a: &a [*a]" }}', '{{ fromJson "{" }}', '{{ dict "a" }}',
    ),
  },
  { weight: 3, arbitrary: calledTemplate },
  { weight: 1, arbitrary: anyText },
);

// ------------------------------------------------------------------------------- go-patch paths

const patchPath = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/metadata/name', '/data/k', '/data?/extra', '/metadata/labels?/fuzz', '/metadata/annotations?/note', '/metadata/namespace') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '', '/', 'metadata/name', '/a/-1', '/x/key=val', '/items/name=x/y', '/metadata/ownerReferences', `/metadata/annotations?/${ANNOTATIONS.ownership.replaceAll('/', '~1')}`,
      `/metadata/annotations?/${ANNOTATIONS.source.replaceAll('/', '~1')}`, '/apiVersion', '/kind', '/metadata/uid', '/metadata/finalizers?/-', '/metadata/deletionTimestamp?',
      '/~2', '/a~', `${'/a?'.repeat(500)}`, '/data/0/1/2', '/-/-', '/status?/phase',
    ),
  },
  { weight: 1, arbitrary: anyText.map((s) => `/${s}`) },
  { weight: 1, arbitrary: anyText },
);
const override: fc.Arbitrary<Override> = fc
  .record(
    {
      type: fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...Object.values(OVERRIDE_TYPES)) }, { weight: 1, arbitrary: fc.constantFrom('add', '', 'Replace', 'test') }),
      path: patchPath,
      value: template,
      parseValue: fc.boolean(),
    },
    { requiredKeys: ['type'] },
  )
  .map(defined);

// ------------------------------------------------------------------------------- GVKs

const GVKS_OK: readonly GroupVersionKind[] = [{ version: 'v1', kind: 'ConfigMap' }];
const GVKS_DENIED: readonly GroupVersionKind[] = [
  { version: 'v1', kind: 'Secret' },
  { version: 'v1', kind: 'ServiceAccount' },
  { version: 'v1', kind: 'Namespace' },
  { group: 'apps', version: 'v1', kind: 'Deployment' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole' },
  { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding' },
  { group: API_GROUP, version: API_VERSION, kind: 'ClusterFeature' },
];
const GVKS_UNSERVED: readonly GroupVersionKind[] = [
  { group: 'fuzz.example.com', version: 'v1', kind: 'Gadget' },
  { version: 'v2', kind: 'ConfigMap' },
  { version: 'v1', kind: 'configmap' },
  { group: 'example.com', version: 'v2', kind: 'Widget' },
  { group: '../../api', version: 'v1', kind: 'Secret' },
  { group: 'x', version: 'v1/../../v1', kind: 'ConfigMap' },
];
const gvk: fc.Arbitrary<GroupVersionKind> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...GVKS_OK) },
  { weight: 2, arbitrary: fc.constantFrom(...GVKS_DENIED) },
  { weight: 2, arbitrary: fc.constantFrom(...GVKS_UNSERVED) },
  { weight: 1, arbitrary: fc.record({ group: anyText, version: anyText, kind: anyText }, { requiredKeys: [] }) },
);

// ------------------------------------------------------------------------------- rules

const namespace = fc.oneof({ weight: 6, arbitrary: fc.constant(NS.src) }, { weight: 2, arbitrary: fc.constantFrom(NS.victim, 'kube-system', 'default', 'cluster-registry', 'no-such-ns') }, { weight: 1, arbitrary: anyText });
const matchEntry: fc.Arbitrary<SyncRuleMatch> = fc.record(
  {
    objectKey: fc.record({ name: fc.oneof(fc.constantFrom('src-0', 'src-1', ...VICTIM_NAMES), anyText), namespace }, { requiredKeys: [] }),
    namespaces: fc.array(namespace, { minLength: 1, maxLength: 3 }),
    labels: fc.array(labelSelector, { maxLength: 2 }),
    annotations: fc.array(labelSelector.map((s) => defined({ matchAnnotations: s.matchLabels, matchExpressions: s.matchExpressions })), { maxLength: 2 }),
    content: fc.array(fc.record({ key: gjsonPath, value: contentValue }), { maxLength: 2 }),
  },
  { requiredKeys: ['namespaces'] },
);
const keyMutations = fc.record({ add: fc.dictionary(labelKey, labelValue, { maxKeys: 2 }), remove: fc.array(labelKey, { maxLength: 2 }) }, { requiredKeys: [] });
const mutations = fc
  .record(
    {
      labels: fc.option(keyMutations, { nil: undefined }),
      annotations: fc.option(keyMutations, { nil: undefined }),
      // Rarely: every other kind a rule writes costs a watch, and most such kinds are not served.
      groupVersionKind: fc.option(gvk, { freq: 8, nil: undefined }),
      overrides: fc.array(override, { maxLength: 4 }),
      syncStatus: fc.boolean(),
    },
    { requiredKeys: ['overrides'] },
  )
  .map(defined);
const syncRule: fc.Arbitrary<SyncRule> = fc.record({ match: fc.array(matchEntry, { maxLength: 3 }), mutations }, { requiredKeys: [] });
const featureMatch = fc.array(
  fc.record({ featureName: fc.oneof(fc.constantFrom(...FEATURES), anyText), matchLabels: labelSelector.map((s) => s.matchLabels ?? {}), matchExpressions: fc.array(requirement, { maxLength: 2 }) }, { requiredKeys: [] }),
  { maxLength: 2 },
);

/** Why a spec is invalid for certain, as far as the generator can tell; undefined when it cannot tell. */
function knownInvalid(spec: ResourceSyncRuleSpec): string | undefined {
  if (!spec.groupVersionKind.version || !spec.groupVersionKind.kind) return 'no version or kind';
  if (spec.rules.length > 64) return 'more than 64 rules';
  for (const r of spec.rules) {
    const selectors = (r.match ?? []).flatMap((m) => [...(m.labels ?? []), ...(m.annotations ?? []).map((a) => ({ matchExpressions: a.matchExpressions }))]);
    if (selectors.some((s) => (s.matchExpressions ?? []).some(badOperator))) return 'an unknown selector operator';
    const overrides = r.mutations?.overrides ?? [];
    if (overrides.length > 64) return 'more than 64 overrides';
    if (overrides.some((o) => !(Object.values(OVERRIDE_TYPES) as readonly string[]).includes(o.type ?? ''))) return 'an unknown override type';
    if (overrides.some((o) => Buffer.byteLength(o.value ?? '') > 64 * 1024)) return 'a template over 64 KiB';
    if (overrides.some((o) => o.type === OVERRIDE_TYPES.replace && /^\/metadata\/generateName\??$/.test(o.path ?? ''))) return 'an override setting generateName';
  }
  if ((spec.clusterFeatureMatch ?? []).some((f) => (f.matchExpressions ?? []).some(badOperator))) return 'an unknown feature selector operator';
  return undefined;
}

const ruleSpec: fc.Arbitrary<ResourceSyncRuleSpec> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record(
      { clusterFeatureMatch: featureMatch, groupVersionKind: gvk, rules: fc.array(syncRule, { minLength: 1, maxLength: 3 }), driftPolicy: fc.constantFrom('Revert' as const, 'Report' as const, 'Pause' as const) },
      { requiredKeys: ['groupVersionKind', 'rules'] },
    ),
  },
  // At and over the limits the controller sets on one rule.
  { weight: 1, arbitrary: fc.constantFrom(64, 65, 200).map((n) => ({ groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: Array.from({ length: n }, () => ({ match: [{ namespaces: [NS.src] }] })) })) },
  { weight: 1, arbitrary: fc.constantFrom(64, 65).map((n) => ({ groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [NS.src] }], mutations: { overrides: Array.from({ length: n }, (_, i) => ({ type: 'replace', path: `/data?/k${i}`, value: '{{ .Object.GetName }}' })) } }] })) },
  // Kind mutations fanning out to many target kinds.
  { weight: 1, arbitrary: fc.constantFrom(16, 17, 40).map((n) => ({ groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: Array.from({ length: n }, (_, i) => ({ match: [{ objectKey: { name: `src-${i}` } }], mutations: { groupVersionKind: { group: 'fuzz.example.com', version: 'v1', kind: `Kind${i}` } } })) })) },
);

/**
 * Rules every selector and patch path of which is valid, so they run: what is hostile in them is
 * what only running shows (templates, gjson paths, kinds, namespaces, copies that collide).
 */
const goodKey = fc.constantFrom('app', 'tier', 'fuzz.io/role', 'fuzz');
const goodValue = fc.constantFrom('web', 'db', 'cache', '');
const goodSelector: fc.Arbitrary<LabelSelector> = fc.record(
  {
    matchLabels: fc.dictionary(goodKey, goodValue, { maxKeys: 2 }),
    matchExpressions: fc.array(
      fc.oneof(fc.record({ key: goodKey, operator: fc.constantFrom('In', 'NotIn'), values: fc.array(goodValue, { minLength: 1, maxLength: 2 }) }), fc.record({ key: goodKey, operator: fc.constantFrom('Exists', 'DoesNotExist') })),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: [] },
);
const runnableSpec: fc.Arbitrary<ResourceSyncRuleSpec> = fc
  .record({
    gvk: fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...GVKS_OK) }, { weight: 1, arbitrary: fc.constantFrom(...GVKS_DENIED, ...GVKS_UNSERVED) }),
    namespaces: fc.array(fc.oneof({ weight: 8, arbitrary: fc.constant(NS.src) }, { weight: 1, arbitrary: fc.constantFrom(NS.victim, 'kube-system', 'default') }), { minLength: 1, maxLength: 2 }),
    labels: fc.array(goodSelector, { maxLength: 1 }),
    content: fc.array(fc.record({ key: gjsonPath, value: contentValue }), { maxLength: 1 }),
    overrides: fc.array(
      fc.record({ type: fc.constantFrom('replace', 'replace', 'remove'), path: fc.constantFrom('/metadata/name', '/data/k', '/data?/out', '/metadata/labels?/fuzz', '/metadata/annotations?/note', '/metadata/namespace'), value: template, parseValue: fc.boolean() }),
      { minLength: 1, maxLength: 3 },
    ),
    syncStatus: fc.boolean(),
  })
  .map((r) => ({
    groupVersionKind: r.gvk,
    rules: [{ match: [defined({ namespaces: r.namespaces, labels: r.labels.length ? r.labels : undefined, content: r.content.length ? r.content : undefined })], mutations: { overrides: r.overrides, syncStatus: r.syncStatus } }],
  }));

const rule = (side: Side): fc.Arbitrary<CaseTemplate> =>
  fc.oneof(ruleSpec.map((spec) => ({ spec, family: 'any' })), runnableSpec.map((spec) => ({ spec, family: 'runnable' }))).map(({ spec, family }) => (name: string): FuzzCase => {
    const invalid = knownInvalid(spec);
    const labels = spec.rules.flatMap((r) => [r.mutations?.overrides?.length ? 'template' : '', r.match?.some((m) => m.content?.length) ? 'gjson' : '', r.match?.some((m) => m.labels?.length || m.annotations?.length) ? 'selector' : '']);
    const label = `rule/${family}/${[...new Set(labels.filter(Boolean))].sort().join('+') || 'plain'}`;
    return { kind: 'rule', side, label, objects: [{ apiVersion: API_GROUP_VERSION, kind: 'ResourceSyncRule', metadata: { name }, spec }], expect: invalid ? { ruleInvalid: invalid } : {} };
  });

// ------------------------------------------------------------------------------- features

const feature: fc.Arbitrary<CaseTemplate> = fc
  .record({ featureName: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...FEATURES) }, { weight: 1, arbitrary: fc.constantFrom('', 'x'.repeat(300)) }, { weight: 1, arbitrary: anyText }), labels: fc.dictionary(labelKey, labelValue, { maxKeys: 3 }) })
  .map(({ featureName, labels }) => (name: string): FuzzCase => ({
    kind: 'feature',
    side: 'peer',
    label: 'feature',
    objects: [{ apiVersion: API_GROUP_VERSION, kind: 'ClusterFeature', metadata: { name, labels }, spec: { featureName } }],
    expect: {},
  }));

// ------------------------------------------------------------------------------- kubeconfigs and Clusters

/** One way to reach the attacker, and whether a peer kubeconfig may use it. */
interface Piece {
  readonly value: Record<string, unknown>;
  /** Why a peer kubeconfig with it must be refused; undefined when it is acceptable. */
  readonly forbidden?: string;
}

function clusterPieces(ctx: FuzzContext): fc.Arbitrary<Piece> {
  const trusted = { server: ctx.tlsUrl, 'certificate-authority-data': ctx.tlsCaB64 };
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant<Piece>({ value: trusted }) },
    {
      weight: 4,
      arbitrary: fc.constantFrom<Piece>(
        { value: { server: ctx.plainUrl }, forbidden: 'an http server' },
        { value: { ...trusted, server: ctx.plainUrl.replace('http:', 'HTTP:') }, forbidden: 'an HTTP server' },
        { value: { server: ctx.tlsUrl, 'insecure-skip-tls-verify': true }, forbidden: 'insecure-skip-tls-verify' },
        { value: { ...trusted, 'proxy-url': ctx.plainUrl }, forbidden: 'a proxy' },
        { value: { server: ctx.tlsUrl, 'certificate-authority': ctx.localFiles[0] ?? '/etc/hostname' }, forbidden: 'a CA file' },
        { value: { ...trusted, server: ctx.tlsUrl.replace('https://', 'https://user:pass@') }, forbidden: 'credentials in the URL' },
        { value: { ...trusted, server: 'unix:///var/run/docker.sock' }, forbidden: 'a unix socket' },
        { value: { ...trusted, server: 'file:///etc/passwd' }, forbidden: 'a file URL' },
        { value: { ...trusted, server: '' } },
        { value: { ...trusted, server: 'https://127.0.0.1:1' } },
        { value: { ...trusted, 'certificate-authority-data': b64('not a certificate') } },
        { value: { ...trusted, 'certificate-authority-data': '%%%not-base64' } },
        { value: { ...trusted, 'tls-server-name': 'kubernetes.default' } },
        { value: { ...trusted, extensions: [{ name: 'x', extension: { a: 1 } }] } },
        { value: { ...trusted, server: 42 } },
      ),
    },
  );
}

function userPieces(ctx: FuzzContext, token: string): fc.Arbitrary<Piece> {
  const file = fc.constantFrom(...(ctx.localFiles.length > 0 ? ctx.localFiles : ['/etc/hostname']));
  const touch = (what: string): string => `touch ${ctx.markerDir}/${what}-ran`;
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant<Piece>({ value: { token } }) },
    {
      weight: 4,
      arbitrary: fc.oneof(
        file.map((f): Piece => ({ value: { 'token-file': f }, forbidden: 'token-file' })),
        file.map((f): Piece => ({ value: { tokenFile: f }, forbidden: 'tokenFile' })),
        file.map((f): Piece => ({ value: { token, 'client-certificate': f, 'client-key': f }, forbidden: 'client certificate files' })),
        fc.constantFrom<Piece>(
          { value: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh', args: ['-c', touch('exec')], interactiveMode: 'Never' } }, forbidden: 'an exec plugin' },
          { value: { token, exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: `${ctx.markerDir}/../../bin/sh`, args: ['-c', touch('exec2')] } }, forbidden: 'an exec plugin' },
          { value: { 'auth-provider': { name: 'oidc', config: { 'idp-issuer-url': ctx.plainUrl, 'client-id': 'x', 'id-token': token } } }, forbidden: 'an auth provider' },
          { value: { 'auth-provider': { name: 'gcp', config: { 'cmd-path': '/bin/sh', 'cmd-args': `-c "${touch('gcp')}"` } } }, forbidden: 'an auth provider' },
          { value: { username: 'admin', password: token }, forbidden: 'basic auth' },
          { value: { token, as: 'system:admin', 'as-groups': ['system:masters'] }, forbidden: 'impersonation' },
          { value: { 'client-certificate-data': b64('junk'), 'client-key-data': b64('junk') } },
          { value: { token: 42 } },
          { value: {} },
        ),
      ),
    },
  );
}

/** A kubeconfig Secret's text and why it must be refused (undefined when it may be acceptable). */
function kubeconfig(ctx: FuzzContext, token: string): fc.Arbitrary<{ text: string; forbidden?: string }> {
  const wellFormed = fc.tuple(clusterPieces(ctx), userPieces(ctx, token)).map(([c, u]) => {
    const forbidden = c.forbidden ?? u.forbidden;
    return {
      text: stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: c.value }], users: [{ name: 'u', user: u.value }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }], 'current-context': 'x' }),
      ...(forbidden ? { forbidden } : {}),
    };
  });
  const malformed = fc.oneof(
    fc.constantFrom(
      '', 'null', '[]', '42', '{', 'users: "x"', 'clusters: 5', 'a: &a [*a]', '\u0000\u0001\u0002', 'current-context: nope\ncontexts: []',
      // Billion laughs: aliases nested nine deep.
      ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9).fill(`*${String.fromCharCode(97 + i)}`).join(',')}]`)].join('\n'),
      `clusters:\n${'- name: c\n  cluster: {server: "https://127.0.0.1:1"}\n'.repeat(20_000)}`,
      `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
      'x'.repeat(900 * 1024),
    ),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );
  return fc.oneof({ weight: 5, arbitrary: wellFormed }, { weight: 1, arbitrary: malformed.map((text) => ({ text })) });
}

const clusterID = fc.oneof({ weight: 5, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.constantFrom('', 'x', 'a'.repeat(300)) }, { weight: 1, arbitrary: anyText });

function endpoint(ctx: FuzzContext): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      serverAddress: fc.oneof(fc.constantFrom(ctx.tlsUrl, ctx.plainUrl, ctx.tlsUrl.replace('https://', ''), '127.0.0.1:1', 'http://127.0.0.1:1', 'file:///etc/passwd', 'unix:///tmp/x', '', 'javascript:alert(1)', 'a'.repeat(5_000)), anyText),
      caBundle: fc.oneof(fc.constant(ctx.tlsCaB64), fc.constantFrom('', '%%%', b64('junk'))),
      clientNetwork: fc.oneof(fc.constant(''), anyText),
    },
    { requiredKeys: [] },
  );
}

/** A Cluster and its credentials Secret, written on the victim by its admin or on the peer by the attacker. */
function cluster(ctx: FuzzContext, side: Side): fc.Arbitrary<CaseTemplate> {
  return fc
    .record({
      id: clusterID,
      endpoints: fc.option(fc.array(endpoint(ctx), { maxLength: 2 }), { nil: undefined }),
      secretRef: fc.constantFrom('own', 'own', 'own', 'none', 'missing', 'default', 'kube-system', 'foreign'),
      secretType: fc.constantFrom(CLUSTER_SECRET.type, CLUSTER_SECRET.type, CLUSTER_SECRET.type, 'Opaque'),
      dataKey: fc.constantFrom('kubeconfig', 'kubeconfig', 'kubeconfig', 'config'),
      token: fc.stringMatching(/^[a-z0-9]{16}$/),
    })
    .chain((c) => kubeconfig(ctx, `${ctx.tokenPrefix}${c.token}`).map((k) => ({ ...c, k })))
    .map((c) => (name: string): FuzzCase => {
      const secretNamespace = c.secretRef === 'default' || c.secretRef === 'kube-system' ? c.secretRef : ctx.namespace;
      const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: secretNamespace }, type: c.secretType, data: { [c.dataKey]: b64(c.k.text) } };
      // 'foreign' names the victim's registry-typed Secret outside the controller namespace, which the case does not write.
      const secretRef = c.secretRef === 'none' ? undefined : c.secretRef === 'foreign' ? { ...PLANTED.foreign } : { name: c.secretRef === 'missing' ? `${name}-missing` : name, namespace: secretNamespace };
      const spec = defined({ clusterID: c.id, authInfo: secretRef ? { secretRef } : undefined, kubernetesApiEndpoints: c.endpoints });
      const plainEndpoint = (c.endpoints ?? []).some((e) => typeof e['serverAddress'] === 'string' && e['serverAddress'].toLowerCase().startsWith('http:'));
      const reachesSecret = c.secretRef === 'own' && c.secretType === CLUSTER_SECRET.type && c.dataKey === 'kubeconfig';
      const elsewhere = secretRef !== undefined && secretRef.namespace !== ctx.namespace;
      const neverReady = elsewhere ? 'credentials outside the controller namespace' : c.k.forbidden && reachesSecret ? c.k.forbidden : plainEndpoint ? 'an http endpoint' : undefined;
      return {
        kind: 'cluster',
        side,
        label: `cluster/${elsewhere ? 'secret-elsewhere' : c.k.forbidden ? 'forbidden' : 'other'}`,
        objects: [{ apiVersion: API_GROUP_VERSION, kind: 'Cluster', metadata: { name }, spec }, ...(['missing', 'none', 'foreign'].includes(c.secretRef) ? [] : [secret])],
        expect: neverReady ? { neverReady } : {},
      };
    });
}

// ------------------------------------------------------------------------------- hostile peer objects

const MAX_NAME = 253;

/**
 * ConfigMaps the attacker writes where the victim's standing rule reads (NS.victim): named like
 * the victim's own objects and claiming (by the ownership annotation, the ownership label or a
 * forged source record) to be the victim's, or at the size limits; and Widgets with huge status.
 */
function peerObject(ctx: FuzzContext): fc.Arbitrary<CaseTemplate> {
  const claim = fc.constantFrom(
    { [ANNOTATIONS.ownership]: ctx.victimID },
    { [ANNOTATIONS.ownership]: ctx.peerID },
    { [ANNOTATIONS.ownership]: 'someone-else' },
    { [ANNOTATIONS.source]: JSON.stringify({ clusterID: ctx.victimID, group: '', version: 'v1', kind: 'ConfigMap', namespace: NS.victim, name: 'victim-a', uid: 'x' }) },
    { [ANNOTATIONS.source]: '{not json' },
    { [ANNOTATIONS.resourceSyncDisabled]: 'true' },
    // The source's word on what edits of its copies get, and bookkeeping a copy of ours carries
    // (a sync record, a drift mark) forged: never carried over, never trusted.
    { [ANNOTATIONS.driftPolicy]: 'Pause' },
    { [ANNOTATIONS.driftPolicy]: 'x'.repeat(300) },
    { [ANNOTATIONS.syncRecord]: JSON.stringify({ hash: 'forged', cluster: ctx.victimID, sourceVersion: '1', ruleGeneration: 1 }) },
    { [ANNOTATIONS.drifted]: 'Pause: data.k', [ANNOTATIONS.driftedFields]: JSON.stringify({ fingerprint: 'f', fields: [['data', 'k']] }) },
    {},
  );
  const target = fc.oneof(fc.constantFrom(...VICTIM_NAMES), fc.constantFrom('x'.repeat(MAX_NAME), `${'a'.repeat(62)}.${'b'.repeat(MAX_NAME - 63)}`));
  const sized = fc.constantFrom('none', 'labels', 'annotations', 'data');
  const hostileConfigMap = fc.record({ target, claim, sized, labelClaim: fc.boolean() }).map(({ target: t, claim: c, sized: s, labelClaim }) => (name: string): FuzzCase => {
    // Each case takes its own name unless it aims at a victim object (then names collide by design).
    const objectName = VICTIM_NAMES.includes(t as (typeof VICTIM_NAMES)[number]) ? t : `${name}-${t}`.slice(0, MAX_NAME).replace(/[-.]+$/, '');
    const labels: Record<string, string> = { ...(labelClaim ? { [LABELS.ownership]: ctx.victimID.slice(0, 63), [LABELS.originalName]: 'victim-a' } : {}), ...(s === 'labels' ? Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'k'.repeat(60)}${i}`.slice(-63), 'v'.repeat(63)])) : {}) };
    const annotations: Record<string, string> = { ...c, ...(s === 'annotations' ? { big: 'a'.repeat(250 * 1024) } : {}) };
    const data = s === 'data' ? { k: 'd'.repeat(900 * 1024) } : { k: 'hostile' };
    return { kind: 'peer-object', side: 'peer', label: `peer-object/${s}`, objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: objectName, namespace: NS.victim, labels, annotations }, data }], expect: {} };
  });
  const hugeStatus = fc.constantFrom(10 * 1024, 1024 * 1024, 1400 * 1024).map((size) => (name: string): FuzzCase => ({
    kind: 'peer-object',
    side: 'peer',
    label: 'peer-object/status',
    objects: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace: NS.status }, spec: { size: 1 }, status: { phase: 'p'.repeat(size) } }],
    expect: {},
  }));
  return fc.oneof({ weight: 4, arbitrary: hostileConfigMap }, { weight: 1, arbitrary: hugeStatus });
}

// ------------------------------------------------------------------------------- trust boundary

const SECRET: GroupVersionKind = { version: 'v1', kind: 'Secret' };
const CONFIG_MAP: GroupVersionKind = { version: 'v1', kind: 'ConfigMap' };
const DEPLOYMENT: GroupVersionKind = { group: 'apps', version: 'v1', kind: 'Deployment' };

/** A fresh Ready heartbeat in a Cluster's status, as its writer's registry would say it reaches that cluster. */
export function readyStatus(now = Date.now()): Record<string, unknown> {
  // Whole seconds, rounded up: a heartbeat from before a member lost that cluster is no news to it.
  const at = new Date(Math.ceil(now / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  return { state: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'ClusterIsReady', message: 'cluster is ready', lastHeartbeatTime: at, lastTransitionTime: at }] };
}

/** A registry credentials Secret whose kubeconfig sends `token` to the attacker's TLS server. */
export function attackerCredentials(ctx: FuzzContext, namespace: string, name: string, token: string): KubeObject & { data: Record<string, string> } {
  const kubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: ctx.tlsUrl, 'certificate-authority-data': ctx.tlsCaB64 } }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, type: CLUSTER_SECRET.type, data: { [CLUSTER_SECRET.kubeconfigKey]: b64(kubeconfig) } };
}

/**
 * A Cluster the attacker writes under a name of its own, claiming the kube-system UID of another
 * member (the victim, or the member that is away), of the cluster the victim described but that
 * has not joined, or of no one, with its own endpoint, credentials and (mostly) a fresh Ready
 * heartbeat, so that it seems to reach that cluster; with no owner (passed on for the cluster it
 * describes), or claiming that cluster as owner and as the source it was delivered by. No second
 * entry of a cluster the victim describes may appear there.
 */
function squat(ctx: FuzzContext): fc.Arbitrary<CaseTemplate> {
  return fc
    .record({
      whose: fc.constantFrom<Squatted>('victim', 'ghost', 'ghost', 'future', 'future', 'fresh'),
      fresh: fc.uuid(),
      claim: fc.constantFrom('none', 'owner', 'owner-and-source'),
      heartbeat: fc.boolean(),
      token: fc.stringMatching(/^[a-z0-9]{16}$/),
    })
    .map((c) => (name: string): FuzzCase => {
      const id = { victim: ctx.victimID, ghost: ctx.ghostID, future: ctx.futureID, fresh: c.fresh }[c.whose];
      const annotations = c.claim === 'none' ? {} : { [ANNOTATIONS.ownership]: id, ...(c.claim === 'owner-and-source' ? { [ANNOTATIONS.source]: JSON.stringify({ clusterID: id, group: API_GROUP, kind: KINDS.cluster, namespace: '', name }) } : {}) };
      const spec = { clusterID: id, authInfo: { secretRef: { name, namespace: ctx.namespace } }, kubernetesApiEndpoints: [{ serverAddress: ctx.tlsUrl, caBundle: ctx.tlsCaB64 }] };
      return {
        kind: 'cluster',
        side: 'peer',
        label: `cluster/squat-${c.whose}`,
        objects: [{ apiVersion: API_GROUP_VERSION, kind: 'Cluster', metadata: { name, annotations }, spec }, attackerCredentials(ctx, ctx.namespace, name, `${ctx.tokenPrefix}${c.token}`)],
        expect: { squats: c.whose },
        ...(c.heartbeat ? { heartbeat: true as const } : {}),
      };
    });
}

const replace = (path: string, value: string, parseValue = false): Override => ({ type: OVERRIDE_TYPES.replace, path, value, ...(parseValue ? { parseValue } : {}) });

/**
 * Rules delivering into the controller namespace: straight from the attacker's (its planted
 * Secrets of every type, a ConfigMap under a Helm name, a Deployment, its webhook's Secret), or
 * moved there by overrides from NS.src under the names the controller, its webhook, its leases
 * and its Helm release use, retyped as what the namespace must never receive.
 */
function controllerNamespaceSpec(ctx: FuzzContext): fc.Arbitrary<ResourceSyncRuleSpec> {
  const names = [...PLANTED.secrets.map((x) => x.name), ...PLANTED.configMaps, PLANTED.deployment, ctx.webhookSecret];
  const straight = fc.record({ gvk: fc.constantFrom(SECRET, SECRET, CONFIG_MAP, DEPLOYMENT), name: fc.option(fc.constantFrom(...names), { nil: undefined }) }).map(({ gvk: g, name }) => ({
    groupVersionKind: g,
    rules: [{ match: [defined({ namespaces: [ctx.namespace], objectKey: name ? { name } : undefined })] }],
  }));
  const moved = fc
    .record({
      secret: fc.boolean(),
      name: fc.constantFrom('sh.helm.release.v1.cluster-registry.v7', ctx.webhookSecret, 'test-secret', 'cluster-registry-leader-election', '{{ .Object.GetName }}', 'sh.helm.release.v1.{{ .Object.GetName }}.v1'),
      type: fc.option(fc.constantFrom('helm.sh/release.v1', SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, CLUSTER_SECRET.type, HUB_CREDENTIALS.type, 'kubernetes.io/tls', 'Opaque'), { nil: undefined }),
      viaMetadata: fc.boolean(),
    })
    .map(({ secret, name, type, viaMetadata }) => ({
      groupVersionKind: secret ? SECRET : CONFIG_MAP,
      rules: [
        {
          match: [{ namespaces: [NS.src], ...(secret ? { objectKey: { name: PLANTED.srcSecret } } : {}) }],
          mutations: {
            overrides: [
              // The whole metadata as one parsed template, or field by field.
              ...(viaMetadata ? [replace('/metadata', `{"name": "${name}", "namespace": "${ctx.namespace}"}`, true)] : [replace('/metadata/namespace', ctx.namespace), replace('/metadata/name', name)]),
              ...(secret && type ? [replace('/type', type)] : []),
            ],
          },
        },
      ],
    }));
  return fc.oneof(straight, moved);
}

/** Rules whose copies would have no name of their own: the name removed, generateName set (statically, or by a template no check can read ahead). */
const namelessSpec: fc.Arbitrary<ResourceSyncRuleSpec> = fc
  .constantFrom<Override[]>(
    [{ type: OVERRIDE_TYPES.remove, path: '/metadata/name' }, replace('/metadata/generateName?', 'copy-')],
    [replace('/metadata/generateName?', '{{ .Object.GetName }}-')],
    [replace('/metadata', `{"generateName": "copy-", "namespace": "${NS.src}"}`, true)],
    [replace('/metadata', '{{ printf "{\\"generateName\\": \\"%s-\\", \\"namespace\\": \\"%s\\"}" .Object.GetName .Object.GetNamespace }}', true)],
    [{ type: OVERRIDE_TYPES.remove, path: '/metadata/name' }],
    [replace('/metadata/name', '{{ "" }}')],
    [replace('/metadata/name', '')],
  )
  .map((overrides) => ({ groupVersionKind: CONFIG_MAP, rules: [{ match: [{ namespaces: [NS.src] }], mutations: { overrides } }] }));

/**
 * Templates whose builtins cost more than linear time or space at large inputs: each must be
 * charged to the step budget as it works, or it holds the controller's one event loop (and every
 * member runs every rule).
 */
const COSTLY: readonly string[] = [
  '{{ until 100000 | uniq | len }}',
  '{{ uniq (concat (until 50000) (until 50000)) | len }}',
  '{{ $l := until 100000 }}{{ without $l 1 2 3 | len }}',
  '{{ $l := until 100000 }}{{ range until 1000 }}{{ has -1 $l }}{{ end }}',
  '{{ $d := list "" }}{{ range 30 }}{{ $d = list $d $d }}{{ end }}{{ deepEqual $d $d }}',
  '{{ $d := list "" }}{{ $e := list "" }}{{ range 30 }}{{ $d = list $d $d }}{{ $e = list $e $e }}{{ end }}{{ deepEqual $d $e }}',
  '{{ $d := dict }}{{ range 30 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ toJson $d | len }}',
  '{{ $d := list "" }}{{ range 30 }}{{ $d = list $d $d }}{{ end }}{{ deepCopy $d | len }}',
  '{{ $d := dict }}{{ range 30 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ merge (dict) $d $d | len }}',
  '{{ $c := dict }}{{ $_ := set $c "a" $c }}{{ toJson $c }}',
  '{{ $c := dict }}{{ $_ := set $c "a" $c }}{{ deepEqual $c $c }}',
  '{{ $d := list }}{{ range 3000 }}{{ $d = list $d }}{{ end }}{{ toJson $d | len }}',
  '{{ sortAlpha (splitList "," (repeat 100000 "b,a,")) | len }}',
  '{{ $m := dict }}{{ range $i := until 100000 }}{{ $_ := set $m (toString $i) $i }}{{ end }}{{ keys $m | sortAlpha | len }}',
  '{{ $p := repeat 65536 "k" }}{{ $m := dict }}{{ range $i := until 100 }}{{ $_ := set $m (print $p $i) $i }}{{ end }}{{ keys $m | sortAlpha | len }}',
  '{{ printf "%*d" 100000000 1 }}',
  '{{ printf "%.*f" 100000000 1.5 }}',
  '{{ printf "%0999999999d" 1 }}',
  '{{ printf "%-100000000s|" "x" }}',
  '{{ range until 100000 }}{{ repeat 100 "x" }}{{ end }}',
  '{{ repeat 1000000 "ǅ" | upper | lower | title | len }}',
  '{{ kebabcase (repeat 140000 "aB1_ǅ.") | len }}',
  '{{ regexReplaceAll "(a|aa)*b" (repeat 100000 "a") "x" | len }}',
  '{{ regexFindAll "a" (repeat 1000000 "a") -1 | len }}',
  '{{ join "," (until 100000) | len }}',
  '{{ $s := repeat 1000000 "a" }}{{ range until 100000 }}{{ contains "b" $s }}{{ end }}',
  '{{ indent 1000000 (repeat 1000 "\\n") | len }}',
  '{{ wrap 1 (repeat 500000 "a ") | len }}',
  '{{ semverCompare (printf ">=1.0.0-%s" (repeat 499999 "a.")) "1.0.0" }}',
  '{{ urlParse (printf "http://h/%s" (repeat 170000 "%41")) | len }}',
  '{{ b64enc (repeat 1000000 "x") | b64dec | sha256sum }}',
  '{{ $l := until 100000 }}{{ range until 1000 }}{{ $l = append $l 1 }}{{ end }}{{ len $l }}',
  '{{ toPrettyJson (until 100000) | len }}',
  '{{ until 1000000000 | len }}',
];

const costlySpec: fc.Arbitrary<ResourceSyncRuleSpec> = fc
  .record({ template: fc.constantFrom(...COSTLY), times: fc.constantFrom(1, 1, 1000), path: fc.constantFrom('/data?/out', '/data?/out', '/metadata/annotations?/cost') })
  .map(({ template: t, times, path }) => ({
    groupVersionKind: CONFIG_MAP,
    rules: [{ match: [{ namespaces: [NS.src] }], mutations: { overrides: [replace(path, times > 1 ? `{{ range until ${times} }}${t}{{ end }}` : t)] } }],
  }));

const HUB_SYNC_RULE: GroupVersionKind = { group: API_GROUP, version: API_VERSION, kind: KINDS.hubSyncRule };
const CLUSTER_FEATURE: GroupVersionKind = { group: API_GROUP, version: API_VERSION, kind: KINDS.clusterFeature };

/**
 * Rules copying what a member decides for itself (HubSyncRules, ClusterFeatures) or what reports
 * what happened there (Events of either group), directly or by turning a ConfigMap into one.
 */
const hubKindSpec: fc.Arbitrary<ResourceSyncRuleSpec> = fc.oneof(
  fc.constantFrom(HUB_SYNC_RULE, CLUSTER_FEATURE).map((g) => ({ groupVersionKind: g, rules: [{}] })),
  fc.constantFrom<GroupVersionKind>({ version: 'v1', kind: 'Event' }, { group: 'events.k8s.io', version: 'v1', kind: 'Event' }).map((g) => ({ groupVersionKind: g, rules: [{ match: [{ namespaces: [NS.src] }] }] })),
  fc.constantFrom(HUB_SYNC_RULE, CLUSTER_FEATURE).map((g) => ({
    groupVersionKind: CONFIG_MAP,
    rules: [{ match: [{ namespaces: [NS.src], objectKey: { name: 'src-0' } }], mutations: { groupVersionKind: g, overrides: [replace('/spec?', `{"hub": "cluster2", "featureName": "smuggled", "groupVersionKind": {"version": "v1", "kind": "ConfigMap"}}`, true), replace('/metadata/namespace', '')] } }],
  })),
);

/** Rules copying every ConfigMap of NS.flood, more than a rule may make copies of; renamed so that two such rules make copies of their own. */
const floodSpec = (name: string, renamed: boolean): ResourceSyncRuleSpec => ({
  groupVersionKind: CONFIG_MAP,
  rules: [{ match: [{ namespaces: [NS.flood] }], ...(renamed ? { mutations: { overrides: [replace('/metadata/name', `{{ .Object.GetName }}-${name}`)] } } : {}) }],
});

/** A ClusterFeature of the attacker's at the annotation size limit: the victim keeps only its name and labels. */
const largeFeature: fc.Arbitrary<CaseTemplate> = fc.constantFrom(...FEATURES).map((featureName) => (name: string): FuzzCase => ({
  kind: 'feature',
  side: 'peer',
  label: 'feature/large',
  objects: [{ apiVersion: API_GROUP_VERSION, kind: 'ClusterFeature', metadata: { name, annotations: { pad: 'f'.repeat(250 * 1024) } }, spec: { featureName } }],
  expect: {},
}));

/** The trust boundary's attack shapes: rules of a hostile author (on either side), and the attacker's squats. */
function trustCase(ctx: FuzzContext, costly: number): fc.Arbitrary<CaseTemplate> {
  const asRule = (shape: string, spec: fc.Arbitrary<ResourceSyncRuleSpec | ((name: string) => ResourceSyncRuleSpec)>): fc.Arbitrary<CaseTemplate> =>
    fc.tuple(spec, fc.constantFrom<Side>('victim', 'victim', 'peer')).map(([s, side]) => (name: string): FuzzCase => {
      const built = typeof s === 'function' ? s(name) : s;
      const invalid = knownInvalid(built);
      return { kind: 'rule', side, label: `rule/trust/${shape}`, objects: [{ apiVersion: API_GROUP_VERSION, kind: 'ResourceSyncRule', metadata: { name }, spec: built }], expect: invalid ? { ruleInvalid: invalid } : {} };
    });
  const shapes: fc.WeightedArbitrary<CaseTemplate>[] = [
    { weight: 3, arbitrary: squat(ctx) },
    { weight: 3, arbitrary: asRule('controller-namespace', controllerNamespaceSpec(ctx)) },
    { weight: 2, arbitrary: asRule('nameless', namelessSpec) },
    { weight: 2, arbitrary: asRule('hub-kind', hubKindSpec) },
    { weight: 1, arbitrary: asRule('flood', fc.boolean().map((renamed) => (name: string) => floodSpec(name, renamed))) },
    { weight: 1, arbitrary: largeFeature },
  ];
  if (costly > 0) shapes.push({ weight: costly, arbitrary: asRule('costly', costlySpec) });
  return fc.oneof(...shapes);
}

/** Every kind of case, weighted so a batch is mostly rules (the richest input) with some of the rest. */
export function fuzzCase(ctx: FuzzContext, o: { costly: number } = { costly: 2 }): fc.Arbitrary<CaseTemplate> {
  return fc.oneof(
    { weight: 10, arbitrary: rule('victim') },
    { weight: 3, arbitrary: rule('peer') },
    { weight: 2, arbitrary: feature },
    { weight: 2, arbitrary: cluster(ctx, 'victim') },
    { weight: 1, arbitrary: cluster(ctx, 'peer') },
    { weight: 2, arbitrary: peerObject(ctx) },
    { weight: 4, arbitrary: trustCase(ctx, o.costly) },
  );
}

/** The kubeconfigs a hostile peer writes into its own registry entry (which the victim copies and reads). */
export function hostileEntry(ctx: FuzzContext): fc.Arbitrary<{ text: string; forbidden: string }> {
  return kubeconfig(ctx, `${ctx.tokenPrefix}entry`).filter((k): k is { text: string; forbidden: string } => k.forbidden !== undefined);
}

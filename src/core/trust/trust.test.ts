import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS, CORE_RULE_NAMES, formatSourceIdentity } from '../api/index.ts';
import { coreResourceSyncRules } from '../api/core-rules.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { copiesPerRuleAndPeer, credentialsInUse, inPeerCopyBudget, credentialsRef, REGISTRY_COPIES_PER_PEER, keepingVouch, kindClass, vouchedEntry, mayHold, ruleChannel, speakerFor, type Channel, type Delivery, type TrustFacts } from './index.ts';

const NS = 'cr';
const L = 'local-id';
const P = 'peer-id';
const T = 'third-id';
const owned = <O extends KubeObject>(o: O, owner = P): O => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [ANNOTATIONS.ownership]: owner } } });
const cluster = (name: string, id: string, secret?: string, extra: Partial<Cluster['spec']> = {}): Cluster => ({
  apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
  kind: 'Cluster',
  metadata: { name },
  spec: { clusterID: id, ...(secret ? { authInfo: { secretRef: { name: secret, namespace: NS } } } : {}), ...extra },
});
const kubeconfig = (server: string, token = 't'): string => `server=${server};token=${token}`;
const credentials = (name: string, server = 'https://peer', namespace = NS): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  type: 'k8s.cisco.com/cluster-registry-secret',
  data: { kubeconfig: kubeconfig(server) },
});
const facts: TrustFacts = {
  localClusterID: L,
  namespace: NS,
  clusters: [cluster('me', L, 'me'), cluster('peer', P, 'peer')],
  reserved: [{ group: '', kind: 'Secret', namespace: NS, name: 'webhook-tls' }],
  closedNamespaces: ['cr-hub'],
  // The server the stand-in kubeconfig names: what the runtime reads out of a real one.
  credentialsTarget: (s) => ((s['data'] as Record<string, string> | undefined)?.['kubeconfig'] ?? '').split(';')[0],
};
const by = (channel: Channel, from = P, current?: KubeObject): Delivery => ({ channel, from, current });
/** `c` as join writes it: vouched for here. */
const vouched = <O extends KubeObject>(c: O): O => ({ ...c, metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, [ANNOTATIONS.vouched]: 'join' } } });
/** `c` as a copy recorded as passed on by the peer `via`. */
const relayed = <O extends KubeObject>(c: O, via: string): O => ({
  ...c,
  metadata: { ...c.metadata, annotations: { ...c.metadata.annotations, [ANNOTATIONS.source]: formatSourceIdentity({ clusterID: via, group: 'clusterregistry.k8s.cisco.com', kind: c.kind ?? '', namespace: c.metadata.namespace ?? '', name: c.metadata.name ?? '' }) } },
});
const allowed = (o: KubeObject, d: Delivery = by('rule'), f: TrustFacts = facts): boolean => mayHold(o, d, f).allowed;
const reason = (o: KubeObject, d: Delivery = by('rule'), f: TrustFacts = facts): string => {
  const v = mayHold(o, d, f);
  return v.allowed ? '' : v.reason;
};

describe('kindClass', () => {
  it('syncs workloads and configuration, and refuses what grants rights, changes the control plane, trusts credentials or forges reports', () => {
    const table: [string, string, boolean][] = [
      ['', 'ConfigMap', true],
      ['', 'Secret', true],
      ['', 'Namespace', true],
      ['', 'ServiceAccount', true],
      ['apps', 'Deployment', true],
      ['batch', 'CronJob', true],
      ['networking.k8s.io', 'Ingress', true],
      ['example.com', 'Widget', true],
      ['networking.istio.io', 'ServiceEntry', true],
      ['', 'Node', false],
      ['', 'PersistentVolume', false],
      ['', 'Event', false],
      ['events.k8s.io', 'Event', false],
      ['', 'Binding', false],
      ['', 'SomethingNew', false],
      ['rbac.authorization.k8s.io', 'ClusterRoleBinding', false],
      ['rbac.authorization.k8s.io', 'Role', false],
      ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration', false],
      ['apiextensions.k8s.io', 'CustomResourceDefinition', false],
      ['apiregistration.k8s.io', 'APIService', false],
      ['certificates.k8s.io', 'ClusterTrustBundle', false],
      ['coordination.k8s.io', 'Lease', false],
      ['flowcontrol.apiserver.k8s.io', 'FlowSchema', false],
      ['node.k8s.io', 'RuntimeClass', false],
      ['scheduling.k8s.io', 'PriorityClass', false],
      ['storage.k8s.io', 'StorageClass', false],
      ['networking.k8s.io', 'IngressClass', false],
      ['networking.k8s.io', 'Future', false],
      ['resource.k8s.io', 'DeviceClass', false],
      ['authentication.k8s.io', 'TokenRequest', false],
    ];
    for (const [group, kind, synced] of table) assert.equal(kindClass(group, kind, 'rule').synced, synced, `${kind}.${group}`);
  });
  it('lets only the registry carry Clusters and only the rules relay carry rules; features and hub rules never travel', () => {
    const g = 'clusterregistry.k8s.cisco.com';
    const table: [string, Channel, boolean][] = [
      ['Cluster', 'registry', true],
      ['Cluster', 'rules', false],
      ['Cluster', 'rule', false],
      ['Cluster', 'hub', false],
      ['ResourceSyncRule', 'rules', true],
      ['ResourceSyncRule', 'rule', false],
      ['ResourceSyncRule', 'hub', false],
      ['ResourceSyncRule', 'registry', false],
      ['ClusterFeature', 'rule', false],
      ['ClusterFeature', 'hub', false],
      ['ClusterFeature', 'registry', false],
      ['HubSyncRule', 'rule', false],
      ['HubSyncRule', 'rules', false],
      ['HubSyncRule', 'hub', false],
      ['Unknown', 'registry', false],
    ];
    for (const [kind, channel, synced] of table) assert.equal(kindClass(g, kind, channel).synced, synced, `${kind} by ${channel}`);
  });
});

describe('mayHold: places', () => {
  const obj = (apiVersion: string, kind: string, namespace: string, name: string, type?: string): KubeObject => owned({ apiVersion, kind, metadata: { name, namespace }, ...(type ? { type } : {}) });
  it('puts nothing into the system namespaces, nor makes copies of them or of the controller namespace', () => {
    for (const ns of ['kube-system', 'kube-public', 'kube-node-lease', 'cr-hub']) assert.equal(allowed(obj('v1', 'ConfigMap', ns, 'x')), false, ns);
    for (const name of ['kube-system', NS, 'cr-hub']) assert.equal(allowed(owned({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })), false, name);
    assert.equal(allowed(owned({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } })), true);
  });
  it('allows only plain Secrets into the controller namespace, under no name the controller or Helm uses', () => {
    const table: [KubeObject, Channel, boolean][] = [
      [obj('v1', 'Secret', NS, 'test-secret'), 'rule', true],
      [obj('v1', 'Secret', NS, 'test-secret', 'Opaque'), 'rule', true],
      [obj('v1', 'Secret', NS, 'sh.helm.release.v1.cluster-registry.v99', 'helm.sh/release.v1'), 'rule', false],
      [obj('v1', 'Secret', NS, 'sh.helm.release.v1.cluster-registry.v99', 'Opaque'), 'rule', false],
      [obj('v1', 'Secret', NS, 'webhook-tls'), 'rule', false],
      [obj('v1', 'Secret', NS, 'pull', 'kubernetes.io/dockerconfigjson'), 'rule', false],
      [obj('v1', 'Secret', NS, 'tls', 'kubernetes.io/tls'), 'rule', false],
      [obj('v1', 'ConfigMap', NS, 'x'), 'rule', false],
      [obj('apps/v1', 'Deployment', NS, 'x'), 'rule', false],
      [obj('v1', 'ServiceAccount', NS, 'x'), 'rule', false],
      [obj('example.com/v1', 'Secret', NS, 'x'), 'rule', false],
      [obj('v1', 'Secret', NS, 'test-secret'), 'hub', false],
      // Elsewhere the same objects are ordinary.
      [obj('v1', 'ConfigMap', 'apps', 'x'), 'rule', true],
      [obj('apps/v1', 'Deployment', 'apps', 'x'), 'hub', true],
      [obj('v1', 'Secret', 'apps', 'pull', 'kubernetes.io/dockerconfigjson'), 'rule', true],
      [obj('v1', 'Secret', 'apps', 'webhook-tls'), 'rule', true],
    ];
    for (const [o, channel, want] of table) assert.equal(allowed(o, by(channel)), want, `${o.kind} ${o.metadata.name ?? ''} (${String(o['type'])}) by ${channel}`);
  });
  it('refuses Secrets that mint or carry credentials or a Helm release anywhere, and registry credentials outside the registry', () => {
    for (const type of ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token', 'helm.sh/release.v1']) {
      for (const channel of ['rule', 'hub', 'registry'] as const) assert.equal(allowed(obj('v1', 'Secret', 'apps', 'x', type), by(channel)), false, `${type} by ${channel}`);
    }
    assert.equal(allowed(obj('v1', 'ConfigMap', 'apps', 'sh.helm.release.v1.app.v3')), false, "Helm's configmap driver");
    // Helm finds a release's records by their labels, whatever their name or type.
    const labelled = (kind: string, ns: string, labels: Record<string, string>): KubeObject => owned({ apiVersion: 'v1', kind, metadata: { name: 'innocent', namespace: ns, labels } });
    for (const [kind, ns, labels] of [['Secret', NS, { owner: 'helm', name: 'cluster-registry', status: 'deployed' }], ['Secret', 'apps', { owner: 'helm' }], ['ConfigMap', 'apps', { owner: 'helm' }], ['ConfigMap', 'apps', { OWNER: 'TILLER' }]] as const) {
      assert.match(reason(labelled(kind, ns, labels), by('rule')), /where Helm keeps a release's state/, `${kind} ${ns} ${JSON.stringify(labels)}`);
    }
    assert.equal(allowed(labelled('Secret', 'apps', { owner: 'someone' }), by('rule')), true);
    for (const channel of ['rule', 'rules', 'hub'] as const) assert.match(reason(credentials('peer'), by(channel)), /registry’s own rules/, channel);
  });
});

describe('mayHold: names', () => {
  it('never writes generateName and needs a name a copy can have', () => {
    const cm = (metadata: KubeObject['metadata']): KubeObject => owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'apps', ...metadata } });
    assert.equal(allowed(cm({ name: 'x' })), true);
    assert.match(reason(cm({ generateName: 'x-' })), /generateName/);
    assert.match(reason(cm({ name: 'x', generateName: 'x-' })), /generateName/);
    for (const name of ['', '.', '..', 'a/b', 'a%2f']) assert.equal(allowed(cm({ name })), false, JSON.stringify(name));
  });
});

describe('mayHold: registry entries', () => {
  const entry = (over: Partial<Cluster['spec']> = {}, name = 'peer', id = P): Cluster => owned(cluster(name, id, 'peer', over), id);
  const second = (current?: KubeObject): Delivery => by('registry', T, current);
  const first = (current?: KubeObject): Delivery => by('registry', P, current);
  const endpoint = (serverAddress: string, caBundle = 'Q0E='): Partial<Cluster['spec']> => ({ kubernetesApiEndpoints: [{ serverAddress, caBundle }] });

  it('takes a Cluster only from, or on behalf of, the cluster it describes', () => {
    assert.equal(allowed(entry(), first()), true);
    assert.equal(allowed(owned(cluster('someone', 'other-id')), first()), false, 'owned by a cluster it does not describe');
    assert.equal(allowed(owned({ ...cluster('empty', ''), spec: {} } as Cluster), first()), false);
  });
  it('lets only the cluster itself change where and how it is reached once an entry of it is held', () => {
    // Joined with P: this member vouches for where P is reached.
    const held = vouched(relayed(entry(endpoint('https://peer:6443')), P));
    const table: [string, Cluster, Delivery, boolean][] = [
      ['second-hand, nothing changed', entry(endpoint('https://peer:6443')), second(held), true],
      ['second-hand, other labels', { ...entry(endpoint('https://peer:6443')), metadata: { ...entry().metadata, labels: { a: 'b' } } }, second(held), true],
      ['second-hand, another server', entry(endpoint('https://evil:6443')), second(held), false],
      ['second-hand, another CA', entry(endpoint('https://peer:6443', 'RVZJTA==')), second(held), false],
      ['second-hand, endpoints dropped', entry(), second(held), false],
      ['second-hand, another network entry', entry({ kubernetesApiEndpoints: [{ serverAddress: 'https://peer:6443', caBundle: 'Q0E=' }, { clientNetwork: 'n', serverAddress: 'https://evil' }] }), second(held), false],
      ['second-hand, another Secret', owned(cluster('peer', P, 'other', endpoint('https://peer:6443')), P), second(held), false],
      ['first-hand, another server', entry(endpoint('https://moved:6443')), first(held), true],
      ['second-hand bootstrap of a cluster never described here', owned(cluster('fourth', 'fourth-id', 'fourth', endpoint('https://new:6443')), 'fourth-id'), by('registry', T), true],
    ];
    const f = { ...facts, clusters: [cluster('me', L, 'me'), held] };
    for (const [what, desired, d, want] of table) assert.equal(allowed(desired, d, f), want, what);
    // With no entry held, the registry's own entry of that name stands in for it (the copies' cache may not have listed yet).
    assert.equal(allowed(entry(endpoint('https://evil:6443')), second(), f), false, 'second-hand, another server, nothing cached');
  });
  it('takes what a cluster reached through an entry no one here vouches for says of itself as second-hand', () => {
    const introduced = relayed(entry(endpoint('https://peer:6443')), T);
    const f = { ...facts, clusters: [cluster('me', L, 'me'), introduced] };
    // Whoever answers at that endpoint with P's ID (an impostor, say) moves it nowhere, names itself anew nowhere.
    assert.equal(allowed(entry(endpoint('https://elsewhere:6443')), first(introduced), f), false);
    assert.match(reason(entry(endpoint('https://peer:6443'), 'zz'), first(), f), /described here by Cluster peer/);
    // Its word on the entry as it is: taken (its other fields), as any relay's would be.
    assert.equal(allowed(entry(endpoint('https://peer:6443')), first(introduced), f), true);
    // Relays keep it up to date, reach unchanged.
    assert.equal(allowed({ ...entry(endpoint('https://peer:6443')), metadata: { ...entry().metadata, labels: { a: 'b' } } }, second(introduced), f), true);
    // Credentials over such a connection are second-hand too: a fresh token for the server held, no other.
    const creds = owned(credentials('peer', 'https://peer'));
    const withEntry = { ...f, clusters: [cluster('me', L, 'me'), relayed(owned(cluster('peer', P, 'peer', endpoint('https://peer:6443')), P), T)] };
    assert.equal(allowed(owned({ ...credentials('peer', 'https://peer'), data: { kubeconfig: kubeconfig('https://peer', 'rotated') } }), by('registry', P, creds), withEntry), true);
    assert.equal(allowed(owned(credentials('peer', 'https://evil')), by('registry', P, creds), withEntry), false);
  });
  it('takes no second entry of a cluster second-hand, and says a registry change may lift that', () => {
    const v = mayHold(entry(endpoint('https://evil'), 'a3'), second(), facts);
    assert.ok(!v.allowed && v.untilRegistryChanges && /described here by Cluster peer/.test(v.reason), JSON.stringify(v));
    assert.equal(allowed(entry(endpoint('https://evil'), 'a3'), first()), true, 'the cluster itself may name itself anew');
  });
  it('accepts a secretRef only in the controller namespace', () => {
    const foreign: Cluster = owned({ ...cluster('peer', P), spec: { clusterID: P, authInfo: { secretRef: { name: 'victim-creds', namespace: 'other-ns' } } } }, P);
    assert.match(reason(foreign, first()), /controller namespace cr/);
    assert.deepEqual(credentialsRef(foreign, NS), { problem: 'spec.authInfo.secretRef names a Secret in namespace other-ns: credentials are read only from the controller namespace cr' });
    assert.deepEqual(credentialsRef(cluster('peer', P, 'peer'), NS), { name: 'peer', namespace: NS });
    assert.ok('problem' in credentialsRef(cluster('peer', P), NS));
  });
  it("takes no Cluster that names another member's credentials (the first to name them keeps them)", () => {
    const third = cluster('third', T, 'peer');
    const v = mayHold(owned(third, T), by('registry', T), facts);
    assert.ok(!v.allowed && v.untilRegistryChanges);
    assert.equal(allowed(owned(cluster('third', T, 'third')), by('registry', T)), false, 'owned by another');
    assert.equal(allowed(owned(cluster('third', T, 'third'), T), by('registry', T)), true);
    assert.equal(allowed(owned(cluster('third', T, 'me'), T), by('registry', T)), false, 'our own reader credentials');
  });
});

describe('mayHold: registry credentials', () => {
  const reg = (from: string, current?: KubeObject): Delivery => by('registry', from, current);
  it('takes credentials only for the cluster whose Cluster names them, never over our own', () => {
    assert.equal(allowed(owned(credentials('peer')), reg(P)), true);
    assert.equal(allowed(owned(credentials('me')), reg(P)), false);
    const stranger = mayHold(owned(credentials('peer'), 'other-id'), reg('other-id'), facts);
    assert.equal(!stranger.allowed && stranger.untilRegistryChanges, true);
    assert.equal(allowed(owned(credentials('not-named')), reg(P)), false);
    assert.equal(allowed(owned(credentials('peer', 'https://peer', 'other-ns')), reg(P)), false, 'outside the controller namespace');
    // A second Cluster naming the same Secret does not hold up its owner's credentials.
    assert.equal(allowed(owned(credentials('peer')), reg(P), { ...facts, clusters: [...facts.clusters, cluster('third', T, 'peer')] }), true);
  });
  it('takes second-hand credentials only for the server and CA already held', () => {
    const held = owned(credentials('peer', 'https://peer'));
    const table: [string, KubeObject, Delivery, boolean][] = [
      ['second-hand, fresh token, same server', owned({ ...credentials('peer', 'https://peer'), data: { kubeconfig: kubeconfig('https://peer', 'new') } }), reg(T, held), true],
      ['second-hand, another server', owned(credentials('peer', 'https://evil')), reg(T, held), false],
      ['second-hand, unreadable', owned({ ...credentials('peer'), data: {} }), reg(T, held), false],
      ['second-hand bootstrap', owned(credentials('peer', 'https://peer')), reg(T), true],
      ['first-hand, another server', owned(credentials('peer', 'https://moved')), reg(P, held), true],
    ];
    for (const [what, desired, d, want] of table) assert.equal(allowed(desired, d), want, what);
  });
});

describe('speakerFor', () => {
  const at = (c: Cluster, creationTimestamp: string, annotations: Record<string, string> = {}): Cluster => ({ ...c, metadata: { ...c.metadata, creationTimestamp, annotations: { ...c.metadata.annotations, ...annotations } } });
  const passedOn = (name: string, from: string, t: string): Cluster => relayed(at(owned(cluster(name, T), T), t), from);
  it('puts entries this member vouches for (by an admin, or join) before any other, whatever their ages, then the oldest', () => {
    const squatter = passedOn('a3', P, '2026-01-01T00:00:00Z');
    const deliveredByItself = passedOn('self', T, '2025-06-01T00:00:00Z');
    const joined = vouched(passedOn('cluster3', T, '2026-06-01T00:00:00Z'));
    const byHand = at(cluster('by-hand', T), '2026-07-01T00:00:00Z');
    assert.deepEqual([squatter, deliveredByItself, joined, byHand].map(vouchedEntry), [false, false, true, true]);
    assert.equal(speakerFor([squatter, joined], T)?.metadata.name, 'cluster3');
    assert.equal(speakerFor([joined, squatter], T)?.metadata.name, 'cluster3');
    assert.equal(speakerFor([squatter, deliveredByItself, byHand, joined], T)?.metadata.name, 'cluster3', 'the oldest vouched for');
    assert.equal(speakerFor([squatter, passedOn('b3', P, '2025-01-01T00:00:00Z')], T)?.metadata.name, 'b3', 'the oldest of the others');
    const disabled = at(cluster('off', T), '2020-01-01T00:00:00Z', { [ANNOTATIONS.clusterDisabled]: '' });
    assert.equal(speakerFor([disabled, squatter], T)?.metadata.name, 'a3');
    assert.equal(speakerFor([squatter], 'nobody'), undefined);
  });
  it('keeps an entry vouched for through the updates the sync makes of it, and never vouches for one that was not', () => {
    const next = owned(cluster('c', T), T);
    assert.equal(keepingVouch(next, vouched(next)).metadata.annotations?.[ANNOTATIONS.vouched], 'join');
    assert.equal(keepingVouch(next, cluster('c', T)).metadata.annotations?.[ANNOTATIONS.vouched], 'admin', 'an entry written by hand, taken over');
    assert.equal(keepingVouch(next, next).metadata.annotations?.[ANNOTATIONS.vouched], undefined);
    assert.equal(keepingVouch(next, undefined), next);
  });
});

describe('ruleChannel', () => {
  it('knows the registry’s own rules by name and exact spec only', () => {
    for (const r of coreResourceSyncRules(NS)) assert.notEqual(ruleChannel(r.metadata.name ?? '', r.spec, NS), 'rule', r.metadata.name);
    const clusters = coreResourceSyncRules(NS).find((r) => r.metadata.name === CORE_RULE_NAMES.clusters)!;
    assert.equal(ruleChannel(CORE_RULE_NAMES.clusters, clusters.spec, NS), 'registry');
    assert.equal(ruleChannel(CORE_RULE_NAMES.syncRules, coreResourceSyncRules(NS).find((r) => r.metadata.name === CORE_RULE_NAMES.syncRules)!.spec, NS), 'rules');
    const mutated = { ...clusters.spec, rules: [{ mutations: { overrides: [{ type: 'replace', path: '/spec/kubernetesApiEndpoints', value: '[]' }] } }] };
    assert.equal(ruleChannel(CORE_RULE_NAMES.clusters, mutated, NS), 'rule');
    assert.equal(ruleChannel(CORE_RULE_NAMES.clusterSecrets, coreResourceSyncRules('elsewhere').find((r) => r.metadata.name === CORE_RULE_NAMES.clusterSecrets)!.spec, NS), 'rule');
    assert.equal(ruleChannel('my-rule', clusters.spec, NS), 'rule');
    assert.equal(ruleChannel(CORE_RULE_NAMES.clusters, { ...clusters.spec, clusterFeatureMatch: [] }, NS), 'rule', 'read from peers the core rule does not read from');
  });
});

describe('copiesPerRuleAndPeer', () => {
  it("bounds what the registry's rules may make from one peer far below an ordinary rule's budget", () => {
    assert.equal(copiesPerRuleAndPeer('rule', 25_000), 25_000);
    assert.equal(copiesPerRuleAndPeer('hub', 25_000), 25_000);
    assert.equal(copiesPerRuleAndPeer('registry', 25_000), REGISTRY_COPIES_PER_PEER);
    assert.equal(copiesPerRuleAndPeer('rules', 25_000), REGISTRY_COPIES_PER_PEER);
    assert.equal(copiesPerRuleAndPeer('rules', 10), 10);
  });
  it("keeps the registry's rules out of what a peer's other copies fill", () => {
    assert.deepEqual((['rule', 'hub', 'registry', 'rules'] as const).map(inPeerCopyBudget), [true, true, false, false]);
  });
});

describe('credentialsInUse', () => {
  it('holds for the Secret our Cluster of its owner reads, and for nothing else', () => {
    assert.equal(credentialsInUse(owned(credentials('peer')), facts.clusters), true);
    // Another member's copy of the same Secret, a Secret no Cluster of its owner names, another kind in its place.
    assert.equal(credentialsInUse(owned(credentials('peer'), T), facts.clusters), false);
    assert.equal(credentialsInUse(owned(credentials('other')), facts.clusters), false);
    assert.equal(credentialsInUse(owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'peer', namespace: NS } }), facts.clusters), false);
    assert.equal(credentialsInUse(owned(credentials('peer')), []), false);
  });
});

describe('mayHold: every combination of kind, channel, place, Secret type and name', () => {
  const kinds: { apiVersion: string; kind: string; clusterScoped?: boolean }[] = [
    { apiVersion: 'v1', kind: 'Secret' },
    { apiVersion: 'v1', kind: 'ConfigMap' },
    { apiVersion: 'v1', kind: 'Namespace', clusterScoped: true },
    { apiVersion: 'apps/v1', kind: 'Deployment' },
    { apiVersion: 'v1', kind: 'Event' },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' },
    { apiVersion: 'newthing.k8s.io/v1', kind: 'Thing' },
    { apiVersion: 'example.com/v1', kind: 'Widget' },
    { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', clusterScoped: true },
    { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', clusterScoped: true },
    { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', clusterScoped: true },
    { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'HubSyncRule', clusterScoped: true },
  ];
  const channels: Channel[] = ['registry', 'rules', 'rule', 'hub'];
  const namespaces = ['kube-system', NS, 'apps'];
  const types = [undefined, 'Opaque', 'k8s.cisco.com/cluster-registry-secret', 'k8s.cisco.com/cluster-registry-hub-credentials', 'kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token', 'helm.sh/release.v1', 'kubernetes.io/tls'];
  const names = ['x', 'peer', 'webhook-tls', 'sh.helm.release.v1.r.v1'];

  /** The rules, stated again independently of the code: whether the object may be held. */
  function expected(k: (typeof kinds)[number], channel: Channel, ns: string, type: string | undefined, name: string): boolean {
    const ours = k.apiVersion.startsWith('clusterregistry.');
    if (ours) return (k.kind === 'Cluster' && channel === 'registry') || (k.kind === 'ResourceSyncRule' && channel === 'rules');
    if (['Event', 'Role', 'Thing'].includes(k.kind)) return false;
    if (k.clusterScoped) return true;
    if (ns === 'kube-system') return false;
    const secret = k.kind === 'Secret' && k.apiVersion === 'v1';
    if ((secret || k.kind === 'ConfigMap') && name.startsWith('sh.helm.release.')) return false;
    if (secret && ns === NS && name === 'webhook-tls') return false;
    const t = type ?? 'Opaque';
    if (secret && ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token', 'helm.sh/release.v1', 'k8s.cisco.com/cluster-registry-hub-credentials'].includes(t)) return false;
    // Registry credentials: by the registry's rules, in the controller namespace, named by the Cluster of their owner.
    if (secret && t === 'k8s.cisco.com/cluster-registry-secret') return channel === 'registry' && ns === NS && name === 'peer';
    if (ns === NS) return channel !== 'hub' && secret && t === 'Opaque';
    return true;
  }

  function object(k: (typeof kinds)[number], ns: string, type: string | undefined, name: string): KubeObject {
    const metadata = { name, ...(k.clusterScoped ? {} : { namespace: ns }), annotations: { [ANNOTATIONS.ownership]: P } };
    if (k.kind === 'Cluster') return { apiVersion: k.apiVersion, kind: k.kind, metadata, spec: { clusterID: P, authInfo: { secretRef: { name: 'peer', namespace: NS } } } };
    return { apiVersion: k.apiVersion, kind: k.kind, metadata, ...(k.kind === 'Secret' && type ? { type } : {}) };
  }

  it('decides as the rules say, and every way of refusing is reached', () => {
    const reasons = new Set<string>();
    let rows = 0;
    for (const k of kinds) {
      for (const channel of channels) {
        for (const ns of k.clusterScoped ? [''] : namespaces) {
          for (const type of k.kind === 'Secret' ? types : [undefined]) {
            for (const name of names) {
              rows++;
              const v = mayHold(object(k, ns, type, name), by(channel, P), facts);
              assert.equal(v.allowed, expected(k, channel, ns, type, name), `${k.kind} ${ns}/${name} type ${String(type)} by ${channel}: ${v.allowed ? 'allowed' : v.reason}`);
              if (!v.allowed) reasons.add(v.reason.replace(/\S*(\d|peer|webhook-tls|sh\.helm|kube-system|\bcr\b)\S*/g, '…'));
            }
          }
        }
      }
    }
    assert.ok(rows > 500, `${rows} rows`);
    for (const refusal of [
      /never synced here: they would grant rights/,
      /never synced here: they report what happened here/,
      /not classified yet/,
      /never synced: each cluster makes its own/,
      /passed on only by the registry's own rules/,
      /nothing is synced into namespace/,
      /kept by this controller itself/,
      /Helm keeps a release's state under/,
      /Secrets of type .* are never synced/,
      /registry credentials are passed on only by the registry’s own rules/,
      /credentials are synced only for the cluster whose Cluster names them/,
      /only Secrets are synced into the controller namespace/,
      /only Opaque Secrets are synced into the controller namespace/,
      /a hub puts nothing into the controller namespace/,
    ]) {
      assert.ok([...reasons].some((r) => refusal.test(r)), `no row refused with ${String(refusal)}: ${[...reasons].join(' | ')}`);
    }
  });
});

describe('mayHold: what an object says', () => {
  it('refuses the fields through which one object takes the traffic or admission of every namespace', () => {
    const o = (apiVersion: string, kind: string, rest: Record<string, unknown>, labels?: Record<string, string>, ns: string | undefined = 'apps'): KubeObject =>
      owned({ apiVersion, kind, metadata: { name: 'x', ...(ns ? { namespace: ns } : {}), ...(labels ? { labels } : {}) }, ...rest });
    const table: [KubeObject, boolean][] = [
      [o('v1', 'Service', { spec: { ports: [{ port: 80 }] } }), true],
      [o('v1', 'Service', { spec: { externalIPs: ['10.0.0.1'] } }), false],
      [o('v1', 'Service', { spec: { externalIPs: [] } }), true],
      [o('v1', 'Service', { status: { loadBalancer: { ingress: [{ ip: '10.0.0.1' }] } } }), false],
      [o('v1', 'Endpoints', {}), false],
      [o('discovery.k8s.io/v1', 'EndpointSlice', {}, { 'kubernetes.io/service-name': 'kubernetes' }), false],
      [o('discovery.k8s.io/v1', 'EndpointSlice', {}, { 'multicluster.kubernetes.io/service-name': 'web' }), true],
      [o('v1', 'Namespace', {}, { 'pod-security.kubernetes.io/enforce': 'privileged' }, undefined), false],
      [o('v1', 'Namespace', {}, { team: 'a' }, undefined), true],
    ];
    for (const [obj, want] of table) assert.equal(allowed(obj), want, `${obj.kind} ${JSON.stringify(obj)}`);
  });
});

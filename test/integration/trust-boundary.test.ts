// The trust boundary on real clusters, as an attacker holding one member (cluster1) or writing one
// rule would try it: another member's registry entry rewritten second-hand, a cluster's identity
// squatted before it joins, credentials named in another namespace, objects planted in the
// controller namespace or nameless, our own kinds and Events copied, a peer that serves more than
// our caches of it may hold, a rule that would make more copies than it may.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ANNOTATIONS, CLUSTER_SECRET, CORE_RULE_NAMES, LABELS } from '../../src/core/api/keys.ts';
import { CLUSTERS, NAMESPACES, SECRETS, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster, KubeObject, ResourceSyncRule, RuleClusterStatus } from '../../src/core/api/types.ts';
import type { ResourceRef, RestClient } from '../../src/kube/index.ts';
import { peerHostLabel } from '../../src/kube/rest.ts';
import { Explainer } from '../../src/ops/explain.ts';
import { join } from '../../src/ops/join.ts';
import { tokenKubeconfig } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { RecordingServer } from '../support/recording-server.ts';
import { conditionOf, controllerSeries, readyOf, warningEventFor, WEBHOOKS, type WebhookConfiguration } from '../support/registry.ts';
import { CLUSTER_ROLES, ensureNamespace, FEATURES, getOrUndefined, grantKinds, groupOver, freshLogDir, rule, RULES, SANDBOX_NAMESPACE, secret, waitGroupFormed, type SyncGroup } from '../support/sync-helpers.ts';
import { startGroup, WEBHOOK_CONFIGURATION } from '../../src/testbed/group.ts';

const CONFIG_MAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const EVENTS: ResourceRef = { group: '', version: 'v1', resource: 'events' };
const HUB_SYNC_RULES: ResourceRef = { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', resource: 'hubsyncrules' };
const ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' };
const ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' };
const PEER_CACHE_MAX_BYTES = 2 * 2 ** 20;
const RULE_MAX_COPIES = 16;

/** The status a rule on `on` reports for one peer. */
async function ruleStatusFor(g: SyncGroup, on: string, ruleName: string, peer: string): Promise<RuleClusterStatus | undefined> {
  const r = await getOrUndefined<ResourceSyncRule>(g.client(on), RULES, undefined, ruleName);
  return r?.status?.clusters?.find((c) => c.name === peer);
}

/** Waits until the rule on `on` reports an error from `peer` matching `message`. */
function refusedBy(g: SyncGroup, on: string, ruleName: string, peer: string, message: RegExp, timeoutMs = 90_000): Promise<RuleClusterStatus> {
  return eventually(`${ruleName} on ${on} to report from ${peer}: ${String(message)}`, async () => {
    const s = await ruleStatusFor(g, on, ruleName, peer);
    return s && message.test(s.lastError ?? '') ? s : undefined;
  }, timeoutMs);
}

const controllerOf = (g: SyncGroup, name: string) => {
  const c = g.sandbox.cluster(name).extras[0];
  if (!c) throw new Error(`${name} runs no controller`);
  return c;
};

/** A registry credentials Secret whose kubeconfig sends `token` to the recording server. */
function credentialsFor(server: RecordingServer, namespace: string, name: string, token: string, owner?: string): Secret {
  const kubeconfig = tokenKubeconfig({ name, server: server.url, caPem: server.caPem ?? '', user: 'reader', token });
  return {
    ...secret(namespace, name, { [CLUSTER_SECRET.kubeconfigKey]: kubeconfig }, owner ? { annotations: { [ANNOTATIONS.ownership]: owner } } : {}),
    type: CLUSTER_SECRET.type,
  };
}

const requestsWith = (server: RecordingServer, token: string): number => server.requests.filter((r) => r.authorization === `Bearer ${token}`).length;

async function kubeSystemUID(rest: RestClient): Promise<string> {
  return (await rest.get(NAMESPACES, undefined, 'kube-system')).metadata.uid ?? '';
}

/**
 * Stops a member's controller as its hostile admin would, with its webhook let go (Ignore), so
 * that Clusters can be written there while nothing of ours answers; returns the restart.
 */
async function takeOver(g: SyncGroup, name: string): Promise<() => Promise<void>> {
  const rest = g.client(name);
  const config = await rest.get<WebhookConfiguration>(WEBHOOKS, undefined, WEBHOOK_CONFIGURATION);
  await rest.update(WEBHOOKS, undefined, { ...config, webhooks: config.webhooks?.map((w) => ({ ...w, failurePolicy: 'Ignore' })) });
  const controller = controllerOf(g, name);
  await controller.stop();
  return () => controller.start();
}

/** A fresh Ready heartbeat in a Cluster's status, as a stopped controller's registry would never write it. */
function readyNow(c: Cluster): Cluster {
  // Second precision, rounded up: a heartbeat from before a member lost the cluster itself is no news to it.
  const now = new Date(Math.ceil(Date.now() / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  return { ...c, status: { ...c.status, state: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'ClusterIsReady', message: 'cluster is ready', lastHeartbeatTime: now, lastTransitionTime: now }] } };
}

describe('trust boundary', { concurrency: false }, () => {
  let g: SyncGroup;
  let attacker: RecordingServer;

  before(async () => {
    attacker = await RecordingServer.start({ tls: true });
    const sandbox = await startGroup({
      dir: freshLogDir('trust-boundary'),
      clusters: 4,
      controllerArgs: () => [...(process.env['TRUST_DEBUG'] ? ['--log-verbosity=1'] : []), '--orphan-grace-period=4s', '--rule-status-interval=1s', '--peer-health-interval=1s', `--peer-cache-max-bytes=${PEER_CACHE_MAX_BYTES}`, `--rule-max-copies=${RULE_MAX_COPIES}`],
    });
    // cluster4 joins later (the squatting test): the group is the first three.
    g = await groupOver(sandbox, async (group) => {
      for (const other of ['cluster2', 'cluster3']) {
        await join({ rest: group.client('cluster1'), label: 'cluster1' }, { rest: group.client(other), label: other }, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: () => undefined });
      }
    });
    await waitGroupFormed({ ...g, names: ['cluster1', 'cluster2', 'cluster3'] });
    await grantKinds(g, 'configmaps', '', ['configmaps']);
  });
  after(async () => {
    await g?.stop();
    await attacker?.stop();
  });

  it("keeps a member's entry and credentials as that member gave them, whatever another member passes on while it is away (finding 1)", async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    const before3 = await c2.get<Cluster>(CLUSTERS, undefined, 'cluster3');
    const secretRef = before3.spec.authInfo?.secretRef;
    assert.ok(secretRef?.name);
    const heldSecret = await c2.get<KubeObject & { data?: Record<string, string> }>(SECRETS, SANDBOX_NAMESPACE, secretRef.name);
    const apiserver3 = g.sandbox.cluster('cluster3').apiserver;
    apiserver3.pause();
    const restart1 = await takeOver(g, 'cluster1');
    try {
      await eventually('cluster2 to lose cluster3', async () => readyOf(await c2.get<Cluster>(CLUSTERS, undefined, 'cluster3'))?.status === 'False');
      // cluster1 rewrites its copies of cluster3's entry: an endpoint and CA of its choosing, a fresh Ready heartbeat, and credentials for its server.
      const forged = await c1.get<Cluster>(CLUSTERS, undefined, 'cluster3');
      const caBundle = Buffer.from(attacker.caPem ?? '').toString('base64');
      const updated = await c1.update(CLUSTERS, undefined, { ...forged, spec: { ...forged.spec, kubernetesApiEndpoints: [{ serverAddress: attacker.url, caBundle }] } });
      await c1.updateStatus(CLUSTERS, undefined, readyNow(updated as Cluster));
      const forgedSecret = await c1.get<KubeObject>(SECRETS, SANDBOX_NAMESPACE, secretRef.name);
      const token = `stolen-${randomUUID()}`;
      await c1.update(SECRETS, SANDBOX_NAMESPACE, { ...forgedSecret, data: credentialsFor(attacker, SANDBOX_NAMESPACE, secretRef.name, token).data });

      await refusedBy(g, 'cluster2', CORE_RULE_NAMES.clusters, 'cluster1', /reached .* changed only by that cluster itself/);
      await refusedBy(g, 'cluster2', CORE_RULE_NAMES.clusterSecrets, 'cluster1', /for another server or CA are taken only from that cluster itself/);
      const after3 = await c2.get<Cluster>(CLUSTERS, undefined, 'cluster3');
      assert.deepEqual(after3.spec, before3.spec);
      const afterSecret = await c2.get<KubeObject & { data?: Record<string, string> }>(SECRETS, SANDBOX_NAMESPACE, secretRef.name);
      assert.deepEqual(afterSecret.data, heldSecret.data);
      assert.equal(attacker.connections, 0, 'no member connected to the server cluster1 named');
    } finally {
      apiserver3.resume();
      // cluster1 in honest hands again: its forged copies go, and cluster3 delivers them anew.
      for (const [ref, ns, name] of [[CLUSTERS, undefined, 'cluster3'], [SECRETS, SANDBOX_NAMESPACE, secretRef.name]] as const) await c1.delete(ref, ns, name);
      await restart1();
    }
    // cluster3 is back: every member reaches it where it always did.
    for (const viewer of ['cluster1', 'cluster2']) {
      await eventually(`${viewer} to see cluster3 Ready again`, async () => readyOf(await getOrUndefined<Cluster>(g.client(viewer), CLUSTERS, undefined, 'cluster3'))?.status === 'True', 90_000);
    }
    assert.deepEqual((await c2.get<Cluster>(CLUSTERS, undefined, 'cluster3')).spec, before3.spec);
    assert.equal(attacker.connections, 0);
  });

  it('lets no member squat the identity of a cluster that joins later: the entry join writes speaks for it (finding 10)', async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    const id4 = await kubeSystemUID(g.client('cluster4'));
    const token = `squatter-${randomUUID()}`;
    const restart1 = await takeOver(g, 'cluster1');
    try {
      // cluster1 serves a Cluster "a4" with cluster4's ID, its own endpoint and credentials, and a fresh Ready heartbeat.
      await c1.create(SECRETS, SANDBOX_NAMESPACE, credentialsFor(attacker, SANDBOX_NAMESPACE, 'a4', token));
      const a4 = await c1.create<Cluster>(CLUSTERS, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'a4' }, spec: { clusterID: id4, authInfo: { secretRef: { name: 'a4', namespace: SANDBOX_NAMESPACE } } } });
      await c1.updateStatus(CLUSTERS, undefined, readyNow(a4));
      // A cluster never described on cluster2 may be introduced second-hand.
      await eventually('cluster2 to take a4 second-hand', () => getOrUndefined(c2, CLUSTERS, undefined, 'a4'));
      await eventually("cluster2 to take a4's credentials second-hand", () => getOrUndefined(c2, SECRETS, SANDBOX_NAMESPACE, 'a4'));
      // cluster1 covers its tracks (and its own controller will not probe a4's server on its return).
      await c1.delete(CLUSTERS, undefined, 'a4');
      await c1.delete(SECRETS, SANDBOX_NAMESPACE, 'a4');
    } finally {
      await restart1();
    }
    // The admin joins cluster4 to cluster2: the entry join writes is first-hand, and speaks for cluster4.
    await join({ rest: c2, label: 'cluster2' }, { rest: g.client('cluster4'), label: 'cluster4' }, { namespace: SANDBOX_NAMESPACE, timeoutMs: 120_000, progress: () => undefined });
    const squatted = await eventually('a4 on cluster2 to yield to cluster4', async () => {
      const c = await c2.get<Cluster>(CLUSTERS, undefined, 'a4');
      return /already described by Cluster cluster4/.test(c.status?.message ?? '') ? c : undefined;
    });
    assert.equal(squatted.status?.state, 'Failed');
    assert.ok(requestsWith(attacker, token) > 0, "cluster2 did probe a4's server while a4 spoke for cluster4");
    // cluster2 reaches cluster4 where join said, and holds no connection to a4's server any more
    // (another member that took a4 second-hand may still: it was never joined with cluster4).
    assert.equal(readyOf(await c2.get<Cluster>(CLUSTERS, undefined, 'cluster4'))?.status, 'True');
    await eventually("cluster2's client of a4 closed", async () => !(await controllerSeries(g.sandbox, 'cluster2', 'rest_client_requests_total')).some((x) => x.labels['host'] === peerHostLabel('a4')));
  });

  it('reads credentials only from the controller namespace, in the controller and in explain (finding 11)', async () => {
    const c2 = g.client('cluster2');
    const token = `victim-${randomUUID()}`;
    await ensureNamespace(c2, 'other-ns');
    await c2.create(SECRETS, 'other-ns', credentialsFor(attacker, 'other-ns', 'victim-creds', token));
    // The controller may read that namespace's Secrets here, as a wider grant elsewhere would let it.
    await c2.create(ROLES, 'other-ns', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'read-secrets', namespace: 'other-ns' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }] });
    await c2.create(ROLE_BINDINGS, 'other-ns', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'read-secrets', namespace: 'other-ns' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-secrets' },
      subjects: [{ kind: 'ServiceAccount', name: 'cluster-registry-controller', namespace: SANDBOX_NAMESPACE }],
    });
    // An entry naming it, as a member would rewrite its own.
    await c2.create(CLUSTERS, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'intruder' }, spec: { clusterID: randomUUID(), authInfo: { secretRef: { name: 'victim-creds', namespace: 'other-ns' } } } });
    const refused = await eventually('intruder to be refused its credentials', async () => {
      const c = await c2.get<Cluster>(CLUSTERS, undefined, 'intruder');
      return c.status?.state === 'InvalidAuthInfo' ? c : undefined;
    });
    assert.match(refused.status?.message ?? '', /read only from the controller namespace cluster-registry/);
    await warningEventFor(c2, 'intruder', /controller namespace/);
    // An admin's explain on that cluster sends that token nowhere either.
    const explained = await new Explainer(c2, { network: 'default', namespace: SANDBOX_NAMESPACE }).explain(rule('explained', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['nowhere'] }] }] }));
    assert.match(explained.skipped.find((s) => s.peer === 'intruder')?.why ?? '', /controller namespace/);
    assert.equal(requestsWith(attacker, token), 0);
    await c2.delete(CLUSTERS, undefined, 'intruder');
  });

  it('delivers into the controller namespace only plain Secrets, under no name Helm or the controller uses (finding 2)', async () => {
    const c1 = g.client('cluster1');
    await c1.create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'test-secret', { a: '1' }));
    await c1.create(SECRETS, SANDBOX_NAMESPACE, { ...secret(SANDBOX_NAMESPACE, 'sh.helm.release.v1.cluster-registry.v99', { release: 'H4sI' }, { labels: { owner: 'helm', name: 'cluster-registry', version: '99' } }), type: 'helm.sh/release.v1' });
    // Helm finds a release's state by its labels, whatever the record's name or type.
    await c1.create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'innocent', { release: 'H4sI' }, { labels: { owner: 'helm', name: 'cluster-registry', status: 'deployed' } }));
    await c1.create(CONFIG_MAPS, SANDBOX_NAMESPACE, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planted', namespace: SANDBOX_NAMESPACE }, data: { a: '1' } });
    await g.client('cluster2').create(RULES, undefined, rule('into-controller-namespace-secrets', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: [SANDBOX_NAMESPACE], labels: [{ matchExpressions: [{ key: 'owner', operator: 'Exists' }] }] }, { namespaces: [SANDBOX_NAMESPACE], objectKey: { name: 'test-secret' } }] }] }));
    await g.client('cluster2').create(RULES, undefined, rule('into-controller-namespace-configmaps', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [SANDBOX_NAMESPACE], objectKey: { name: 'planted' } }] }] }));
    for (const on of ['cluster2', 'cluster3']) {
      // The quickstart's Secret still goes everywhere.
      await eventually(`test-secret on ${on}`, () => getOrUndefined(g.client(on), SECRETS, SANDBOX_NAMESPACE, 'test-secret'));
      await refusedBy(g, on, 'into-controller-namespace-secrets', 'cluster1', /Secrets of type helm.sh\/release.v1 are never synced|a name Helm keeps a release's state under|where Helm keeps a release's state/);
      await refusedBy(g, on, 'into-controller-namespace-configmaps', 'cluster1', /only Secrets are synced into the controller namespace/);
      for (const name of ['sh.helm.release.v1.cluster-registry.v99', 'innocent']) assert.equal(await getOrUndefined(g.client(on), SECRETS, SANDBOX_NAMESPACE, name), undefined, name);
      assert.equal(await getOrUndefined(g.client(on), CONFIG_MAPS, SANDBOX_NAMESPACE, 'planted'), undefined);
    }
  });

  it('never writes a copy without a name of its own: generateName is refused in the rule or on the object (finding 3)', async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    for (const c of g.names) await ensureNamespace(g.client(c), 'nameless');
    await c2.create(RULES, undefined, rule('nameless-static', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['nameless'] }], mutations: { overrides: [{ type: 'remove', path: '/metadata/name' }, { type: 'replace', path: '/metadata/generateName?', value: 'copy-' }] } }] }));
    // The same, out of a template no check can read ahead of time.
    await c2.create(RULES, undefined, rule('nameless-template', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['nameless'] }], mutations: { overrides: [{ type: 'replace', path: '/metadata', value: '{"generateName": "copy-", "namespace": "nameless"}', parseValue: true }] } }] }));
    await eventually('nameless-static to be invalid', async () => {
      const r = await c2.get<ResourceSyncRule>(RULES, undefined, 'nameless-static');
      const valid = r.status?.conditions?.find((c) => c.type === 'Valid');
      return valid?.status === 'False' && /generateName/.test(valid.message);
    });
    await c1.create(CONFIG_MAPS, 'nameless', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'src', namespace: 'nameless' }, data: { v: '0' } });
    for (let i = 1; i <= 5; i++) await c1.update(CONFIG_MAPS, 'nameless', { ...(await c1.get(CONFIG_MAPS, 'nameless', 'src')), data: { v: String(i) } });
    await refusedBy(g, 'cluster2', 'nameless-template', 'cluster1', /generateName/);
    const held = (await c2.list(CONFIG_MAPS, { namespace: 'nameless' })).items.filter((o) => o.metadata.name !== 'kube-root-ca.crt');
    assert.deepEqual(held.map((o) => o.metadata.name), []);
  });

  it('never copies our own kinds a member decides for itself (HubSyncRules, ClusterFeatures), nor Events (findings 6, suspected)', async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    await ensureNamespace(c1, 'reports');
    await c1.create(HUB_SYNC_RULES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'HubSyncRule', metadata: { name: 'planted-hub' }, spec: { hub: 'cluster1', groupVersionKind: { version: 'v1', kind: 'ConfigMap' } } });
    await c1.create(FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'planted-feature' }, spec: { featureName: 'offered-by-no-one' } });
    await c1.create(EVENTS, 'reports', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'planted-event', namespace: 'reports' }, involvedObject: { kind: 'Pod', namespace: 'reports', name: 'x' }, reason: 'Forged', message: 'forged', type: 'Normal' });
    await grantKinds(g, 'events', '', ['events']);
    await grantKinds(g, 'hubs', 'clusterregistry.k8s.cisco.com', ['hubsyncrules']);
    await ensureNamespace(c2, 'reports');
    for (const [name, gvk, ns] of [
      ['copy-hub-rules', { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'HubSyncRule' }, undefined],
      ['copy-features', { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'ClusterFeature' }, undefined],
      ['copy-events', { version: 'v1', kind: 'Event' }, 'reports'],
    ] as const) {
      await c2.create(RULES, undefined, rule(name, { groupVersionKind: gvk, rules: [ns ? { match: [{ namespaces: [ns] }] } : {}] }));
    }
    await refusedBy(g, 'cluster2', 'copy-hub-rules', 'cluster1', /HubSyncRule objects are never synced/);
    await refusedBy(g, 'cluster2', 'copy-features', 'cluster1', /ClusterFeature objects are never synced/);
    await refusedBy(g, 'cluster2', 'copy-events', 'cluster1', /Event objects are never synced/);
    assert.equal(await getOrUndefined(c2, HUB_SYNC_RULES, undefined, 'planted-hub'), undefined);
    assert.equal(await getOrUndefined(c2, FEATURES, undefined, 'planted-feature'), undefined);
    assert.equal(await getOrUndefined(c2, EVENTS, 'reports', 'planted-event'), undefined);
  });

  it("keeps what a peer makes us cache within its budget, reports the peer, and costs the other peers nothing (finding 9)", async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    for (const c of g.names) await ensureNamespace(g.client(c), 'bulky');
    // ClusterFeatures are kept by their name and labels only, however large a peer makes them.
    for (let i = 0; i < 12; i++) {
      await c1.create(FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: `bulky-${i}`, annotations: { pad: 'x'.repeat(250 * 1024) } }, spec: { featureName: `bulky-${i}` } });
    }
    // A rule gated on the last of them proves cluster2 has read them all.
    for (const c of g.names) await ensureNamespace(g.client(c), 'gated');
    await c2.create(RULES, undefined, { ...rule('gated', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['gated'] }] }] }), spec: { clusterFeatureMatch: [{ featureName: 'bulky-11' }], groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['gated'] }] }] } });
    await c1.create(CONFIG_MAPS, 'gated', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'gate', namespace: 'gated' }, data: { a: '1' } });
    await eventually('the gated ConfigMap from cluster1 on cluster2', () => getOrUndefined(c2, CONFIG_MAPS, 'gated', 'gate'));
    await c2.create(RULES, undefined, rule('bulky', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['bulky'] }] }] }));
    await g.client('cluster3').create(CONFIG_MAPS, 'bulky', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small-from-3', namespace: 'bulky' }, data: { a: '1' } });
    await eventually('the small ConfigMap from cluster3 on cluster2', () => getOrUndefined(c2, CONFIG_MAPS, 'bulky', 'small-from-3'));
    const within = await c2.get<Cluster>(CLUSTERS, undefined, 'cluster1');
    assert.equal(conditionOf(within, 'PeerCacheWithinBudget')?.status, 'True', '3 MiB of ClusterFeatures cost the budget next to nothing');
    // ConfigMaps the rule reads are kept whole: 3 MiB of them do not fit a 2 MiB budget.
    for (let i = 0; i < 12; i++) await c1.create(CONFIG_MAPS, 'bulky', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}`, namespace: 'bulky' }, data: { pad: 'y'.repeat(250 * 1024) } });
    const over = await eventually('cluster1 reported over its cache budget on cluster2', async () => {
      const c = await c2.get<Cluster>(CLUSTERS, undefined, 'cluster1');
      return conditionOf(c, 'PeerCacheWithinBudget')?.status === 'False' ? c : undefined;
    });
    assert.match(conditionOf(over, 'PeerCacheWithinBudget')?.message ?? '', /configmaps in namespace bulky would take our caches of it past their budget/);
    assert.equal(readyOf(over)?.status, 'True', 'the peer is still reached');
    await warningEventFor(c2, 'cluster1', /past their budget/);
    // Another peer's objects still sync.
    await g.client('cluster3').create(CONFIG_MAPS, 'bulky', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small-from-3b', namespace: 'bulky' }, data: { a: '1' } });
    await eventually('a ConfigMap from cluster3 on cluster2 meanwhile', () => getOrUndefined(c2, CONFIG_MAPS, 'bulky', 'small-from-3b'));
    // Back within the budget, the peer is read again.
    for (let i = 0; i < 12; i++) await c1.delete(CONFIG_MAPS, 'bulky', `big-${i}`);
    await eventually('cluster1 within its cache budget on cluster2 again', async () => conditionOf(await c2.get<Cluster>(CLUSTERS, undefined, 'cluster1'), 'PeerCacheWithinBudget')?.status === 'True', 120_000);
    await c1.create(CONFIG_MAPS, 'bulky', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small-from-1', namespace: 'bulky' }, data: { a: '1' } });
    await eventually('a ConfigMap from cluster1 on cluster2 again', () => getOrUndefined(c2, CONFIG_MAPS, 'bulky', 'small-from-1'), 120_000);
    for (let i = 0; i < 12; i++) await c1.delete(FEATURES, undefined, `bulky-${i}`);
  });

  it("deletes a Namespace copy whose source went only when it holds nothing but that owner's copies; otherwise hands it over (suspected)", async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    await grantKinds(g, 'namespaces', '', ['namespaces']);
    // Looking into a namespace before deleting it takes listing every kind there.
    await c2.create(CLUSTER_ROLES, undefined, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'list-everything', labels: { 'cluster-registry.k8s.cisco.com/controller-aggregated': 'true' } }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['list'] }] });
    for (const ns of ['team-a', 'team-b']) await c1.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { synced: 'yes' } } });
    await c1.create(CONFIG_MAPS, 'team-a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'team-a' }, data: { a: '1' } });
    await c2.create(RULES, undefined, rule('namespaces', { groupVersionKind: { version: 'v1', kind: 'Namespace' }, rules: [{ match: [{ labels: [{ matchLabels: { synced: 'yes' } }] }] }] }));
    await c2.create(RULES, undefined, rule('team-a-configmaps', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['team-a'], objectKey: { name: 'cfg' } }] }] }));
    await eventually('the copy of team-a/cfg on cluster2', () => getOrUndefined(c2, CONFIG_MAPS, 'team-a', 'cfg'), 90_000);
    await eventually('the copy of team-b on cluster2', () => getOrUndefined(c2, NAMESPACES, undefined, 'team-b'));
    // Someone on cluster2 puts something of theirs into team-b.
    await c2.create(CONFIG_MAPS, 'team-b', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'team-b' }, data: { a: '1' } });
    for (const ns of ['team-a', 'team-b']) await c1.delete(NAMESPACES, undefined, ns);
    // team-a held only what came from cluster1 with it: it goes.
    await eventually('team-a gone from cluster2', async () => {
      const ns = await getOrUndefined(c2, NAMESPACES, undefined, 'team-a');
      return ns === undefined || ns.metadata.deletionTimestamp !== undefined;
    }, 90_000);
    // team-b holds what someone put there: it stays, and is no copy any more.
    const kept = await eventually('team-b handed over on cluster2', async () => {
      const ns = await getOrUndefined(c2, NAMESPACES, undefined, 'team-b');
      return ns && ns.metadata.labels?.[LABELS.ownership] === undefined ? ns : undefined;
    }, 90_000);
    assert.equal(kept.metadata.deletionTimestamp, undefined);
    assert.equal(kept.metadata.annotations?.[ANNOTATIONS.ownership], undefined);
    assert.ok(await getOrUndefined(c2, CONFIG_MAPS, 'team-b', 'mine'));
    await eventually('the NamespaceKept Event on the rule', async () => {
      const events = (await c2.list<KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }>(EVENTS, { namespace: 'default' })).items;
      return events.some((e) => e.reason === 'NamespaceKept' && e.involvedObject?.name === 'namespaces' && /team-b.*configmaps mine/.test(e.message ?? ''));
    });
  });

  it('makes no more copies for a rule than its budget, and says so on the rule', async () => {
    const c1 = g.client('cluster1');
    for (const c of g.names) await ensureNamespace(g.client(c), 'many');
    await g.client('cluster2').create(RULES, undefined, rule('many', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['many'] }] }] }));
    for (let i = 0; i < RULE_MAX_COPIES + 20; i++) await c1.create(CONFIG_MAPS, 'many', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'many' }, data: { a: String(i) } });
    await refusedBy(g, 'cluster2', 'many', 'cluster1', new RegExp(`holds its budget of ${RULE_MAX_COPIES} copies`));
    const held = async (): Promise<KubeObject[]> => (await g.client('cluster2').list(CONFIG_MAPS, { namespace: 'many', labelSelector: LABELS.ownership })).items;
    // Creates on their way count: the budget holds however many workers create at once.
    const copies = await held();
    assert.equal(copies.length, RULE_MAX_COPIES);
    // Copies that go make room for others, up to the budget again and no further.
    for (const c of copies.slice(0, 3)) await g.client('cluster2').delete(CONFIG_MAPS, 'many', c.metadata.name ?? '');
    await eventually('the freed places taken by other copies', async () => (await held()).length === RULE_MAX_COPIES || undefined);
    await refusedBy(g, 'cluster2', 'many', 'cluster1', new RegExp(`holds its budget of ${RULE_MAX_COPIES} copies`));
    assert.equal((await held()).length, RULE_MAX_COPIES);
  });

  it("holds all rules' copies from one peer to what our caches of it may hold, so rules copying one large object many times are refused", async () => {
    const c1 = g.client('cluster1');
    const c2 = g.client('cluster2');
    for (const c of g.names) await ensureNamespace(g.client(c), 'large');
    // About a third of the peer cache budget: no more than two or three copies of it fit together.
    await c1.create(CONFIG_MAPS, 'large', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large', namespace: 'large' }, data: { a: 'x'.repeat(Math.floor(PEER_CACHE_MAX_BYTES / 3)) } });
    const RULES_COPYING = 5;
    for (let i = 0; i < RULES_COPYING; i++) {
      const renamed = { overrides: [{ type: 'replace', path: '/metadata/name', value: `large-${i}` }] };
      await c2.create(RULES, undefined, rule(`large-${i}`, { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: ['large'], objectKey: { name: 'large' } }], mutations: renamed }] }));
    }
    const held = async (): Promise<string[]> => (await c2.list(CONFIG_MAPS, { namespace: 'large', labelSelector: LABELS.ownership })).items.map((o) => o.metadata.name ?? '');
    const refusedRule = async (): Promise<string | undefined> => {
      for (let i = 0; i < RULES_COPYING; i++) {
        const s = await ruleStatusFor(g, 'cluster2', `large-${i}`, 'cluster1');
        if (/copies from this peer hold their budget/.test(s?.lastError ?? '')) return `large-${i}`;
      }
      return undefined;
    };
    const refused = await eventually('a rule refused for the copies the peer holds', refusedRule, 90_000);
    const copies = await held();
    assert.ok(copies.length >= 1 && copies.length < 3, `${copies.join(', ')}: more copies than the budget holds`);
    assert.ok(!copies.includes(refused));
    // A rule that goes takes its copy with it, and the room it leaves goes to a rule waiting for it.
    const gone = copies[0] ?? '';
    await c2.delete(RULES, undefined, gone);
    await eventually(`${refused}'s copy made once ${gone}'s went`, async () => {
      const now = await held();
      return !now.includes(gone) && now.length === copies.length ? now : undefined;
    }, 90_000);
  });
});

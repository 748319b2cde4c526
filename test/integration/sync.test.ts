// The resource sync on three real clusters, each with its own controller, joined by hand as the
// upstream quickstart says (cluster2 and cluster3 each swapped with cluster1 only, with kubectl):
// transitive group formation, the three documented rule flows with the README's own manifests, a
// custom resource renamed by a template with its status synced, deletion and removal
// propagation, and garbage collection. Every test makes objects of its own; only the group formed
// in `before` is shared.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { after, before, describe, it } from 'node:test';
import { CLUSTERS, SECRETS, secretText, type Secret } from '../../src/core/api/resources.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../../src/core/api/types.ts';
import { EVENTS, type CoreEvent, type ResourceRef } from '../../src/kube/index.ts';
import { peerHostLabel } from '../../src/kube/rest.ts';
import { eventually } from '../support/eventually.ts';
import { kubectlOk } from '../support/kubectl.ts';
import { cli } from '../support/process.ts';
import { controllerMetric, controllerMetrics, controllerSeries } from '../support/registry.ts';
import {
  CLUSTER_ROLES,
  FEATURES,
  OWNER,
  RULES,
  SANDBOX_NAMESPACE,
  SYNC_DISABLED,
  ensureNamespace,
  getOrUndefined,
  grantKinds,
  installWidgets,
  renamedWidgetFollows,
  renamingWidgetRule,
  rule,
  secret,
  startSyncGroup,
  waitGone,
  waitGroupFormed,
  waitSecretValue,
  type SyncGroup,
} from '../support/sync-helpers.ts';

const ALL = ['cluster1', 'cluster2', 'cluster3'];
const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
type ConfigMap = KubeObject & { data?: Record<string, string> };

describe('resource sync (3 clusters joined transitively)', () => {
  let g: SyncGroup;

  before(async () => {
    g = await startSyncGroup(3, { name: 'sync', swap: 'kubectl' });
  });
  after(async () => {
    await g?.stop();
  });

  it('forms the whole group from two swaps: every member holds every Cluster and its credentials, and sees it Ready', async () => {
    await waitGroupFormed(g);
    for (const viewer of ALL) {
      for (const member of ALL) {
        const s = await g.client(viewer).get<Secret>(SECRETS, SANDBOX_NAMESPACE, member);
        assert.match(secretText(s, 'kubeconfig') ?? '', /token:/, `${viewer} holds ${member}'s reader kubeconfig`);
      }
    }
    // cluster2 learnt about cluster3 only through cluster1; its copy ends up owned by cluster3
    // (the hand-made copy on cluster1 is adopted by cluster3's own entry).
    const c3id = (await g.client('cluster3').get<Cluster>(CLUSTERS, undefined, 'cluster3')).spec.clusterID;
    await eventually("cluster2's copy of cluster3 to be owned by cluster3", async () => (await g.client('cluster2').get<Cluster>(CLUSTERS, undefined, 'cluster3')).metadata.annotations?.[OWNER] === c3id || undefined);
    // The entries swapped by hand are adopted, so a rotated reader token reaches them too.
    const c2id = (await g.client('cluster2').get<Cluster>(CLUSTERS, undefined, 'cluster2')).spec.clusterID;
    for (const kind of [CLUSTERS, SECRETS] as const) {
      await eventually(`cluster1's hand-made ${kind.resource} of cluster2 to be adopted`, async () => (await g.client('cluster1').get(kind, kind === SECRETS ? SANDBOX_NAMESPACE : undefined, 'cluster2')).metadata.annotations?.[OWNER] === c2id || undefined);
    }
    // The core rules reached every member and run there.
    for (const viewer of ALL) {
      await eventually(`${viewer}'s core rules to be Synced`, async () => {
        const { items } = await g.client(viewer).list<ResourceSyncRule>(RULES);
        const core = items.filter((r) => r.metadata.name?.startsWith('cluster-registry-core-resource-'));
        const unsynced = core.filter((r) => r.status?.conditions?.find((c) => c.type === 'Synced')?.status !== 'True');
        if (core.length !== 3 || unsynced.length > 0) throw new Error(unsynced.map((r) => `${r.metadata.name ?? ''}: ${JSON.stringify(r.status)}`).join('; ') || `${core.length} core rules`);
        return true;
      });
    }
  });

  it("walks through the README's rule examples with kubectl: sync everywhere, to a set of clusters, from a set of clusters", async () => {
    const k = (c: string, args: string[], input?: string): Promise<string> => kubectlOk(g.sandbox.cluster(c).kubeconfigPath, args, input);
    const testSecret = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: test-secret\n  namespace: cluster-registry\ndata: {}\n';
    const sinkRule = `apiVersion: clusterregistry.k8s.cisco.com/v1alpha1
kind: ResourceSyncRule
metadata:
  name: test-secret-sink
spec:
  groupVersionKind:
    kind: Secret
    version: v1
  rules:
  - match:
    - objectKey:
        name: test-secret
        namespace: cluster-registry
`;
    const holdsTestSecret = (c: string) => eventually(`test-secret on ${c}`, () => getOrUndefined(g.client(c), SECRETS, SANDBOX_NAMESPACE, 'test-secret'));
    // Sync everywhere: made on the third cluster, the rule on the first.
    await k('cluster3', ['apply', '-f', '-'], testSecret);
    await k('cluster1', ['apply', '-f', '-'], sinkRule);
    for (const c of ['cluster1', 'cluster2']) await holdsTestSecret(c);
    for (const c of ALL) await eventually(`the rule on ${c}`, () => getOrUndefined(g.client(c), RULES, undefined, 'test-secret-sink'));
    // "if a secret from any of the clusters (except from the one where it originates from) is deleted or modified, it will be synced back immediately"
    await k('cluster2', ['-n', SANDBOX_NAMESPACE, 'delete', 'secret', 'test-secret']);
    await holdsTestSecret('cluster2');
    const ownerID = (await g.client('cluster2').get<Secret>(SECRETS, SANDBOX_NAMESPACE, 'test-secret')).metadata.labels?.[OWNER];
    await k('cluster2', ['-n', SANDBOX_NAMESPACE, 'label', 'secret', 'test-secret', '--overwrite', `${OWNER}=tampered`]);
    await eventually('the modified copy on cluster2 to be synced back', async () => (await g.client('cluster2').get<Secret>(SECRETS, SANDBOX_NAMESPACE, 'test-secret')).metadata.labels?.[OWNER] === ownerID || undefined);

    // Sync to a set of clusters: the annotation on the first cluster's rule, then the rule and the
    // Secret deleted on the second do not come back there.
    await k('cluster1', ['annotate', 'resourcesyncrule', 'test-secret-sink', `${SYNC_DISABLED}=true`]);
    await k('cluster2', ['delete', 'resourcesyncrule', 'test-secret-sink']);
    await k('cluster2', ['-n', SANDBOX_NAMESPACE, 'delete', 'secret', 'test-secret', '--ignore-not-found']);
    // A later change at the source reaches the first cluster (proof both pipelines ran), never the second.
    await k('cluster3', ['-n', SANDBOX_NAMESPACE, 'patch', 'secret', 'test-secret', '--type=merge', '-p', JSON.stringify({ data: { later: Buffer.from('1').toString('base64') } })]);
    await waitSecretValue(g, 'cluster1', SANDBOX_NAMESPACE, 'test-secret', 'later', '1');
    assert.equal(await getOrUndefined(g.client('cluster2'), RULES, undefined, 'test-secret-sink'), undefined, 'the rule stays deleted on cluster2');
    assert.equal(await getOrUndefined(g.client('cluster2'), SECRETS, SANDBOX_NAMESPACE, 'test-secret'), undefined, 'the Secret stays deleted on cluster2');

    // Sync from a set of clusters: the rule on the first cluster wants a feature only the third advertises.
    await k('cluster1', ['patch', 'resourcesyncrule', 'test-secret-sink', '--type=merge', '-p', JSON.stringify({ spec: { clusterFeatureMatch: [{ featureName: 'test-secret-feature' }] } })]);
    await eventually('the rule on cluster1 to wait for the feature on its peers', async () => {
      const r = await g.client('cluster1').get<ResourceSyncRule>(RULES, undefined, 'test-secret-sink');
      return r.status?.clusters?.every((c) => c.state === 'Pending') || undefined;
    });
    await k('cluster3', ['apply', '-f', '-'], 'apiVersion: clusterregistry.k8s.cisco.com/v1alpha1\nkind: ClusterFeature\nmetadata:\n  name: test-secret-source\nspec:\n  featureName: test-secret-feature\n');
    await k('cluster1', ['-n', SANDBOX_NAMESPACE, 'delete', 'secret', 'test-secret', '--ignore-not-found']);
    await waitSecretValue(g, 'cluster1', SANDBOX_NAMESPACE, 'test-secret', 'later', '1');
    await eventually('the rule status on cluster1 to show cluster3 Active and cluster2 Pending', async () => {
      const r = await g.client('cluster1').get<ResourceSyncRule>(RULES, undefined, 'test-secret-sink');
      return JSON.stringify(r.status?.clusters?.map((c) => [c.name, c.state])) === JSON.stringify([['cluster2', 'Pending'], ['cluster3', 'Active']]) || undefined;
    });
  });

  it('syncs updates and deletions of a source to every copy', async () => {
    await g.client('cluster3').create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'everywhere', { k: 'v1' }));
    await g.client('cluster1').create(RULES, undefined, rule('everywhere-sink', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ objectKey: { name: 'everywhere', namespace: SANDBOX_NAMESPACE } }] }] }));
    for (const c of ['cluster1', 'cluster2']) await waitSecretValue(g, c, SANDBOX_NAMESPACE, 'everywhere', 'k', 'v1');
    const src = await g.client('cluster3').get<Secret>(SECRETS, SANDBOX_NAMESPACE, 'everywhere');
    await g.client('cluster3').update(SECRETS, SANDBOX_NAMESPACE, { ...src, data: { k: Buffer.from('v2').toString('base64') } });
    for (const c of ['cluster1', 'cluster2']) await waitSecretValue(g, c, SANDBOX_NAMESPACE, 'everywhere', 'k', 'v2');
    await g.client('cluster3').delete(SECRETS, SANDBOX_NAMESPACE, 'everywhere');
    for (const c of ['cluster1', 'cluster2']) await waitGone(g, c, SECRETS, SANDBOX_NAMESPACE, 'everywhere');
  });

  it('reports peers and per-rule outcomes as metrics, and exports every metric docs/metrics.md lists and its Grafana dashboard queries', async () => {
    await g.client('cluster2').create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'metered', { k: 'v' }));
    await g.client('cluster1').create(RULES, undefined, rule('metered-sink', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ objectKey: { name: 'metered', namespace: SANDBOX_NAMESPACE } }] }] }));
    await waitSecretValue(g, 'cluster1', SANDBOX_NAMESPACE, 'metered', 'k', 'v');
    await eventually('the synced object counted on cluster1', async () => (await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_rule_objects', { rule: 'metered-sink', peer: 'cluster2', outcome: 'synced' })) === 1 || undefined);
    for (const peer of ['cluster2', 'cluster3']) assert.equal(await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_peer_up', { peer }), 1, `${peer} up`);
    // Requests to a peer are counted under its Cluster's name, never under the address it chose.
    const hosts = new Set((await controllerSeries(g.sandbox, 'cluster1', 'rest_client_requests_total')).map((s) => s.labels['host']));
    for (const peer of ['cluster2', 'cluster3']) {
      assert.ok(hosts.has(peerHostLabel(peer)), `requests to ${peer} counted under its name: ${[...hosts].join(', ')}`);
      assert.ok(!hosts.has(new URL(g.sandbox.cluster(peer).server).host), `requests to ${peer} counted under its address`);
    }

    const text = await controllerMetrics(g.sandbox, 'cluster1');
    const exported = new Map([...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
    const ours = [...exported.keys()].filter((n) => !/^(process|nodejs)_/.test(n)).sort();
    const documented = [...readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8').matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1] ?? '').sort();
    assert.deepEqual(documented, ours, 'docs/metrics.md lists exactly the metrics the controller exports');
    const dashboard = readFileSync(new URL('../../deploy/grafana/cluster-registry.json', import.meta.url), 'utf8');
    const queried = new Set([...dashboard.matchAll(/([a-z_]+)\{job=~/g)].map((m) => m[1] ?? ''));
    assert.ok(queried.size >= 10, `the dashboard queries metrics (${queried.size})`);
    for (const name of queried) {
      const family = exported.get(name) === undefined ? name.replace(/_(bucket|sum|count)$/, '') : name;
      assert.ok(exported.has(family) && (family === name || exported.get(family) === 'histogram'), `the dashboard queries ${name}, which the controller exports`);
    }
  });

  it('explains a rule without applying it: the copy it would create, then that it is in sync, and the diff a change to it would make', async (t) => {
    await g.client('cluster2').create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'explained', { k: 'v' }));
    const match = [{ objectKey: { name: 'explained', namespace: SANDBOX_NAMESPACE } }];
    const dir = mkdtempSync(join(tmpdir(), 'explain-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    let files = 0;
    const file = (r: ResourceSyncRule): string => {
      const path = join(dir, `rule-${files++}.yaml`);
      // YAML 1.1 as kubectl writes it: 'yes' stays a string.
      writeFileSync(path, stringify(r, { version: '1.1' }));
      return path;
    };
    const kubeconfig = g.sandbox.cluster('cluster1').kubeconfigPath;
    const explained = rule('explained-sink', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match }] });
    const fromCluster2 = (out: string) => (JSON.parse(out) as { rows: { peer: string; copy: string; action: string; reason: string; diff?: string }[] }).rows.filter((r) => r.peer === 'cluster2');

    const before = await cli(['explain', '--rule', file(explained), '--kubeconfig', kubeconfig, '-o', 'json']);
    assert.equal(before.code, 2, `exit 2: it would change something (${before.stderr})`);
    const [create] = fromCluster2(before.stdout);
    assert.equal(create?.action, 'create');
    assert.equal(create.copy, `Secret ${SANDBOX_NAMESPACE}/explained`);
    assert.match(create.diff ?? '', /name: explained/);
    assert.equal(await getOrUndefined(g.client('cluster1'), SECRETS, SANDBOX_NAMESPACE, 'explained'), undefined, 'explain wrote nothing');

    await g.client('cluster1').create(RULES, undefined, explained);
    await waitSecretValue(g, 'cluster1', SANDBOX_NAMESPACE, 'explained', 'k', 'v');
    const applied = await cli(['explain', '--rule', 'explained-sink', '--kubeconfig', kubeconfig]);
    assert.equal(applied.code, 0, applied.stdout + applied.stderr);
    assert.match(applied.stdout, new RegExp(`cluster2\\s+${SANDBOX_NAMESPACE}/explained\\s+Secret ${SANDBOX_NAMESPACE}/explained\\s+none\\s+in sync`));

    const labelled = rule('explained-sink', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match, mutations: { labels: { add: { explained: 'yes' } } } }] });
    const changed = await cli(['explain', '--rule', file(labelled), '--kubeconfig', kubeconfig, '--diff']);
    assert.equal(changed.code, 2, changed.stderr);
    assert.match(changed.stdout, /cluster2\s+\S+\s+Secret \S+\s+update/);
    assert.match(changed.stdout, /^\+ +explained: "?yes"?$/m, 'the diff shows the label the change adds');
  });

  it('syncs to a set of clusters: a rule marked resource-sync-disabled stays where it was made, and deleting it collects its copies', async () => {
    // A kind and namespace no other rule watches: the collector must keep seeing the copies of a deleted rule.
    const ns = 'to-some';
    await grantKinds(g, 'configmaps', '', ['configmaps']);
    for (const c of ALL) await ensureNamespace(g.client(c), ns);
    await g.client('cluster3').create(CONFIGMAPS, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'to-some', namespace: ns }, data: { k: 'v' } });
    await g.client('cluster1').create(RULES, undefined, rule('to-some-sink', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [ns] }] }] }, { [SYNC_DISABLED]: 'true' }));
    await eventually('the ConfigMap on cluster1', () => getOrUndefined(g.client('cluster1'), CONFIGMAPS, ns, 'to-some'), 90_000);
    // The annotation stops the rule from being copied: it never appears on the others.
    await eventually('cluster1 to have reported the rule Synced', async () => (await g.client('cluster1').get<ResourceSyncRule>(RULES, undefined, 'to-some-sink')).status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True'));
    assert.equal(await getOrUndefined(g.client('cluster2'), RULES, undefined, 'to-some-sink'), undefined);
    assert.equal(await getOrUndefined(g.client('cluster2'), CONFIGMAPS, ns, 'to-some'), undefined);

    // Deleting the rule where it ran collects its copies there after the grace period.
    await g.client('cluster1').delete(RULES, undefined, 'to-some-sink');
    await waitGone(g, 'cluster1', CONFIGMAPS, ns, 'to-some');
    assert.ok(await getOrUndefined(g.client('cluster3'), CONFIGMAPS, ns, 'to-some'), 'the source stays');
  });

  it('syncs from a set of clusters through a ClusterFeature, and collects the copies when the feature is withdrawn', async () => {
    await g.client('cluster3').create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'featured', { k: 'from3' }));
    await g.client('cluster2').create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'featured-2', { k: 'from2' }));
    await g.client('cluster1').create(
      RULES,
      undefined,
      rule('featured-sink', {
        clusterFeatureMatch: [{ featureName: 'featured-source' }],
        groupVersionKind: { version: 'v1', kind: 'Secret' },
        rules: [{ match: [{ namespaces: [SANDBOX_NAMESPACE], labels: [{ matchLabels: { sync: 'featured' } }] }] }],
      }),
    );
    for (const [c, n] of [['cluster3', 'featured'], ['cluster2', 'featured-2']] as const) {
      const s = await g.client(c).get<Secret>(SECRETS, SANDBOX_NAMESPACE, n);
      await g.client(c).update(SECRETS, SANDBOX_NAMESPACE, { ...s, metadata: { ...s.metadata, labels: { sync: 'featured' } } });
    }
    // No member advertises the feature: the rule reports its peers Pending and copies nothing.
    await eventually('the rule Pending on every peer of cluster1', async () => {
      const r = await g.client('cluster1').get<ResourceSyncRule>(RULES, undefined, 'featured-sink');
      return r.status?.clusters?.length === 2 && r.status.clusters.every((c) => c.state === 'Pending');
    });
    assert.equal(await getOrUndefined(g.client('cluster1'), SECRETS, SANDBOX_NAMESPACE, 'featured'), undefined);

    await g.client('cluster3').create(FEATURES, undefined, { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'featured-source' }, spec: { featureName: 'featured-source' } });
    for (const c of ['cluster1', 'cluster2']) await waitSecretValue(g, c, SANDBOX_NAMESPACE, 'featured', 'k', 'from3');
    // cluster2 does not advertise the feature: its Secret is copied nowhere.
    assert.equal(await getOrUndefined(g.client('cluster1'), SECRETS, SANDBOX_NAMESPACE, 'featured-2'), undefined);
    assert.equal(await getOrUndefined(g.client('cluster3'), SECRETS, SANDBOX_NAMESPACE, 'featured-2'), undefined);
    // Deleted on a member, it comes back from cluster3 (the documented flow).
    await g.client('cluster1').delete(SECRETS, SANDBOX_NAMESPACE, 'featured');
    await waitSecretValue(g, 'cluster1', SANDBOX_NAMESPACE, 'featured', 'k', 'from3');

    await g.client('cluster3').delete(FEATURES, undefined, 'featured-source');
    for (const c of ['cluster1', 'cluster2']) await waitGone(g, c, SECRETS, SANDBOX_NAMESPACE, 'featured');
    assert.ok(await getOrUndefined(g.client('cluster3'), SECRETS, SANDBOX_NAMESPACE, 'featured'));
  });

  it('removes from copies what the source or the rule stops writing, and keeps what was added locally', async () => {
    const ns = 'removals';
    await grantKinds(g, 'configmaps', '', ['configmaps']);
    for (const c of ALL) await ensureNamespace(g.client(c), ns);
    await g.client('cluster2').create(CONFIGMAPS, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'labelled', namespace: ns, labels: { keep: 'yes', drop: 'soon' } }, data: { a: '1', b: '2' } });
    await g.client('cluster1').create(RULES, undefined, rule('removals-sink', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [ns] }], mutations: { labels: { add: { 'added-by-rule': 'x' } } } }] }));
    const copy = await eventually('the ConfigMap on cluster3', () => getOrUndefined<ConfigMap>(g.client('cluster3'), CONFIGMAPS, ns, 'labelled'), 90_000);
    assert.equal(copy.metadata.labels?.['added-by-rule'], 'x');
    // Something on cluster3 labels the copy too.
    await g.client('cluster3').patch(CONFIGMAPS, ns, 'labelled', 'merge', { metadata: { labels: { local: 'mine' } } });

    const src = await g.client('cluster2').get<ConfigMap>(CONFIGMAPS, ns, 'labelled');
    await g.client('cluster2').update(CONFIGMAPS, ns, { ...src, metadata: { ...src.metadata, labels: { keep: 'yes' } }, data: { a: '1' } });
    // A merge patch, since the controller writes the rule's status meanwhile (a PUT would race it).
    await g.client('cluster1').patch(RULES, undefined, 'removals-sink', 'merge', { spec: { rules: [{ match: [{ namespaces: [ns] }] }] } });
    const settled = await eventually('the label, the data key and the rule label to be removed from the copy on cluster3', async () => {
      const s = await g.client('cluster3').get<ConfigMap>(CONFIGMAPS, ns, 'labelled');
      const l = s.metadata.labels ?? {};
      return !('drop' in l) && !('added-by-rule' in l) && !('b' in (s.data ?? {})) ? s : undefined;
    });
    assert.equal(settled.metadata.labels?.['keep'], 'yes');
    assert.equal(settled.metadata.labels?.['local'], 'mine', 'what cluster3 added itself survives');
  });

  describe('drift: a copy edited here, not at its source', () => {
    const DRIFTED = 'cluster-registry.k8s.cisco.com/drifted';
    const POLICY = 'cluster-registry.k8s.cisco.com/drift-policy';
    /**
     * Namespace `ns` with ConfigMaps `names` on cluster2 (data a=1, b=2; a drift-policy annotation
     * where `annotated` says), a rule with `policy` copying them, and each copy on cluster1 edited
     * by the field manager `hotfix` (a=edited).
     */
    async function edited(ns: string, policy: 'Revert' | 'Report' | 'Pause', names: string[], annotated: Record<string, string> = {}) {
      await grantKinds(g, 'configmaps', '', ['configmaps']);
      for (const c of ALL) await ensureNamespace(g.client(c), ns);
      for (const name of names) {
        const annotations = annotated[name] ? { annotations: { [POLICY]: annotated[name] } } : {};
        await g.client('cluster2').create(CONFIGMAPS, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, ...annotations }, data: { a: '1', b: '2' } });
      }
      await g.client('cluster1').create(RULES, undefined, rule(`${ns}-sink`, { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [ns] }] }], driftPolicy: policy }));
      const k1 = (args: string[]) => kubectlOk(g.sandbox.cluster('cluster1').kubeconfigPath, ['-n', ns, ...args]);
      for (const name of names) {
        await eventually(`${name} on cluster1`, () => getOrUndefined(g.client('cluster1'), CONFIGMAPS, ns, name));
        await k1(['patch', 'configmap', name, '--type', 'merge', '-p', '{"data":{"a":"edited"}}', '--field-manager', 'hotfix']);
      }
      return {
        k1,
        copy: (name: string) => g.client('cluster1').get<ConfigMap>(CONFIGMAPS, ns, name),
        peerStatus: async () => (await g.client('cluster1').get<ResourceSyncRule>(RULES, undefined, `${ns}-sink`)).status?.clusters?.find((c) => c.name === 'cluster2'),
        changeSource: async (name: string) => {
          const src = await g.client('cluster2').get<ConfigMap>(CONFIGMAPS, ns, name);
          await g.client('cluster2').update(CONFIGMAPS, ns, { ...src, data: { ...src.data, b: '3' } });
        },
        warning: (name: string, reason: string) =>
          eventually(`a ${reason} Event on the copy ${name}`, async () => (await g.client('cluster1').list<CoreEvent>(EVENTS, { namespace: ns })).items.find((e) => e.involvedObject.name === name && e.involvedObject.kind === 'ConfigMap' && e.reason === reason && e.type === 'Warning')),
      };
    }

    it('Revert: put back, with an Event naming the field and who edited it, counted in the rule’s status and the metric', async () => {
      const t = await edited('drift-revert', 'Revert', ['cm']);
      await eventually('the edit to be put back', async () => (await t.copy('cm')).data?.['a'] === '1' || undefined);
      assert.match((await t.warning('cm', 'CopyDriftReverted')).message, /put back: data\.a \(changed by hotfix, Update, at /);
      await eventually("the rule's status to count the revert", async () => ((await t.peerStatus())?.reverted ?? 0) >= 1 || undefined);
      assert.ok((await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_sync_drifts_total', { rule: 'drift-revert-sink', policy: 'Revert' })) >= 1);
    });

    it('Report: the edit stays and the copy is marked, the source’s other changes still come, explain and the rule’s status say so', async () => {
      const t = await edited('drift-report', 'Report', ['cm']);
      const marked = await eventually('the copy to be marked drifted', async () => ((await t.copy('cm')).metadata.annotations?.[DRIFTED] ? t.copy('cm') : undefined));
      assert.match(marked.metadata.annotations?.[DRIFTED] ?? '', /^Report: data\.a \(changed by hotfix, Update, at /);
      assert.equal(marked.data?.['a'], 'edited');
      assert.match((await t.warning('cm', 'CopyDrifted')).message, /left as edited, and marked: data\.a \(changed by hotfix/);
      const explained = await cli(['explain', '--rule', 'drift-report-sink', '--kubeconfig', g.sandbox.cluster('cluster1').kubeconfigPath, '-o', 'json']);
      const row = (JSON.parse(explained.stdout) as { rows: { peer: string; source: string; reason: string }[] }).rows.find((r) => r.peer === 'cluster2' && r.source === 'drift-report/cm');
      assert.match(row?.reason ?? explained.stdout + explained.stderr, /^edited here, not at its source: data\.a \(changed by hotfix.*; Report: left as edited, and marked$/);
      await t.changeSource('cm');
      const followed = await eventually("the source's change to reach the copy around the edit", async () => ((await t.copy('cm')).data?.['b'] === '3' ? t.copy('cm') : undefined));
      assert.equal(followed.data?.['a'], 'edited', 'the edit stays');
      await eventually("the rule's status to count the drifted copy", async () => (await t.peerStatus())?.drifted === 1 || undefined);
      assert.ok((await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_sync_drifts_total', { rule: 'drift-report-sink', policy: 'Report' })) >= 1);
    });

    it('Pause (chosen by the source over the rule’s Report): marked and nothing written, not even the source’s changes, until the mark is removed; then put back', async () => {
      // `witness` follows the rule's Report, and shows when the controller has taken the sources' changes in.
      const t = await edited('drift-pause', 'Report', ['paused', 'witness'], { paused: 'Pause' });
      await eventually('the paused copy to be marked', async () => (await t.copy('paused')).metadata.annotations?.[DRIFTED]?.startsWith('Pause: data.a') || undefined);
      await t.changeSource('paused');
      await t.changeSource('witness');
      await eventually('the witness to follow its source', async () => (await t.copy('witness')).data?.['b'] === '3' || undefined);
      assert.deepEqual((await t.copy('paused')).data, { a: 'edited', b: '2' }, 'nothing is written to a paused copy');
      assert.match((await t.warning('paused', 'CopyDrifted')).message, /nothing is written to it until its mark is removed: data\.a \(changed by hotfix/);
      await t.k1(['annotate', 'configmap', 'paused', `${DRIFTED}-`]);
      const resumed = await eventually('the paused copy to be synced again', async () => {
        const c = await t.copy('paused');
        return c.data?.['a'] === '1' && c.data['b'] === '3' && ![DRIFTED, 'cluster-registry.k8s.cisco.com/drifted-fields'].some((key) => key in (c.metadata.annotations ?? {})) ? c : undefined;
      });
      assert.equal(resumed.metadata.annotations?.[POLICY], 'Pause', "the source's choice stays on the copy");
      await eventually("the rule's status to count only the witness", async () => (await t.peerStatus())?.drifted === 1 || undefined);
      assert.ok((await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_sync_drifts_total', { rule: 'drift-pause-sink', policy: 'Pause' })) >= 1);
    });
  });

  describe('adoption: a local object in a copy’s way', () => {
    /** Namespace `ns` with ConfigMap `cm` (a=1) on cluster2, cluster1's own `cm` (a=`local`) there first, and a rule copying it with `policy`. */
    async function inTheWay(ns: string, policy: 'Never' | 'IfIdentical' | 'Always', local: string) {
      await grantKinds(g, 'configmaps', '', ['configmaps']);
      for (const c of ALL) await ensureNamespace(g.client(c), ns);
      const cm = (a: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: ns }, data: { a } });
      await g.client('cluster2').create(CONFIGMAPS, ns, cm('1'));
      await g.client('cluster1').create(CONFIGMAPS, ns, cm(local));
      await g.client('cluster1').create(RULES, undefined, rule(`${ns}-sink`, { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ namespaces: [ns] }] }], adoptionPolicy: policy }));
      const c2 = (await g.client('cluster1').get<Cluster>(CLUSTERS, undefined, 'cluster2')).spec.clusterID;
      return {
        c2,
        local: () => g.client('cluster1').get<ConfigMap>(CONFIGMAPS, ns, 'cm'),
        explained: async () => {
          const out = await cli(['explain', '--rule', `${ns}-sink`, '--kubeconfig', g.sandbox.cluster('cluster1').kubeconfigPath, '-o', 'json']);
          const rows = (JSON.parse(out.stdout) as { rows: { peer: string; source: string; reason: string; diff?: string }[] }).rows;
          return rows.find((r) => r.peer === 'cluster2') ?? assert.fail(out.stdout + out.stderr);
        },
        event: () => eventually('a LocalObjectAdopted Event', async () => (await g.client('cluster1').list<CoreEvent>(EVENTS, { namespace: ns })).items.find((e) => e.involvedObject.name === 'cm' && e.reason === 'LocalObjectAdopted')),
      };
    }

    it('Never: left as it is; explain previews what IfIdentical and Always would do, with the diff', async () => {
      const t = await inTheWay('adopt-never', 'Never', 'local');
      // cluster3 has nothing in the way: its copy shows the rule has run.
      await eventually('the copy on cluster3', () => getOrUndefined(g.client('cluster3'), CONFIGMAPS, 'adopt-never', 'cm'));
      const row = await t.explained();
      assert.equal(row.reason, 'a local object is in the way (adoptionPolicy Never); Always would adopt it, replacing 1 field; IfIdentical would not');
      assert.match(row.diff ?? '', /^- +a: local$/m);
      const local = await t.local();
      assert.equal(local.metadata.annotations?.[OWNER], undefined);
      assert.equal(local.data?.['a'], 'local');
    });

    it('IfIdentical: one that holds the copy already is taken over, and then follows its source', async () => {
      const t = await inTheWay('adopt-identical', 'IfIdentical', '1');
      await eventually('the local object to be adopted', async () => (await t.local()).metadata.annotations?.[OWNER] === t.c2 || undefined);
      assert.equal((await t.event()).type, 'Normal');
      assert.ok((await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_sync_adoptions_total', { rule: 'adopt-identical-sink', policy: 'IfIdentical' })) >= 1);
      const src = await g.client('cluster2').get<ConfigMap>(CONFIGMAPS, 'adopt-identical', 'cm');
      await g.client('cluster2').update(CONFIGMAPS, 'adopt-identical', { ...src, data: { a: '2' } });
      await eventually('the adopted copy to follow its source', async () => (await t.local()).data?.['a'] === '2' || undefined);
    });

    it('IfIdentical: one that holds something else is left', async () => {
      const t = await inTheWay('adopt-different', 'IfIdentical', 'local');
      await eventually('the copy on cluster3', () => getOrUndefined(g.client('cluster3'), CONFIGMAPS, 'adopt-different', 'cm'));
      assert.match((await t.explained()).reason, /^a local object is in the way \(adoptionPolicy IfIdentical\); Always would adopt it/);
      assert.equal((await t.local()).metadata.annotations?.[OWNER], undefined);
    });

    it('Always: taken over whatever it holds, with a Warning Event saying what it held', async () => {
      const t = await inTheWay('adopt-always', 'Always', 'local');
      await eventually('the local object to be adopted and synced', async () => {
        const c = await t.local();
        return (c.data?.['a'] === '1' && c.metadata.annotations?.[OWNER] === t.c2) || undefined;
      });
      const event = await t.event();
      assert.equal(event.type, 'Warning');
      assert.match(event.message, /adoptionPolicy Always, from cluster2\); it held: data\.a was "local"$/);
      assert.ok((await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_sync_adoptions_total', { rule: 'adopt-always-sink', policy: 'Always' })) >= 1);
    });
  });

  it('syncs a custom resource renamed by a template, with its status, made before its CRD: waits for the kind, then follows it through updates and deletion', async () => {
    await g.client('cluster1').create(RULES, undefined, renamingWidgetRule('widgets-sink', 'widgets'));
    await eventually("cluster2 to report the rule's kind not served there", async () => {
      const r = await getOrUndefined<ResourceSyncRule>(g.client('cluster2'), RULES, undefined, 'widgets-sink');
      const peer = r?.status?.clusters?.find((c) => c.name === 'cluster1');
      return (peer?.state === 'Failed' && /kind Widget of example\.com\/v1 is not served/.test(peer.message ?? '')) || undefined;
    });
    await installWidgets(g, 'widgets');
    await renamedWidgetFollows(g, { from: 'cluster1', to: ['cluster2', 'cluster3'], ns: 'widgets', name: 'gear' });
  });

  // Last: it takes cluster3 out of the group.
  it('never writes what would grant rights here, whatever a rule says: each refusal is on the rule, with a Warning Event', async () => {
    await grantKinds(g, 'hostile-roles', 'rbac.authorization.k8s.io', ['clusterroles']);
    await grantKinds(g, 'configmaps', '', ['configmaps']);
    const c3 = g.client('cluster3');
    const role: KubeObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'hostile-role' }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] };
    const token = secret(SANDBOX_NAMESPACE, 'hostile-token', {}, { annotations: { 'kubernetes.io/service-account.name': 'default' } });
    const system: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'hostile', namespace: 'kube-system' }, data: { k: 'v' } };
    // A member's entry of a cluster that is not itself, without an owner: passed on for the cluster
    // it describes, and only while the member reaches that cluster, which it does not.
    const fake = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'hostile-cluster' }, spec: { clusterID: '00000000-0000-4000-8000-000000000001' } };
    const rules = [
      rule('hostile-roles', { groupVersionKind: { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole' }, rules: [{ match: [{ objectKey: { name: 'hostile-role' } }] }] }),
      rule('hostile-tokens', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ objectKey: { name: 'hostile-token', namespace: SANDBOX_NAMESPACE } }] }] }),
      rule('hostile-system', { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules: [{ match: [{ objectKey: { name: 'hostile', namespace: 'kube-system' } }] }] }),
    ];
    try {
      await c3.create(CLUSTER_ROLES, undefined, role);
      await c3.create(SECRETS, SANDBOX_NAMESPACE, { ...token, type: 'kubernetes.io/service-account-token' });
      await c3.create(CONFIGMAPS, 'kube-system', system);
      await c3.create(CLUSTERS, undefined, fake);
      for (const r of rules) await g.client('cluster1').create(RULES, undefined, r);
      const refused = async (ruleName: string, says: RegExp): Promise<void> => {
        await eventually(`${ruleName} on cluster1 to report the refusal from cluster3`, async () => {
          const r = await getOrUndefined<ResourceSyncRule>(g.client('cluster1'), RULES, undefined, ruleName);
          const peer = r?.status?.clusters?.find((c) => c.name === 'cluster3');
          const synced = r?.status?.conditions?.find((c) => c.type === 'Synced');
          return peer && (peer.failed ?? 0) >= 1 && says.test(peer.lastError ?? '') && synced?.status === 'False' && says.test(synced.message) ? true : undefined;
        });
        await eventually(`a Warning Event on ${ruleName}`, async () => {
          const { items } = await g.client('cluster1').listAll<KubeObject & { involvedObject?: { name?: string }; type?: string; message?: string }>({ group: '', version: 'v1', resource: 'events' });
          return items.some((e) => e.involvedObject?.name === ruleName && e.type === 'Warning' && says.test(e.message ?? '')) || undefined;
        });
      };
      await refused('hostile-roles', /hostile-role: ClusterRole\.rbac\.authorization\.k8s\.io objects are never synced/);
      await refused('hostile-tokens', /hostile-token: Secrets of type kubernetes\.io\/service-account-token are never synced/);
      await refused('hostile-system', /kube-system\/hostile: nothing is synced into namespace kube-system/);
      await eventually('the core Clusters rule on cluster1 to report the entry from cluster3 waiting', async () => {
        const r = await getOrUndefined<ResourceSyncRule>(g.client('cluster1'), RULES, undefined, 'cluster-registry-core-resource-clusters-sink');
        return /hostile-cluster: OwnerNotReachedByPeer/.test(r?.status?.clusters?.find((c) => c.name === 'cluster3')?.lastError ?? '') || undefined;
      });
      // Nothing of it was written anywhere but where it was made.
      for (const c of ['cluster1', 'cluster2']) {
        assert.equal(await getOrUndefined(g.client(c), CLUSTER_ROLES, undefined, 'hostile-role'), undefined, c);
        assert.equal(await getOrUndefined(g.client(c), SECRETS, SANDBOX_NAMESPACE, 'hostile-token'), undefined, c);
        assert.equal(await getOrUndefined(g.client(c), CONFIGMAPS, 'kube-system', 'hostile'), undefined, c);
        assert.equal(await getOrUndefined(g.client(c), CLUSTERS, undefined, 'hostile-cluster'), undefined, c);
      }
    } finally {
      for (const r of rules) await g.client('cluster1').delete(RULES, undefined, r.metadata.name ?? '').catch(() => undefined);
      await c3.delete(CLUSTER_ROLES, undefined, 'hostile-role').catch(() => undefined);
      await c3.delete(SECRETS, SANDBOX_NAMESPACE, 'hostile-token').catch(() => undefined);
      await c3.delete(CONFIGMAPS, 'kube-system', 'hostile').catch(() => undefined);
      await c3.delete(CLUSTERS, undefined, 'hostile-cluster').catch(() => undefined);
    }
  });

  it('collects what a member that left the group owned, after the grace period; `leave` takes it out on both sides', async () => {
    await g.client('cluster3').create(SECRETS, SANDBOX_NAMESPACE, secret(SANDBOX_NAMESPACE, 'leaver', { k: 'v' }));
    await g.client('cluster1').create(RULES, undefined, rule('leaver-sink', { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ objectKey: { name: 'leaver', namespace: SANDBOX_NAMESPACE } }] }] }));
    for (const c of ['cluster1', 'cluster2']) await waitSecretValue(g, c, SANDBOX_NAMESPACE, 'leaver', 'k', 'v');
    // cluster3 leaves: it revokes the reader everyone reads it with, then the others forget it.
    await g.client('cluster3').delete(SERVICE_ACCOUNTS, SANDBOX_NAMESPACE, 'cluster-registry-controller-reader');
    for (const c of ['cluster1', 'cluster2']) {
      await eventually(`${c} to lose cluster3`, async () => (await g.client(c).get<Cluster>(CLUSTERS, undefined, 'cluster3')).status?.state !== 'Ready');
    }
    // A member that cannot reach cluster3 keeps what it owns, over more sweeps than a grace period takes.
    const swept = await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_orphan_sweeps_total');
    await eventually('cluster1 to sweep past a grace period', async () => (await controllerMetric(g.sandbox, 'cluster1', 'cluster_registry_orphan_sweeps_total')) - swept >= 6 || undefined);
    assert.ok(await getOrUndefined(g.client('cluster1'), SECRETS, SANDBOX_NAMESPACE, 'leaver'));
    // `leave` does the rest: a reader made anew, its entry gone from the members, theirs from it.
    const kubeconfig = (c: string) => g.sandbox.cluster(c).kubeconfigPath;
    const left = await cli(['leave', '--kubeconfig', kubeconfig('cluster3'), '--member-kubeconfig', kubeconfig('cluster1'), '--member-kubeconfig', kubeconfig('cluster2')]);
    assert.equal(left.code, 0, left.stderr);
    assert.match(left.stderr, /left: cluster3 is out of the group/);
    assert.ok(await getOrUndefined(g.client('cluster3'), SERVICE_ACCOUNTS, SANDBOX_NAMESPACE, 'cluster-registry-controller-reader'), 'the reader is back, new');
    for (const other of ['cluster1', 'cluster2']) {
      assert.equal(await getOrUndefined(g.client('cluster3'), CLUSTERS, undefined, other), undefined, `cluster3 forgot ${other}`);
      assert.equal(await getOrUndefined(g.client('cluster3'), SECRETS, SANDBOX_NAMESPACE, other), undefined, `and its credentials`);
    }
    for (const c of ['cluster1', 'cluster2']) {
      await waitGone(g, c, CLUSTERS, undefined, 'cluster3', 90_000);
      await waitGone(g, c, SECRETS, SANDBOX_NAMESPACE, 'leaver', 90_000);
    }
    assert.ok(await getOrUndefined(g.client('cluster3'), SECRETS, SANDBOX_NAMESPACE, 'leaver'), 'the source stays with its owner');
  });
});

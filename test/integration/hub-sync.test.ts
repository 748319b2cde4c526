// Hub-and-spoke sync on three real clusters: cluster1 is the hub, declaring Widgets for two
// spokes by name suffix (cluster2 takes -eu1, cluster3 -us1). Spec, labels and annotations come
// down, status and the generation echo go up, a listed Secret goes back, a pause holds an object,
// namespaces made for an object go with it (and only those), Merge keeps what a spoke's own
// controllers set, and a hub that is away deletes nothing and hears the news when it is back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HUB_ANNOTATIONS, HUB_SYNC_RULES, NAMESPACES, SECRETS, type Secret } from '../../src/core/api/index.ts';
import type { HubSyncRule, HubSyncRuleSpec, KubeObject } from '../../src/core/api/types.ts';
import { EVENTS, isConflict, type CoreEvent } from '../../src/kube/index.ts';
import { kubeSystemUID } from '../../src/peers/identity.ts';
import { eventually } from '../support/eventually.ts';
import { cli } from '../support/process.ts';
import { CLUSTER_ROLES, ensureNamespace, getOrUndefined, grantKinds, installWidgets, startSyncGroup, waitGone, waitGroupFormed, WIDGETS, type SyncGroup } from '../support/sync-helpers.ts';

type Widget = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const HUB = 'cluster1';
const EU = 'cluster2';
const US = 'cluster3';
const REMOTE = HUB_ANNOTATIONS.remoteGeneration;
const LOCAL = HUB_ANNOTATIONS.localGeneration;

function hubRule(name: string, spec: Omit<HubSyncRuleSpec, 'hub' | 'groupVersionKind'>): HubSyncRule {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'HubSyncRule', metadata: { name }, spec: { hub: HUB, groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' }, ...spec } };
}

function widget(namespace: string, name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}): Widget {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace, labels }, spec };
}

describe('hub-and-spoke sync (a hub and two spokes)', () => {
  let g: SyncGroup;
  const get = (on: string, ns: string, name: string) => getOrUndefined<Widget>(g.client(on), WIDGETS, ns, name);
  const until = <T>(what: string, check: () => Promise<T | undefined | false>) => eventually(what, check, 60_000);
  /** Changes an object as read now: the spokes write status and annotations to the hub's objects meanwhile. */
  const edit = (on: string, ns: string, name: string, change: (w: Widget) => Widget) =>
    until(`${ns}/${name} changed on ${on}`, async () => {
      const w = (await get(on, ns, name))!;
      return g.client(on).update(WIDGETS, ns, change(w)).catch((err: unknown) => {
        if (isConflict(err)) return undefined;
        throw err;
      });
    });
  const connected = (on: string, rule: string, status: 'True' | 'False') =>
    until(`Connected=${status} on ${rule} of ${on}`, async () => {
      const r = await g.client(on).get<HubSyncRule>(HUB_SYNC_RULES, undefined, rule);
      return r.status?.conditions?.find((c) => c.type === 'Connected' && c.status === status);
    });

  before(async () => {
    g = await startSyncGroup(3, { name: 'hub-sync' });
    await waitGroupFormed(g);
    await installWidgets(g, 'team-eu1');
    // The spokes' controllers make and delete namespaces, and read and mark the Secrets they send (a controller-only role).
    await grantKinds(g, 'hub-namespaces', '', ['namespaces']);
    for (const c of [EU, US]) {
      await g.client(c).create(CLUSTER_ROLES, undefined, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'hub-secrets', labels: { 'cluster-registry.k8s.cisco.com/controller-aggregated': 'true' } },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'patch'] }],
      });
    }
    await ensureNamespace(g.client(HUB), 'team-us1');
    // A namespace that was there before the sync: it is never the sync's to delete.
    await ensureNamespace(g.client(US), 'team');
    const kube = (c: string) => g.sandbox.cluster(c).kubeconfigPath;
    for (const [spoke, name, secret] of [
      [EU, 'eu1', ['--secret', 'widget-credentials-eu1']],
      [US, 'us1', []],
    ] as const) {
      const grant = await cli(['hub', 'grant', '--hub', HUB, '--hub-kubeconfig', kube(HUB), '--kubeconfig', kube(spoke), '--spoke', name, '--kind', 'example.com/v1/Widget', ...secret]);
      assert.equal(grant.code, 0, grant.stderr);
      assert.match(grant.stdout, /use Secret cluster-registry\/cluster-registry-hub-cluster1/);
    }
    await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule('widgets', { names: { suffix: '-eu1', namespaceSuffix: '-eu1' }, namespaces: { create: true }, secrets: { names: ['widget-credentials'], remoteSuffix: '-eu1' } }));
    await g.client(US).create(HUB_SYNC_RULES, undefined, hubRule('widgets', { names: { suffix: '-us1', namespaceSuffix: '-us1' }, content: 'Merge', namespaces: { create: true } }));
  });
  after(async () => {
    // The spokes' reports to their hub are the one write to a peer the checks allow.
    await g?.stop({ hubs: new Map([[EU, HUB], [US, HUB]]) });
  });

  it('brings each spoke only its own objects, suffixes stripped, in a namespace made for them', async () => {
    await g.client(HUB).create(WIDGETS, 'team-eu1', widget('team-eu1', 'db-eu1', { size: 3 }, { tier: 'prod' }));
    await g.client(HUB).create(WIDGETS, 'team-us1', widget('team-us1', 'db-us1', { size: 1 }));
    const eu = await until('db on the eu1 spoke', () => get(EU, 'team', 'db'));
    assert.deepEqual(eu.spec, { size: 3 });
    assert.equal(eu.metadata.labels?.['tier'], 'prod');
    assert.equal(eu.metadata.annotations?.[HUB_ANNOTATIONS.rule], 'widgets');
    const ns = await g.client(EU).get(NAMESPACES, undefined, 'team');
    assert.equal(ns.metadata.annotations?.[HUB_ANNOTATIONS.namespaceOwner], 'widgets/team/db');
    const us = await until('db on the us1 spoke', () => get(US, 'team', 'db'));
    assert.deepEqual(us.spec, { size: 1 });
    assert.equal(await get(US, 'team', 'db-eu1'), undefined);
    assert.equal(await get(EU, 'team', 'db-us1'), undefined);
  });

  it('reports status and the generations it answers to the hub, and moves the spec on', async () => {
    const spoke = g.client(EU);
    await spoke.patchStatus(WIDGETS, 'team', 'db', 'merge', { status: { phase: 'Ready', observedGeneration: 1 } });
    let hub = await until('the status on the hub', async () => {
      const w = await get(HUB, 'team-eu1', 'db-eu1');
      return w?.status?.['phase'] === 'Ready' && w.metadata.annotations?.[LOCAL] === '1' ? w : undefined;
    });
    assert.equal(hub.metadata.annotations?.[REMOTE], '1', 'the status answers the hub generation 1');
    await edit(HUB, 'team-eu1', 'db-eu1', (w) => ({ ...w, spec: { size: 5 } }));
    const moved = await until('the new spec on the spoke', async () => {
      const w = await get(EU, 'team', 'db');
      return w?.spec?.['size'] === 5 ? w : undefined;
    });
    assert.equal(moved.metadata.generation, 2);
    // Its status still describes the spoke generation 1: the hub is not told yet that its generation 2 is in hand.
    hub = (await get(HUB, 'team-eu1', 'db-eu1'))!;
    assert.deepEqual([hub.metadata.annotations?.[REMOTE], hub.metadata.annotations?.[LOCAL]], ['1', '1']);
    await spoke.patchStatus(WIDGETS, 'team', 'db', 'merge', { status: { phase: 'Ready', observedGeneration: 2 } });
    hub = await until('the echo of the hub generation 2, once the status describes the spec taken from it', async () => {
      const w = await get(HUB, 'team-eu1', 'db-eu1');
      return w?.metadata.annotations?.[REMOTE] === '2' ? w : undefined;
    });
    assert.equal(hub.metadata.annotations?.[LOCAL], '2');
    assert.equal(hub.metadata.annotations?.[HUB_ANNOTATIONS.reportedBy], await kubeSystemUID(g.client(EU)), 'the reporting spoke says who it is');
  });

  it('sends a listed Secret the spoke object controls into the Secret the hub keeps for it, data only', async () => {
    await g.client(HUB).create(SECRETS, 'team-eu1', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'widget-credentials-eu1', namespace: 'team-eu1' }, data: {} });
    const owner = (await get(EU, 'team', 'db'))!;
    await g.client(EU).create(SECRETS, 'team', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'widget-credentials', namespace: 'team', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'db', uid: owner.metadata.uid ?? '', controller: true }] },
      data: { password: Buffer.from('s3cret').toString('base64') },
    });
    const sent = await until('the Secret on the hub', async () => {
      const s = await getOrUndefined<Secret>(g.client(HUB), SECRETS, 'team-eu1', 'widget-credentials-eu1');
      return s?.data?.['password'] ? s : undefined;
    });
    assert.equal(Buffer.from(sent.data?.['password'] ?? '', 'base64').toString(), 's3cret');
    assert.ok(sent.metadata.ownerReferences?.some((r) => r.controller && r.kind === 'Widget' && r.name === 'db-eu1'), 'the hub object controls it');
    assert.match(sent.metadata.annotations?.[HUB_ANNOTATIONS.uploadedHash] ?? '', /^[0-9a-f]{64}$/, 'the hash of what was sent');
    assert.equal((await getOrUndefined<Secret>(g.client(EU), SECRETS, 'team', 'widget-credentials'))?.metadata.annotations?.[HUB_ANNOTATIONS.uploadedHash], undefined, 'the spoke Secret is not written');
    // A Secret the rule does not list stays on the spoke.
    await g.client(EU).create(SECRETS, 'team', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'unlisted', namespace: 'team', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'db', uid: owner.metadata.uid ?? '', controller: true }] }, data: { x: 'eA==' } });
    assert.equal(await getOrUndefined(g.client(HUB), SECRETS, 'team-eu1', 'unlisted'), undefined);
  });

  it('holds a paused object while the others move on, and takes it up when unpaused', async () => {
    const hub = g.client(HUB);
    await hub.create(WIDGETS, 'team-eu1', widget('team-eu1', 'cache-eu1', { size: 1 }));
    await until('cache on the spoke', () => get(EU, 'team', 'cache'));
    await edit(HUB, 'team-eu1', 'db-eu1', (w) => ({ ...w, metadata: { ...w.metadata, annotations: { ...w.metadata.annotations, [HUB_ANNOTATIONS.paused]: 'true' } }, spec: { size: 7 } }));
    await edit(HUB, 'team-eu1', 'cache-eu1', (w) => ({ ...w, spec: { size: 2 } }));
    await until('the unpaused object to move on', async () => (await get(EU, 'team', 'cache'))?.spec?.['size'] === 2);
    assert.equal((await get(EU, 'team', 'db'))?.spec?.['size'], 5, 'the paused one stays');
    await edit(HUB, 'team-eu1', 'db-eu1', (w) => {
      const { [HUB_ANNOTATIONS.paused]: _, ...annotations } = w.metadata.annotations ?? {};
      return { ...w, metadata: { ...w.metadata, annotations } };
    });
    await until('the held change once unpaused', async () => (await get(EU, 'team', 'db'))?.spec?.['size'] === 7);
  });

  it('merges into what a spoke set itself, where the rule says Merge', async () => {
    await edit(US, 'team', 'db', (w) => ({ ...w, spec: { ...w.spec, injected: { sidecar: true } } }));
    await edit(HUB, 'team-us1', 'db-us1', (w) => ({ ...w, spec: { size: 4 } }));
    const merged = await until('the hub change merged', async () => {
      const w = await get(US, 'team', 'db');
      return w?.spec?.['size'] === 4 ? w : undefined;
    });
    assert.deepEqual(merged.spec, { size: 4, injected: { sidecar: true } });
  });

  it('deletes nothing while the hub is down, says so on the rule, and reports what changed meanwhile once it is back', async () => {
    const apiserver = g.sandbox.cluster(HUB).apiserver;
    await apiserver.kill();
    try {
      // Its cache of the hub cannot be refreshed: the rule says so, and nothing of the hub's is taken for deleted.
      assert.match((await connected(EU, 'widgets', 'False')).message, /reading the hub's Widget objects fails/);
      await g.client(EU).patchStatus(WIDGETS, 'team', 'cache', 'merge', { status: { phase: 'Degraded' } });
      assert.ok(await get(EU, 'team', 'db'));
      assert.ok(await get(EU, 'team', 'cache'));
    } finally {
      await apiserver.start();
    }
    await connected(EU, 'widgets', 'True');
    await until('the status written meanwhile on the hub', async () => (await get(HUB, 'team-eu1', 'cache-eu1'))?.status?.['phase'] === 'Degraded');
    assert.ok(await get(EU, 'team', 'db'));
  });

  it('deletes what the hub deleted: the namespace with the object it was made for, once nothing else of the rule is in it; never a namespace it did not make', async () => {
    await g.client(HUB).delete(WIDGETS, 'team-eu1', 'cache-eu1');
    await waitGone(g, EU, WIDGETS, 'team', 'cache');
    assert.ok(await getOrUndefined(g.client(EU), NAMESPACES, undefined, 'team'), 'the namespace made for db stays while db is there');
    await g.client(HUB).delete(WIDGETS, 'team-eu1', 'db-eu1');
    await until('the namespace made for db to go', async () => {
      const ns = await getOrUndefined(g.client(EU), NAMESPACES, undefined, 'team');
      return ns === undefined || !!ns.metadata.deletionTimestamp;
    });
    await g.client(HUB).delete(WIDGETS, 'team-us1', 'db-us1');
    await waitGone(g, US, WIDGETS, 'team', 'db');
    const kept = await getOrUndefined(g.client(US), NAMESPACES, undefined, 'team');
    assert.ok(kept && !kept.metadata.deletionTimestamp, 'a namespace that was there before stays');
  });

  it('refuses what a hostile hub declares into a system or the controller namespace, and says so on the rule', async () => {
    for (const ns of ['kube-system-eu1', 'cluster-registry-eu1']) {
      await ensureNamespace(g.client(HUB), ns);
      await g.client(HUB).create(WIDGETS, ns, widget(ns, 'intruder-eu1', { size: 1 }));
    }
    const rule = await until('the refusals on the rule', async () => {
      const r = await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'widgets');
      return (r.status?.failed ?? 0) >= 1 && /nothing is synced into namespace (kube-system|cluster-registry)/.test(r.status?.lastError ?? '') ? r : undefined;
    });
    assert.equal(rule.status?.conditions?.find((c) => c.type === 'Synced')?.status, 'False');
    assert.equal(await get(EU, 'kube-system', 'intruder'), undefined);
    assert.equal(await get(EU, 'cluster-registry', 'intruder'), undefined);
    for (const ns of ['kube-system-eu1', 'cluster-registry-eu1']) await g.client(HUB).delete(WIDGETS, ns, 'intruder-eu1');
  });

  it('reports a rule it cannot run on the rule, with an Event, and keeps the others running', async () => {
    await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule('no-credentials', { credentialsSecret: 'missing', names: { suffix: '-x' } }));
    await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule('invalid', { names: { suffix: 'UPPER' } }));
    const condition = (rule: string, type: string) => until(`${type}=False on ${rule}`, async () => {
      const r = await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, rule);
      return r.status?.conditions?.find((c) => c.type === type && c.status === 'False');
    });
    assert.match((await condition('no-credentials', 'Connected')).message, /no Secret cluster-registry\/missing/);
    assert.match((await condition('invalid', 'Valid')).message, /spec\.names\.suffix/);
    await connected(EU, 'widgets', 'True');
    const events = await g.client(EU).list<CoreEvent>(EVENTS, { namespace: 'default' });
    const reasons = events.items.filter((e) => ['no-credentials', 'invalid'].includes(e.involvedObject.name ?? '')).map((e) => e.reason);
    assert.ok(reasons.includes('HubNotConnected') && reasons.includes('InvalidHubSyncRule'), `events: ${reasons.join(', ')}`);
  });
});

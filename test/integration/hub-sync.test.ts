// Hub-and-spoke sync on three real clusters: cluster1 is the hub, declaring Widgets for two
// spokes by name suffix (cluster2 takes -eu1, cluster3 -us1). Spec, labels and annotations come
// down, status and the generation echo go up, a listed Secret goes back, a pause holds an object,
// namespaces made for an object go with it (only those, and only while they hold nothing else),
// Merge keeps what a spoke's own controllers set, and a hub that is away deletes nothing and hears
// the news when it is back. The grant reaches only the hub namespaces it names and custom kinds,
// with a token that expires, is renewed, and is kept where no member's reader token reads it;
// revoke and leave end it. A rule or credentials that are not the spoke's own never run, nothing
// the policy refuses is made, whatever the hub declares, and what a hub sends is budgeted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ANNOTATIONS, HUB_ANNOTATIONS, HUB_CREDENTIALS, HUB_SYNC_RULES, NAMESPACES, SECRETS, type Secret } from '../../src/core/api/index.ts';
import type { HubSyncRule, HubSyncRuleSpec, KubeObject } from '../../src/core/api/types.ts';
import { hubCredentialsNamespace } from '../../src/core/hub/index.ts';
import { ApiError, ClusterConfig, EVENTS, isConflict, isForbidden, RestClient, type CoreEvent, type ResourceRef } from '../../src/kube/index.ts';
import { kubeSystemUID } from '../../src/peers/identity.ts';
import { tokenOf } from '../../src/registry/reader-credentials.ts';
import { tokenKubeconfig } from '../../src/sandbox/index.ts';
import { SANDBOX_NAMESPACE } from '../../src/testbed/group.ts';
import { eventually } from '../support/eventually.ts';
import { cli } from '../support/process.ts';
import { CLUSTER_ROLES, ensureNamespace, getOrUndefined, grantKinds, installWidgets, startSyncGroup, waitGone, waitGroupFormed, WIDGETS, type SyncGroup } from '../support/sync-helpers.ts';

const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const ROLES: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' };
const ROLE_BINDINGS: ResourceRef = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' };
const ACCESS_REVIEWS: ResourceRef = { group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' };
/** The hub namespaces the eu1 spoke's widgets rule reads (its grant covers those of the budget tests too). */
const EU_HUB_NAMESPACES = ['team-eu1', 'solo-eu1', 'kube-system-eu1', 'cluster-registry-eu1'];
/** Hub namespaces of the budget tests: each read by a rule of its own. */
const BUDGET_HUB_NAMESPACES = ['bulk-eu1', 'many-eu1'];
const CREDENTIALS = 'cluster-registry-hub-cluster1';
/** Where the spokes keep hub credentials: not the controller namespace, whose Secrets every member reads. */
const HUB_CREDENTIALS_NS = hubCredentialsNamespace(SANDBOX_NAMESPACE);
/** What the controllers here may hold of one peer's (or one hub rule's) objects, and make per rule. */
const CACHE_MAX_BYTES = 1 << 20;
const MAX_OBJECTS_PER_RULE = 8;

/** iat and exp of a JWT, read here independently of the product. */
function lifetimeOf(token: string): { iat: number; exp: number } {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iat: number; exp: number };
}

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

  const kube = (c: string) => g.sandbox.cluster(c).kubeconfigPath;
  /** The hub token a spoke holds now. */
  const heldToken = async (on: string) => {
    const s = await getOrUndefined<Secret>(g.client(on), SECRETS, HUB_CREDENTIALS_NS, CREDENTIALS);
    return tokenOf(Buffer.from(s?.data?.[HUB_CREDENTIALS.kubeconfigKey] ?? '', 'base64').toString('utf8'));
  };
  /** What the hub answers a request made with `token`: its kube-system namespace's UID, or the status code of its refusal. */
  const hubAnswers = async (token: string) => {
    const c = g.sandbox.cluster(HUB);
    const rest = new RestClient(await ClusterConfig.fromString(tokenKubeconfig({ name: HUB, server: c.server, caPem: c.caPem, user: 'spoke', token })).connection(), { maxRetries: 0 });
    try {
      return await kubeSystemUID(rest);
    } catch (err) {
      if (err instanceof ApiError) return err.code;
      throw err;
    } finally {
      rest.close();
    }
  };
  const warningOn = (on: string, rule: string, reason: string) =>
    until(`a ${reason} Event on ${rule} of ${on}`, async () => (await g.client(on).list<CoreEvent>(EVENTS, { namespace: 'default' })).items.find((e) => e.involvedObject.name === rule && e.reason === reason && e.type === 'Warning'));

  before(async () => {
    // Hub tokens are renewed every 20 s here, so renewal is seen within the suite (they live 10 minutes, the least an API server issues).
    // Budgets small enough for a test to go past them, and large enough for everything else here.
    g = await startSyncGroup(3, { name: 'hub-sync', extraArgs: ['--hub-token-refresh=20s', `--peer-cache-max-bytes=${CACHE_MAX_BYTES}`, `--rule-max-copies=${MAX_OBJECTS_PER_RULE}`] });
    await waitGroupFormed(g);
    await installWidgets(g, 'team-eu1');
    // The spokes' controllers make, unmark and delete namespaces, and read and mark the Secrets they send (a controller-only role).
    await grantKinds(g, 'hub-namespaces', '', ['namespaces']);
    for (const c of [EU, US]) {
      await g.client(c).create(CLUSTER_ROLES, undefined, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'hub-secrets', labels: { 'cluster-registry.k8s.cisco.com/controller-aggregated': 'true' } },
        rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'patch', 'create', 'update'] }],
      });
    }
    // A namespace made for an object goes only once the controller has seen it holds nothing else: it lists every kind there.
    await g.client(EU).create(CLUSTER_ROLES, undefined, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'hub-namespace-contents', labels: { 'cluster-registry.k8s.cisco.com/controller-aggregated': 'true' } },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['list'] }],
    });
    for (const ns of ['team-us1', ...EU_HUB_NAMESPACES, ...BUDGET_HUB_NAMESPACES]) await ensureNamespace(g.client(HUB), ns);
    // A namespace that was there before the sync: it is never the sync's to delete.
    await ensureNamespace(g.client(US), 'team');
    for (const [spoke, name, extra] of [
      [EU, 'eu1', [...[...EU_HUB_NAMESPACES, ...BUDGET_HUB_NAMESPACES].flatMap((ns) => ['--hub-namespace', ns]), '--secret', 'widget-credentials-eu1']],
      [US, 'us1', ['--hub-namespace', 'team-us1']],
    ] as const) {
      const grant = await cli(['hub', 'grant', '--hub', HUB, '--hub-kubeconfig', kube(HUB), '--kubeconfig', kube(spoke), '--spoke', name, '--kind', 'example.com/v1/Widget', '--token-ttl', '10m', ...extra]);
      assert.equal(grant.code, 0, grant.stderr);
      assert.match(grant.stdout, /use Secret cluster-registry-hub\/cluster-registry-hub-cluster1/);
    }
    await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule('widgets', { hubNamespaces: EU_HUB_NAMESPACES, names: { suffix: '-eu1', namespaceSuffix: '-eu1' }, namespaces: { create: true }, secrets: { names: ['widget-credentials'], remoteSuffix: '-eu1' } }));
    await g.client(US).create(HUB_SYNC_RULES, undefined, hubRule('widgets', { hubNamespaces: ['team-us1'], names: { suffix: '-us1', namespaceSuffix: '-us1' }, content: 'Merge', namespaces: { create: true } }));
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
    // Marked as made by the hub sync, from that very hub object: never this cluster's own.
    const hubUID = (await get(HUB, 'team-eu1', 'db-eu1'))?.metadata.uid;
    assert.equal(eu.metadata.annotations?.[HUB_ANNOTATIONS.rule], 'widgets');
    assert.equal(eu.metadata.annotations?.[HUB_ANNOTATIONS.origin], `team-eu1/db-eu1/${hubUID ?? ''}`);
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
      assert.match((await connected(EU, 'widgets', 'False')).message, /reading the hub's Widget objects in namespace [-a-z0-9]+ fails/);
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

  it('deletes what the hub deleted: the namespace with the object it was made for, once nothing else is in it; never a namespace it did not make', async () => {
    // A namespace that holds only the object it was made for (and what Kubernetes puts in every namespace).
    await g.client(HUB).create(WIDGETS, 'solo-eu1', widget('solo-eu1', 'one-eu1', { size: 1 }));
    await until('one on the spoke', () => get(EU, 'solo', 'one'));
    await g.client(HUB).delete(WIDGETS, 'solo-eu1', 'one-eu1');
    await until('the namespace made for one to go', async () => {
      const ns = await getOrUndefined(g.client(EU), NAMESPACES, undefined, 'solo');
      return ns === undefined || !!ns.metadata.deletionTimestamp;
    });
    await g.client(HUB).delete(WIDGETS, 'team-eu1', 'cache-eu1');
    await waitGone(g, EU, WIDGETS, 'team', 'cache');
    assert.ok(await getOrUndefined(g.client(EU), NAMESPACES, undefined, 'team'), 'the namespace made for db stays while db is there');
    await g.client(HUB).delete(WIDGETS, 'team-us1', 'db-us1');
    await waitGone(g, US, WIDGETS, 'team', 'db');
    const kept = await getOrUndefined(g.client(US), NAMESPACES, undefined, 'team');
    assert.ok(kept && !kept.metadata.deletionTimestamp, 'a namespace that was there before stays');
  });

  it("keeps a namespace made for a hub object when the spoke's own users put something there since, and says so", async () => {
    // db's namespace holds db, the Secrets db owns (they go with it), and now what a user of the spoke put there.
    await g.client(EU).create(CONFIGMAPS, 'team', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'users-own-notes', namespace: 'team' }, data: { keep: 'me' } });
    await g.client(HUB).delete(WIDGETS, 'team-eu1', 'db-eu1');
    await waitGone(g, EU, WIDGETS, 'team', 'db');
    const event = await warningOn(EU, 'widgets', 'HubNamespaceKept');
    assert.match(event.message ?? '', /namespace team was made for team\/db.*it holds configmaps users-own-notes: it is kept/);
    const ns = await g.client(EU).get(NAMESPACES, undefined, 'team');
    assert.ok(!ns.metadata.deletionTimestamp, 'the namespace stays');
    assert.equal(ns.metadata.annotations?.[HUB_ANNOTATIONS.namespaceOwner], undefined, 'no longer marked as made by the rule');
    assert.ok(await getOrUndefined(g.client(EU), CONFIGMAPS, 'team', 'users-own-notes'), "the user's ConfigMap is there");
  });

  it('refuses what a hostile hub declares into a system or the controller namespace, and says so on the rule', async () => {
    for (const ns of ['kube-system-eu1', 'cluster-registry-eu1']) {
      await ensureNamespace(g.client(HUB), ns);
      await g.client(HUB).create(WIDGETS, ns, widget(ns, 'intruder-eu1', { size: 1 }));
    }
    const rule = await until('the refusals on the rule', async () => {
      const r = await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'widgets');
      return (r.status?.failed ?? 0) >= 1 && /nothing is synced into namespace kube-system|a hub puts nothing into the controller namespace cluster-registry|namespace (kube-system|cluster-registry) is never a copy/.test(r.status?.lastError ?? '') ? r : undefined;
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
    assert.match((await condition('no-credentials', 'Connected')).message, /no Secret cluster-registry-hub\/missing/);
    assert.match((await condition('invalid', 'Valid')).message, /spec\.names\.suffix/);
    await connected(EU, 'widgets', 'True');
    const events = await g.client(EU).list<CoreEvent>(EVENTS, { namespace: 'default' });
    const reasons = events.items.filter((e) => ['no-credentials', 'invalid'].includes(e.involvedObject.name ?? '')).map((e) => e.reason);
    assert.ok(reasons.includes('HubNotConnected') && reasons.includes('InvalidHubSyncRule'), `events: ${reasons.join(', ')}`);
  });

  it("grants a spoke the kind in the hub namespaces named only: nothing cluster-wide, in a system namespace, of another kind, or of any Secret not named", async () => {
    const account = 'system:serviceaccount:cluster-registry:cluster-registry-spoke-eu1';
    const may = async (attributes: Record<string, string>) => {
      const review = await g.client(HUB).create<KubeObject & { status?: { allowed?: boolean } }>(ACCESS_REVIEWS, undefined, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec: { user: account, groups: ['system:serviceaccounts', 'system:serviceaccounts:cluster-registry', 'system:authenticated'], resourceAttributes: attributes } });
      return `${review.status?.allowed === true ? 'may' : 'may not'} ${Object.values(attributes).join(' ')}`;
    };
    const widgets = { group: 'example.com', resource: 'widgets' };
    const allowed: Record<string, string>[] = [
      { verb: 'list', ...widgets, namespace: 'team-eu1' },
      { verb: 'patch', ...widgets, namespace: 'team-eu1', name: 'db-eu1' },
      { verb: 'patch', ...widgets, namespace: 'team-eu1', name: 'db-eu1', subresource: 'status' },
      { verb: 'update', resource: 'secrets', namespace: 'team-eu1', name: 'widget-credentials-eu1' },
      { verb: 'get', resource: 'namespaces', name: 'kube-system' },
      { verb: 'create', resource: 'serviceaccounts', namespace: 'cluster-registry', name: 'cluster-registry-spoke-eu1', subresource: 'token' },
    ];
    const refused: Record<string, string>[] = [
      { verb: 'list', ...widgets },
      { verb: 'list', ...widgets, namespace: 'team-us1' },
      { verb: 'patch', ...widgets, namespace: 'kube-system', name: 'x' },
      { verb: 'patch', group: 'apps', resource: 'deployments', namespace: 'kube-system', name: 'x' },
      { verb: 'list', resource: 'secrets', namespace: 'team-eu1' },
      { verb: 'list', resource: 'secrets' },
      { verb: 'get', resource: 'secrets', namespace: 'team-eu1', name: 'other' },
      { verb: 'create', resource: 'serviceaccounts', namespace: 'cluster-registry', name: 'cluster-registry-controller', subresource: 'token' },
    ];
    assert.deepEqual(await Promise.all([...allowed, ...refused].map(may)), [...allowed.map((a) => `may ${Object.values(a).join(' ')}`), ...refused.map((a) => `may not ${Object.values(a).join(' ')}`)]);
    // No token Secret that never expires: the spoke holds a TokenRequest token.
    assert.equal(await getOrUndefined(g.client(HUB), SECRETS, SANDBOX_NAMESPACE, 'cluster-registry-spoke-eu1-token'), undefined);
    // What a spoke must never get is refused with the reason, and nothing of it is made.
    for (const [extra, why] of [
      [['--kind', 'example.com/v1/Widget', '--hub-namespace', 'kube-system'], /kube-system is a system namespace/],
      // Kubernetes' own kinds, namespaced ones too: patching them runs code on the hub or redirects its traffic.
      [['--kind', 'apps/v1/Deployment', '--hub-namespace', 'team-eu1'], /Deployment\.apps is a kind of Kubernetes itself.*runs code on the hub.*custom resources only/],
      [['--kind', 'v1/ConfigMap', '--hub-namespace', 'team-eu1'], /ConfigMap is a kind of Kubernetes itself.*custom resources only/],
      [['--kind', 'v1/Service', '--hub-namespace', 'team-eu1'], /Service is a kind of Kubernetes itself.*redirects its traffic/],
      [['--kind', 'example.com/v1/Widget', '--hub-namespace', 'cluster-registry'], /the hub's controller namespace/],
      [['--kind', 'v1/Secret', '--hub-namespace', 'team-eu1'], /would let the spoke list every Secret/],
      [['--kind', 'rbac.authorization.k8s.io/v1/ClusterRole'], /never synced.*never granted/],
      [['--kind', 'v1/Namespace'], /cluster-scoped kind of Kubernetes itself/],
      [['--kind', 'example.com/v1/Widget'], /name the hub namespaces/],
    ] as const) {
      const refusedGrant = await cli(['hub', 'grant', '--hub', HUB, '--hub-kubeconfig', kube(HUB), '--kubeconfig', kube(EU), '--spoke', 'bad', ...extra]);
      assert.notEqual(refusedGrant.code, 0, extra.join(' '));
      assert.match(refusedGrant.stderr, why);
    }
    assert.deepEqual((await g.client(HUB).list(ROLE_BINDINGS, { labelSelector: `${HUB_CREDENTIALS.spokeLabel}=bad` })).items, []);
    assert.equal(await getOrUndefined(g.client(HUB), SERVICE_ACCOUNTS, SANDBOX_NAMESPACE, 'cluster-registry-spoke-bad'), undefined);
  });

  it('holds a hub token that expires, renews it through the grant before it does, and syncs on without a break', async () => {
    const first = await heldToken(EU);
    assert.ok(first, 'the spoke holds a hub token');
    const secret = await g.client(EU).get<Secret>(SECRETS, HUB_CREDENTIALS_NS, CREDENTIALS);
    assert.equal(secret.type, HUB_CREDENTIALS.type);
    assert.equal(secret.metadata.annotations?.[HUB_ANNOTATIONS.hubClusterID], await kubeSystemUID(g.client(HUB)));
    const { iat, exp } = lifetimeOf(first);
    assert.equal(exp - iat, 600, 'it lives the 10 minutes granted');
    const renewed = await until('the spoke to renew its hub token', async () => {
      const t = await heldToken(EU);
      return t && t !== first ? t : undefined;
    });
    const next = lifetimeOf(renewed);
    assert.ok(next.iat > iat, 'issued later');
    assert.equal(next.exp - next.iat, 600, 'as long-lived as the one granted');
    assert.equal(await hubAnswers(renewed), await kubeSystemUID(g.client(HUB)), 'the hub takes the new token');
    // The connection took it without a break: still connected, and still syncing.
    await connected(EU, 'widgets', 'True');
    await g.client(HUB).create(WIDGETS, 'team-eu1', widget('team-eu1', 'fresh-eu1', { size: 2 }));
    await until('an object made after the renewal on the spoke', () => get(EU, 'team', 'fresh'));
    // A renewal that started from a cached Secret older than the last one written reads it again, quietly.
    const conflicts = (await g.client(EU).list<CoreEvent>(EVENTS, { namespace: 'default' })).items.filter((e) => e.reason === 'HubTokenNotRenewed' && /409/.test(e.message ?? ''));
    assert.deepEqual(conflicts.map((e) => e.message), [], 'no Warning for a write that met a newer Secret');
  });

  it("keeps the hub token where no member's reader token reads it, and the registry credentials where they do", async () => {
    // The token cluster1 holds to read cluster2 with: what every member of the group holds of it.
    const held = await g.client(HUB).get<Secret>(SECRETS, SANDBOX_NAMESPACE, EU);
    const token = tokenOf(Buffer.from(held.data?.['kubeconfig'] ?? '', 'base64').toString('utf8'));
    assert.ok(token);
    const c = g.sandbox.cluster(EU);
    const member = new RestClient(await ClusterConfig.fromString(tokenKubeconfig({ name: EU, server: c.server, caPem: c.caPem, user: 'member', token })).connection(), { maxRetries: 0 });
    try {
      assert.equal((await member.get<Secret>(SECRETS, SANDBOX_NAMESPACE, EU)).metadata.name, EU, 'the registry credentials travel as before');
      // Every hub credentials Secret the spoke holds, wherever it is, is out of the member's reach.
      const hubCredentials = (await g.client(EU).list<Secret>(SECRETS, { fieldSelector: `type=${HUB_CREDENTIALS.type}` })).items;
      assert.deepEqual(hubCredentials.map((x) => `${x.metadata.namespace ?? ''}/${x.metadata.name ?? ''}`), [`${HUB_CREDENTIALS_NS}/${CREDENTIALS}`]);
      for (const x of hubCredentials) await assert.rejects(member.get(SECRETS, x.metadata.namespace, x.metadata.name ?? ''), isForbidden, `a member reads ${x.metadata.name ?? ''}`);
      await assert.rejects(member.list(SECRETS, { namespace: HUB_CREDENTIALS_NS }), isForbidden);
    } finally {
      member.close();
    }
  });

  it('never runs a HubSyncRule that carries the marks of a copy from another cluster, and says why', async () => {
    const hubID = await kubeSystemUID(g.client(HUB));
    const planted = hubRule('planted', { hubNamespaces: ['team-eu1'], names: { suffix: '-p1', namespaceSuffix: '-eu1' }, namespaces: { create: true } });
    planted.metadata.annotations = { [ANNOTATIONS.ownership]: hubID };
    await g.client(EU).create(HUB_SYNC_RULES, undefined, planted);
    await g.client(HUB).create(WIDGETS, 'team-eu1', widget('team-eu1', 'intruder-p1', { size: 1 }));
    const valid = await until('Valid=False on planted', async () => (await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'planted')).status?.conditions?.find((c) => c.type === 'Valid' && c.status === 'False'));
    assert.match(valid.message, new RegExp(`marks of a copy synced from another cluster \\(${hubID}\\): a HubSyncRule runs only on the cluster it was written on`));
    assert.match((await warningOn(EU, 'planted', 'ForeignHubSyncRule')).message ?? '', /marks of a copy/);
    // The rule it shares its hub with has long taken what it declares meanwhile: this one took nothing.
    await until('fresh on the spoke', () => get(EU, 'team', 'fresh'));
    assert.equal(await get(EU, 'team', 'intruder'), undefined);
    assert.equal((await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'planted')).status?.matched ?? 0, 0);
  });

  it("takes credentials only from a hub credentials Secret in their namespace: never a member's reader Secret, never another Secret", async () => {
    // The Secret cluster2 reads its member cluster1 with, holding a token cluster1 issued: never looked for in the controller namespace, and refused by its type anywhere.
    const reader = await g.client(EU).get<Secret>(SECRETS, SANDBOX_NAMESPACE, HUB);
    await g.client(EU).create(SECRETS, HUB_CREDENTIALS_NS, { apiVersion: 'v1', kind: 'Secret', type: reader.type ?? '', metadata: { name: 'reader-copy', namespace: HUB_CREDENTIALS_NS }, data: reader.data ?? {} });
    await g.client(EU).create(SECRETS, HUB_CREDENTIALS_NS, { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'plain-credentials', namespace: HUB_CREDENTIALS_NS }, data: reader.data ?? {} });
    for (const [rule, credentialsSecret, why] of [
      ['reader-credentials', HUB, /no Secret cluster-registry-hub\/cluster1 with the hub's credentials/],
      ['reader-copy', 'reader-copy', /Secret cluster-registry-hub\/reader-copy is the registry's reader credentials, not hub credentials/],
      ['plain-credentials', 'plain-credentials', /Secret cluster-registry-hub\/plain-credentials is of type Opaque, not hub credentials/],
    ] as const) {
      await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule(rule, { credentialsSecret, hubNamespaces: ['team-eu1'], names: { suffix: '-r1' } }));
      assert.match((await connected(EU, rule, 'False')).message, why);
      assert.match((await warningOn(EU, rule, 'HubNotConnected')).message ?? '', why);
    }
  });

  it("makes nothing the policy refuses, asked with the very object it would write: a hub's ServiceAccount token Secret is never created", async () => {
    // An admin grants eu1 Secrets of one hub namespace by hand (hub grant never grants Secrets as the kind).
    const hub = g.client(HUB);
    await ensureNamespace(hub, 'vault-eu1');
    await hub.create(ROLES, 'vault-eu1', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'eu1-secrets', namespace: 'vault-eu1' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'patch'] }] });
    await hub.create(ROLE_BINDINGS, 'vault-eu1', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'eu1-secrets', namespace: 'vault-eu1' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'eu1-secrets' }, subjects: [{ kind: 'ServiceAccount', name: 'cluster-registry-spoke-eu1', namespace: SANDBOX_NAMESPACE }] });
    // A hostile hub: no token controller of its own fills (or deletes) the token Secret it declares.
    const kcm = g.sandbox.cluster(HUB).controllerManager!;
    await kcm.stop();
    try {
      await hub.create(SECRETS, 'vault-eu1', { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token', metadata: { name: 'token-eu1', namespace: 'vault-eu1', annotations: { [ANNOTATIONS.serviceAccountName]: 'default' } } });
      await hub.create(SECRETS, 'vault-eu1', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'plain-eu1', namespace: 'vault-eu1' }, data: { a: 'Yg==' } });
      await g.client(EU).create(HUB_SYNC_RULES, undefined, { ...hubRule('secrets', { hubNamespaces: ['vault-eu1'], names: { suffix: '-eu1', namespaceSuffix: '-eu1' }, namespaces: { create: true }, reportStatus: false }), spec: { hub: HUB, groupVersionKind: { group: '', version: 'v1', kind: 'Secret' }, hubNamespaces: ['vault-eu1'], names: { suffix: '-eu1', namespaceSuffix: '-eu1' }, namespaces: { create: true }, reportStatus: false } });
      await until('the plain Secret on the spoke', () => getOrUndefined(g.client(EU), SECRETS, 'vault', 'plain'));
      const rule = await until('the refusal on the rule', async () => {
        const r = await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'secrets');
        return /vault-eu1\/token-eu1: Secrets of type kubernetes\.io\/service-account-token are never synced/.test(r.status?.lastError ?? '') ? r : undefined;
      });
      assert.equal(rule.status?.conditions?.find((c) => c.type === 'Synced')?.status, 'False');
      assert.equal(await getOrUndefined(g.client(EU), SECRETS, 'vault', 'token'), undefined, 'no token Secret on the spoke');
      await hub.delete(SECRETS, 'vault-eu1', 'token-eu1');
    } finally {
      await kcm.start();
    }
  });

  it("holds what a hub sends to a peer's cache budget: over it, the rule says so and takes nothing of it, the other rules sync on, and within it again it takes all", async () => {
    const hub = g.client(HUB);
    // Six objects of 200 KB: more than the 1 MiB our caches of one rule's hub may hold.
    const payload = 'x'.repeat(200_000);
    for (let i = 0; i < 6; i++) await hub.create(WIDGETS, 'bulk-eu1', widget('bulk-eu1', `big${i}-eu1`, { payload }));
    await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule('bulk', { hubNamespaces: ['bulk-eu1'], names: { suffix: '-eu1', namespaceSuffix: '-eu1' }, namespaces: { create: true } }));
    const withinBudget = (status: 'True' | 'False', timeoutMs = 60_000) =>
      eventually(`WithinBudget=${status} on bulk`, async () => (await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'bulk')).status?.conditions?.find((x) => x.type === 'WithinBudget' && x.status === status), timeoutMs);
    assert.match((await withinBudget('False')).message, /the hub cluster1 serves more than our caches of it may hold.*--peer-cache-max-bytes.*budget of \d+ objects and 1\.0 MiB/);
    assert.match((await warningOn(EU, 'bulk', 'HubBudgetExceeded')).message ?? '', /serves more than our caches of it may hold/);
    assert.equal(await getOrUndefined(g.client(EU), NAMESPACES, undefined, 'bulk'), undefined, 'nothing of it is made');
    // The hub's other rule syncs on: each rule's caches of its hub have a budget of their own.
    await hub.create(WIDGETS, 'team-eu1', widget('team-eu1', 'meanwhile-eu1', { size: 1 }));
    await until('an object of the other rule made meanwhile', () => get(EU, 'team', 'meanwhile'));
    for (let i = 0; i < 3; i++) await hub.delete(WIDGETS, 'bulk-eu1', `big${i}-eu1`);
    // The cache lists again after a backoff that grows while it does not fit.
    await withinBudget('True', 180_000);
    await until('what the hub declares, on the spoke', async () => (await g.client(EU).list(WIDGETS, { namespace: 'bulk' })).items.length === 3);
  });

  it('makes at most the objects a rule may make of what a hub declares, says so on the rule, and makes the others as room frees', async () => {
    const hub = g.client(HUB);
    for (let i = 0; i < MAX_OBJECTS_PER_RULE + 2; i++) await hub.create(WIDGETS, 'many-eu1', widget('many-eu1', `m${i}-eu1`, { size: i }));
    await g.client(EU).create(HUB_SYNC_RULES, undefined, hubRule('many', { hubNamespaces: ['many-eu1'], names: { suffix: '-eu1', namespaceSuffix: '-eu1' }, namespaces: { create: true } }));
    const rule = await until('the two objects beyond the budget reported on many', async () => {
      const r = await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'many');
      return r.status?.conditions?.some((x) => x.type === 'WithinBudget' && x.status === 'False' && x.message.startsWith('2 hub object(s)')) ? r : undefined;
    });
    assert.equal(rule.status?.conditions?.find((x) => x.type === 'WithinBudget')?.message, `2 hub object(s) not made here: the rule holds its budget of ${MAX_OBJECTS_PER_RULE} objects (the controller's --rule-max-copies)`);
    assert.equal(rule.status?.conditions?.find((x) => x.type === 'Synced')?.status, 'False');
    assert.match(rule.status?.lastError ?? '', /the rule holds its budget of 8 objects here, so no more are made/);
    assert.match((await warningOn(EU, 'many', 'HubBudgetExceeded')).message ?? '', /not made here/);
    const made = (await g.client(EU).list(WIDGETS, { namespace: 'many' })).items.map((w) => w.metadata.name ?? '');
    assert.equal(made.length, MAX_OBJECTS_PER_RULE, 'nothing beyond the budget is made');
    // Two that were made go from the hub, and so from here: the two waiting take their places.
    for (const name of made.slice(0, 2)) await hub.delete(WIDGETS, 'many-eu1', `${name}-eu1`);
    const declared = (await hub.list(WIDGETS, { namespace: 'many-eu1' })).items.map((w) => (w.metadata.name ?? '').replace(/-eu1$/, '')).sort();
    await until('every object the hub declares now, on the spoke', async () => JSON.stringify((await g.client(EU).list(WIDGETS, { namespace: 'many' })).items.map((w) => w.metadata.name).sort()) === JSON.stringify(declared));
    await until('WithinBudget=True on many', async () => (await g.client(EU).get<HubSyncRule>(HUB_SYNC_RULES, undefined, 'many')).status?.conditions?.find((x) => x.type === 'WithinBudget' && x.status === 'True'));
  });

  it('refuses hub credentials an earlier grant left where members read them, and a grant made again replaces them, with every token of the old', async () => {
    const spoke = g.client(US);
    const held = await spoke.get<Secret>(SECRETS, HUB_CREDENTIALS_NS, CREDENTIALS);
    const old = tokenOf(Buffer.from(held.data?.[HUB_CREDENTIALS.kubeconfigKey] ?? '', 'base64').toString('utf8'))!;
    // As an earlier version left it: in the controller namespace, and nowhere else.
    await spoke.create(SECRETS, SANDBOX_NAMESPACE, { apiVersion: 'v1', kind: 'Secret', type: held.type ?? '', metadata: { name: CREDENTIALS, namespace: SANDBOX_NAMESPACE, labels: held.metadata.labels ?? {}, annotations: held.metadata.annotations ?? {} }, data: held.data ?? {} });
    await spoke.delete(SECRETS, HUB_CREDENTIALS_NS, CREDENTIALS);
    const refused = await connected(US, 'widgets', 'False');
    assert.match(refused.message, /Secret cluster-registry\/cluster-registry-hub-cluster1 holds hub credentials where every member of the group can read them.*run cluster-registry hub grant again/);
    // What a member that read it could have done meanwhile: mint a token of its own with it.
    const c = g.sandbox.cluster(HUB);
    const thief = new RestClient(await ClusterConfig.fromString(tokenKubeconfig({ name: HUB, server: c.server, caPem: c.caPem, user: 'thief', token: old })).connection(), { maxRetries: 0 });
    const stolen = await thief.json<{ status?: { token?: string } }>({ method: 'POST', path: `/api/v1/namespaces/${SANDBOX_NAMESPACE}/serviceaccounts/cluster-registry-spoke-us1/token`, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } }).finally(() => thief.close());
    const minted = stolen.status?.token ?? '';
    assert.equal(await hubAnswers(minted), await kubeSystemUID(g.client(HUB)));
    const grant = await cli(['hub', 'grant', '--hub', HUB, '--hub-kubeconfig', kube(HUB), '--kubeconfig', kube(US), '--spoke', 'us1', '--kind', 'example.com/v1/Widget', '--token-ttl', '10m', '--hub-namespace', 'team-us1']);
    assert.equal(grant.code, 0, grant.stderr);
    assert.match(grant.stderr, /cluster-registry-spoke-us1 on .* is made anew, so every token it was given dies/);
    assert.equal(await getOrUndefined(spoke, SECRETS, SANDBOX_NAMESPACE, CREDENTIALS), undefined, 'the Secret members could read is gone');
    assert.notEqual(await heldToken(US), old);
    await until('the exposed token and the one minted with it to be refused', async () => (await hubAnswers(old)) === 401 && (await hubAnswers(minted)) === 401);
    await connected(US, 'widgets', 'True');
  });

  it("revokes a spoke's grant: its token is refused at once, nothing of the grant is left on the hub, nor its credentials on the spoke", async () => {
    const token = (await heldToken(US))!;
    assert.equal(await hubAnswers(token), await kubeSystemUID(g.client(HUB)));
    const revoked = await cli(['hub', 'revoke', '--hub-kubeconfig', kube(HUB), '--spoke', 'us1', '--hub', HUB, '--kubeconfig', kube(US)]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await hubAnswers(token), 401, "the spoke's token no longer works");
    const left = [];
    for (const ref of [ROLES, ROLE_BINDINGS, CLUSTER_ROLES, { ...CLUSTER_ROLES, resource: 'clusterrolebindings' }, SERVICE_ACCOUNTS]) left.push(...(await g.client(HUB).list(ref, { labelSelector: `${HUB_CREDENTIALS.spokeLabel}=us1` })).items.map((o) => `${o.kind ?? ''} ${o.metadata.name ?? ''}`));
    assert.deepEqual(left, []);
    assert.equal(await getOrUndefined(g.client(US), SECRETS, HUB_CREDENTIALS_NS, CREDENTIALS), undefined);
    assert.match((await connected(US, 'widgets', 'False')).message, /no Secret cluster-registry-hub\/cluster-registry-hub-cluster1/);
    assert.ok(await getOrUndefined(g.client(HUB), SERVICE_ACCOUNTS, SANDBOX_NAMESPACE, 'cluster-registry-spoke-eu1'), "another spoke's grant stays");
  });

  it('removes the grants between a leaving cluster and its members', async () => {
    const token = (await heldToken(EU))!;
    assert.equal(await hubAnswers(token), await kubeSystemUID(g.client(HUB)));
    const left = await cli(['leave', '--kubeconfig', kube(EU), '--member-kubeconfig', kube(HUB), '--member-kubeconfig', kube(US)]);
    assert.equal(left.code, 0, left.stderr);
    assert.match(left.stderr, /hub-and-spoke: deleted ServiceAccount cluster-registry\/cluster-registry-spoke-eu1/);
    // The hub forgets a token it accepted a few seconds after its ServiceAccount went.
    await until("the leaver's hub token to be refused", async () => (await hubAnswers(token)) === 401);
    assert.equal(await getOrUndefined(g.client(HUB), SERVICE_ACCOUNTS, SANDBOX_NAMESPACE, 'cluster-registry-spoke-eu1'), undefined);
    assert.deepEqual((await g.client(HUB).list(ROLE_BINDINGS, { labelSelector: `${HUB_CREDENTIALS.spokeLabel}=eu1` })).items, []);
    assert.equal(await getOrUndefined(g.client(EU), SECRETS, HUB_CREDENTIALS_NS, CREDENTIALS), undefined, 'nor does it keep credentials for its former hub');
  });
});

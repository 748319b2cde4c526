// One copy made outside the engine (as `join` makes it), written to an API server in memory
// through the real REST client and discovery: what it creates, updates and leaves alone, and how
// it copes with objects changing under it. Another writer acting between our read and our write
// is played by a client that runs a step of the test's just before a request of ours leaves.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ANNOTATIONS, CLUSTER_SECRET, CORE_RULE_NAMES, coreResourceSyncRules, LABELS, sourceIdentityOf } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRuleSpec } from '../core/api/types.ts';
import { FIELD_MANAGER } from '../core/rules/index.ts';
import { isConflict, NoKindMatchError, RestClient, type ResourceRef } from '../kube/index.ts';
import { MemoryApiServer } from '../../test/support/sync-apiserver.ts';
import { copyOnce, type CopyOnceContext } from './copy-once.ts';

const SOURCE_ID = 'source-uid';
const TARGET_ID = 'target-uid';
const OTHER_ID = 'other-uid';
const REGISTRY = 'clusterregistry.k8s.cisco.com/v1alpha1';
const NAMESPACE = 'cluster-registry';

/** A rule `r` taking every ConfigMap, unless `rules` says otherwise. */
function rule(rules: ResourceSyncRuleSpec['rules'] = [{}]): { name: string; spec: ResourceSyncRuleSpec } {
  return { name: 'r', spec: { groupVersionKind: { version: 'v1', kind: 'ConfigMap' }, rules } };
}

/** One of the core rules, as `join` takes it. */
function coreRule(name: string): { name: string; spec: ResourceSyncRuleSpec } {
  const found = coreResourceSyncRules(NAMESPACE).find((r) => r.metadata.name === name);
  assert.ok(found, name);
  return { name, spec: found.spec };
}

/** ConfigMap ns/`name` as the source cluster holds it, with data k=`value` and these annotations. */
function source(name: string, value: string, annotations: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', uid: `src-${name}`, resourceVersion: '77', creationTimestamp: '2020-01-01T00:00:00Z', annotations },
    data: { k: value },
  };
}

/** What the target holds at ConfigMap ns/`name` before the copy: owned by `owner` (a local object when undefined). */
function existing(name: string, value: string, o: { owner?: string; annotations?: Record<string, string>; deleting?: boolean } = {}): KubeObject {
  const annotations = { ...(o.owner ? { [ANNOTATIONS.ownership]: o.owner } : {}), ...o.annotations };
  const labels = o.owner ? { [LABELS.ownership]: o.owner } : undefined;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', annotations, ...(labels ? { labels } : {}), ...(o.deleting ? { deletionTimestamp: '2020-01-01T00:00:00Z' } : {}) },
    data: { k: value },
  };
}

/** A Cluster entry `name` of the cluster `id`, with these annotations. */
function clusterEntry(name: string, id: string, annotations: Record<string, string> = {}): Cluster {
  return { apiVersion: REGISTRY, kind: 'Cluster', metadata: { name, uid: `src-${name}`, annotations }, spec: { clusterID: id } };
}

const place = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', name } });

/** The writes a server was asked (everything but reads), as `METHOD path`. */
function writes(srv: MemoryApiServer): string[] {
  return srv.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
}

const dataOf = (o: KubeObject | undefined): unknown => (o as { data?: unknown } | undefined)?.data;

/** A client of the target that runs a step of the test's just before each create, get or apply it sends. */
class Interposing extends RestClient {
  beforeCreate: () => void = () => undefined;
  beforeGet: () => void = () => undefined;
  beforeApply: () => void = () => undefined;

  override async create<T extends KubeObject>(ref: ResourceRef, namespace: string | undefined, obj: T, opts?: Parameters<RestClient['create']>[3]): Promise<T> {
    this.beforeCreate();
    return super.create(ref, namespace, obj, opts);
  }

  override async get<T extends KubeObject = KubeObject>(ref: ResourceRef, namespace: string | undefined, name: string, opts?: Parameters<RestClient['get']>[3]): Promise<T> {
    this.beforeGet();
    return super.get(ref, namespace, name, opts);
  }

  override async apply<T extends KubeObject>(ref: ResourceRef, namespace: string | undefined, obj: T, opts: Parameters<RestClient['apply']>[3]): Promise<T> {
    this.beforeApply();
    return super.apply(ref, namespace, obj, opts);
  }
}

/** The target's API server, closed after the test, and the context of a copy from the source cluster into it. */
async function target(t: TestContext, clusters: readonly Cluster[] = []): Promise<{ srv: MemoryApiServer; ctx: CopyOnceContext }> {
  const srv = await MemoryApiServer.start();
  t.after(() => srv.close());
  return { srv, ctx: { target: srv.rest, targetClusterID: TARGET_ID, sourceClusterID: SOURCE_ID, targetClusters: clusters } };
}

/** The same, reached through an Interposing client. */
async function interposed(t: TestContext): Promise<{ srv: MemoryApiServer; client: Interposing; ctx: CopyOnceContext }> {
  const { srv, ctx } = await target(t);
  const client = new Interposing({ server: srv.rest.server, tls: {}, authHeaders: () => Promise.resolve({}), invalidate: () => undefined }, { maxRetries: 0 });
  t.after(() => client.close());
  return { srv, client, ctx: { ...ctx, target: client } };
}

describe('copyOnce: what it creates', () => {
  it('creates the copy the rule makes, owned by the cluster it came from and recording its source and rule', async (t) => {
    const { srv, ctx } = await target(t);
    const outcome = await copyOnce(rule(), source('a', 'v1'), ctx);
    assert.deepEqual(outcome, { action: 'created', reason: 'Create' });
    const copy = srv.get(place('a'));
    assert.ok(copy);
    assert.deepEqual(dataOf(copy), { k: 'v1' });
    assert.equal(copy.metadata.annotations?.[ANNOTATIONS.ownership], SOURCE_ID);
    assert.equal(copy.metadata.labels?.[LABELS.ownership], SOURCE_ID, 'the label the controllers watch copies by');
    assert.deepEqual({ ...sourceIdentityOf(copy) }, { clusterID: SOURCE_ID, group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a', rule: 'r' });
  });

  it('writes under the sync field manager with a plain create, so the controllers own and keep what it wrote', async (t) => {
    const { srv, ctx } = await target(t);
    await copyOnce(rule(), source('a', 'v1'), ctx);
    const create = srv.requests.find((r) => r.method === 'POST');
    assert.equal(create?.path, '/api/v1/namespaces/ns/configmaps');
    assert.equal(create.query.get('fieldManager'), FIELD_MANAGER);
  });

  it('leaves behind what is the source cluster’s own: its uid, resourceVersion, creation time and status', async (t) => {
    const { srv, ctx } = await target(t);
    await copyOnce(rule(), { ...source('a', 'v1'), status: { phase: 'there' } }, ctx);
    const body = srv.requests.find((r) => r.method === 'POST')?.body as KubeObject;
    assert.equal(body.metadata.uid, undefined);
    assert.equal(body.metadata.resourceVersion, undefined);
    assert.equal(body.metadata.creationTimestamp, undefined);
    assert.equal(body['status'], undefined);
  });

  it('keeps the owner an object was passed on for: a copy of a copy stays owned by the cluster that owns it', async (t) => {
    const { srv, ctx } = await target(t);
    const relayed = source('a', 'v1', { [ANNOTATIONS.ownership]: OTHER_ID });
    relayed.metadata.labels = { [LABELS.ownership]: OTHER_ID };
    assert.equal((await copyOnce(rule(), relayed, ctx)).action, 'created');
    assert.equal(srv.get(place('a'))?.metadata.annotations?.[ANNOTATIONS.ownership], OTHER_ID);
    assert.equal(sourceIdentityOf(srv.get(place('a'))!)?.clusterID, SOURCE_ID, 'the source is still the cluster it was read from');
  });

  it('renders the rule’s templates against the target’s registry, the target being the local cluster', async (t) => {
    const { srv, ctx } = await target(t, [clusterEntry('the-target', TARGET_ID), clusterEntry('the-source', SOURCE_ID)]);
    const renaming = rule([{ mutations: { overrides: [{ type: 'replace', path: '/data/k', value: '{{ .LocalCluster.GetName }} from {{ .Cluster.GetName }}' }] } }]);
    await copyOnce(renaming, source('a', 'v1'), ctx);
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'the-target from the-source' });
  });

  it('copies a reader credentials Secret the way the core rule does, and no Secret of another type', async (t) => {
    const { srv, ctx } = await target(t);
    const secret = (name: string, type: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', type, metadata: { name, namespace: NAMESPACE, uid: `src-${name}` }, data: { kubeconfig: 'eA==' } });
    const secrets = coreRule(CORE_RULE_NAMES.clusterSecrets);
    assert.deepEqual(await copyOnce(secrets, secret('reader', CLUSTER_SECRET.type), ctx), { action: 'created', reason: 'Create' });
    assert.deepEqual(await copyOnce(secrets, secret('opaque', 'Opaque'), ctx), { action: 'skipped', reason: 'NotMatched' });
    assert.ok(srv.get({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: NAMESPACE, name: 'reader' } }));
    assert.equal(srv.get({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: NAMESPACE, name: 'opaque' } }), undefined);
  });
});

describe('copyOnce: registry entries and who vouches for them', () => {
  it('marks the entry it writes with who vouches for it, so that it speaks for its cluster here', async (t) => {
    const { srv, ctx } = await target(t);
    await copyOnce(coreRule(CORE_RULE_NAMES.clusters), clusterEntry('the-source', SOURCE_ID), { ...ctx, vouch: 'join' });
    const entry = srv.get({ apiVersion: REGISTRY, kind: 'Cluster', metadata: { name: 'the-source' } });
    assert.equal(entry?.metadata.annotations?.[ANNOTATIONS.vouched], 'join');
    assert.equal(entry.metadata.annotations[ANNOTATIONS.ownership], SOURCE_ID);
  });

  it('never passes on the vouch a source cluster marked on its own entry', async (t) => {
    const { srv, ctx } = await target(t);
    await copyOnce(coreRule(CORE_RULE_NAMES.clusters), clusterEntry('the-source', SOURCE_ID, { [ANNOTATIONS.vouched]: 'admin' }), ctx);
    const entry = srv.get({ apiVersion: REGISTRY, kind: 'Cluster', metadata: { name: 'the-source' } });
    assert.ok(entry);
    assert.equal(entry.metadata.annotations?.[ANNOTATIONS.vouched], undefined);
  });

  it('keeps the vouch of an entry it updates, though it vouches for nothing itself', async (t) => {
    const { srv, ctx } = await target(t);
    const vouched = clusterEntry('the-source', SOURCE_ID, { [ANNOTATIONS.ownership]: SOURCE_ID, [ANNOTATIONS.vouched]: 'admin' });
    srv.put({ ...vouched, metadata: { ...vouched.metadata, uid: undefined, labels: { [LABELS.ownership]: SOURCE_ID } } });
    const outcome = await copyOnce(coreRule(CORE_RULE_NAMES.clusters), { ...clusterEntry('the-source', SOURCE_ID), spec: { clusterID: SOURCE_ID, kubernetesApiEndpoints: [{ serverAddress: 'https://new:6443' }] } }, ctx);
    assert.equal(outcome.action, 'updated');
    const entry = srv.get({ apiVersion: REGISTRY, kind: 'Cluster', metadata: { name: 'the-source' } }) as Cluster | undefined;
    assert.equal(entry?.metadata.annotations?.[ANNOTATIONS.vouched], 'admin');
    assert.equal(entry.spec.kubernetesApiEndpoints?.[0]?.serverAddress, 'https://new:6443');
  });
});

describe('copyOnce: what it updates', () => {
  it('brings a copy made earlier from the same source up to what the source holds now', async (t) => {
    const { srv, ctx } = await target(t);
    await copyOnce(rule(), source('a', 'v1'), ctx);
    const outcome = await copyOnce(rule(), source('a', 'v2'), ctx);
    assert.deepEqual(outcome, { action: 'updated', reason: 'Update' });
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'v2' });
  });

  it('updates by server-side apply under the sync field manager, guarded by the version it decided on', async (t) => {
    const { srv, ctx } = await target(t);
    const before = srv.put(existing('a', 'v1', { owner: SOURCE_ID }));
    await copyOnce(rule(), source('a', 'v2'), ctx);
    const apply = srv.requests.find((r) => r.method === 'PATCH');
    assert.equal(apply?.query.get('fieldManager'), FIELD_MANAGER);
    assert.equal(apply.query.get('force'), 'true');
    assert.equal((apply.body as KubeObject).metadata.resourceVersion, before.metadata.resourceVersion);
  });

  it('writes nothing to a copy that already holds what the rule makes, and says it is unchanged', async (t) => {
    const { srv, ctx } = await target(t);
    await copyOnce(rule(), source('a', 'v1'), ctx);
    // What a real API server records of our write: the fields our manager owns.
    const made = srv.get(place('a'))!;
    srv.put({ ...made, metadata: { ...made.metadata, managedFields: [{ manager: FIELD_MANAGER, operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:k': {} } } }] } });
    const writesBefore = writes(srv).length;
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'unchanged', reason: 'Unchanged' });
    assert.equal(writes(srv).length, writesBefore);
    assert.equal((await copyOnce(rule(), source('a', 'v2'), ctx)).action, 'updated', 'a change of the source is written');
  });

  it('decides again on a copy another writer changed between its read and its write, and then writes it', async (t) => {
    const { srv, client, ctx } = await interposed(t);
    srv.put(existing('a', 'v1', { owner: SOURCE_ID }));
    let raced = false;
    client.beforeApply = () => {
      if (raced) return;
      raced = true;
      srv.put(existing('a', 'theirs', { owner: SOURCE_ID }));
    };
    assert.deepEqual(await copyOnce(rule(), source('a', 'v2'), ctx), { action: 'updated', reason: 'Update' });
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'v2' });
    assert.equal(writes(srv).filter((w) => w.startsWith('PATCH')).length, 2, 'the refused write, then the one decided again');
  });

  it('gives up, with the conflict, on a copy that changes before each of its five attempts', async (t) => {
    const { srv, client, ctx } = await interposed(t);
    srv.put(existing('a', 'v1', { owner: SOURCE_ID }));
    client.beforeApply = () => void srv.put(existing('a', 'theirs', { owner: SOURCE_ID }));
    await assert.rejects(copyOnce(rule(), source('a', 'v2'), ctx), (err) => isConflict(err));
    assert.equal(writes(srv).filter((w) => w.startsWith('PATCH')).length, 5);
  });

  it('decides again when an object appeared at the name after its read: a copy of the same source is updated', async (t) => {
    const { srv, client, ctx } = await interposed(t);
    client.beforeCreate = () => void srv.put(existing('a', 'stale', { owner: SOURCE_ID }));
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'updated', reason: 'Update' });
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'v1' });
  });
});

describe('copyOnce: what it leaves alone', () => {
  it('leaves a local object of the same name as it is', async (t) => {
    const { srv, ctx } = await target(t);
    const local = srv.put(existing('a', 'mine'));
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'skipped', reason: 'LocallyOwned' });
    assert.deepEqual(srv.get(place('a')), local);
    assert.deepEqual(writes(srv), []);
  });

  it('leaves alone a copy another cluster owns: a copy never changes hands', async (t) => {
    const { srv, ctx } = await target(t);
    srv.put(existing('a', 'theirs', { owner: OTHER_ID }));
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'skipped', reason: 'OwnerWouldChange' });
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'theirs' });
    assert.deepEqual(writes(srv), []);
  });

  it('makes no copy of an object the target cluster owns itself, come back through the source', async (t) => {
    const { srv, ctx } = await target(t);
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1', { [ANNOTATIONS.ownership]: TARGET_ID }), ctx), { action: 'skipped', reason: 'OwnedByLocalCluster' });
    assert.equal(srv.get(place('a')), undefined);
  });

  it('makes no copy of a source marked resource-sync-disabled', async (t) => {
    const { srv, ctx } = await target(t);
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1', { [ANNOTATIONS.resourceSyncDisabled]: '' }), ctx), { action: 'skipped', reason: 'SyncDisabledOnSource' });
    assert.equal(srv.get(place('a')), undefined);
  });

  it('leaves as it is a copy marked resource-sync-disabled here', async (t) => {
    const { srv, ctx } = await target(t);
    srv.put(existing('a', 'pinned', { owner: SOURCE_ID, annotations: { [ANNOTATIONS.resourceSyncDisabled]: 'true' } }));
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'skipped', reason: 'SyncDisabledLocally' });
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'pinned' });
  });

  it('leaves alone a copy that is being deleted', async (t) => {
    const { srv, ctx } = await target(t);
    srv.put(existing('a', 'going', { owner: SOURCE_ID, deleting: true }));
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'skipped', reason: 'LocalObjectTerminating' });
    assert.deepEqual(writes(srv), []);
  });

  it('makes no copy of an object the rule does not take, without asking the target anything', async (t) => {
    const { srv, ctx } = await target(t);
    assert.deepEqual(await copyOnce(rule([{ match: [{ namespaces: ['elsewhere'] }] }]), source('a', 'v1'), ctx), { action: 'skipped', reason: 'NotMatched' });
    assert.deepEqual(srv.requests, []);
  });

  it('decides again when an object appeared at the name after its read: a local one is left alone', async (t) => {
    const { srv, client, ctx } = await interposed(t);
    client.beforeCreate = () => void srv.put(existing('a', 'mine'));
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'skipped', reason: 'LocallyOwned' });
    assert.deepEqual(dataOf(srv.get(place('a'))), { k: 'mine' });
  });
});

describe('copyOnce: failures', () => {
  it('fails at once, without retrying, where the target does not serve the kind', async (t) => {
    const { srv, ctx } = await target(t);
    const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } };
    await assert.rejects(copyOnce({ name: 'r', spec: { groupVersionKind: { group: 'example.com', version: 'v1', kind: 'Widget' }, rules: [{}] } }, widget, ctx), NoKindMatchError);
    assert.deepEqual(writes(srv), []);
  });

  it('stops when its signal is aborted', async (t) => {
    const { srv, ctx } = await target(t);
    await assert.rejects(copyOnce(rule(), source('a', 'v1'), { ...ctx, signal: AbortSignal.abort() }), { name: 'AbortError' });
    assert.equal(srv.get(place('a')), undefined);
  });

  it('creates the copy when an object that stood in its way is gone again by the time it looks', async (t) => {
    const { srv, client, ctx } = await interposed(t);
    let created = false;
    client.beforeCreate = () => {
      if (created) return;
      created = true;
      srv.put(existing('a', 'passing', { owner: SOURCE_ID }));
      // It goes again before the read that follows the refused create.
      client.beforeGet = () => srv.remove(place('a'));
    };
    assert.deepEqual(await copyOnce(rule(), source('a', 'v1'), ctx), { action: 'created', reason: 'Create' });
  });
});

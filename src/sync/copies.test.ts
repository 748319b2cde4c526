import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ANNOTATIONS, formatSourceIdentity, LABELS, sourceObjectKey } from '../core/api/index.ts';
import type { KubeObject } from '../core/api/types.ts';
import { FIELD_MANAGER } from '../core/rules/index.ts';
import { Discovery, InformerFactory, silentLogger, type ApiResource } from '../kube/index.ts';
import { configMap } from '../../test/support/sync-fakes.ts';
import { eventually } from '../../test/support/eventually.ts';
import { line, list, scripted, stream } from '../../test/support/scripted-server.ts';
import { MemoryApiServer, type ServedKind } from '../../test/support/sync-apiserver.ts';
import { trimCopyManagedFields, LocalCopies } from './copies.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] };
const NAMESPACES: ApiResource = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: [], subresources: [] };
const GVK = { group: '', version: 'v1', kind: 'ConfigMap' };

/** A copy rule r made from peer p1 of ns/`name`, with that uid. */
function copy(name: string, uid: string, rv: string): KubeObject {
  const c = configMap(name, { owner: 'p1', source: { clusterID: 'p1', group: '', kind: 'ConfigMap', namespace: 'ns', name, rule: 'r' }, uid, rv });
  return { ...c, metadata: { ...c.metadata, labels: { [LABELS.ownership]: 'p1' } } };
}

describe('LocalCopies', () => {
  it('counts a copy no more once a relist finds another object in its place', async () => {
    const srv = await scripted({
      list: [list('10', [copy('a', 'uid-1', '5')]), list('20', [copy('a', 'uid-2', '15')])],
      watch: [stream(line('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }))],
    });
    const stop = new AbortController();
    const factory = new InformerFactory({ cluster: 'local', rest: srv.rest, logger: silentLogger });
    factory.start(stop.signal);
    const copies = new LocalCopies({ factory, discovery: { resourceFor: () => Promise.resolve(CONFIGMAPS) }, perPeer: { maxObjects: 100, maxBytes: 2 ** 30 }, log: silentLogger });
    try {
      copies.acquire(GVK, undefined);
      await eventually('the relisted copy', () => copies.get(GVK, 'ns', 'a')?.metadata.uid === 'uid-2', 5_000);
      assert.equal(copies.budget.free('r', 'p1', 10), 9, 'only the copy there now counts');
    } finally {
      copies.close();
      stop.abort();
      srv.close();
    }
  });

  it('keeps counting the copies of a cluster-scoped kind while another watch of it stays open', async () => {
    const ns = (name: string): KubeObject => ({ ...copy(name, `uid-${name}`, '1'), apiVersion: 'v1', kind: 'Namespace', metadata: { ...copy(name, `uid-${name}`, '1').metadata, namespace: undefined } });
    const srv = await scripted({ list: [list('1', [ns('x')])], watch: [] });
    const stop = new AbortController();
    const factory = new InformerFactory({ cluster: 'local', rest: srv.rest, logger: silentLogger });
    factory.start(stop.signal);
    const copies = new LocalCopies({ factory, discovery: { resourceFor: () => Promise.resolve(NAMESPACES) }, perPeer: { maxObjects: 100, maxBytes: 2 ** 30 }, log: silentLogger });
    const gvk = { group: '', version: 'v1', kind: 'Namespace' };
    try {
      // Two rules watch the kind, one in every namespace and one in a named one: for a cluster-scoped kind both are one informer.
      copies.acquire(gvk, undefined);
      copies.acquire(gvk, ['only-here']);
      await eventually('the copies listed', () => copies.synced(gvk), 5_000);
      assert.equal(copies.budget.free('r', 'p1', 10), 9);
      copies.release(gvk, ['only-here']);
      assert.equal(copies.budget.free('r', 'p1', 10), 9, 'the watch left open still holds it');
      copies.release(gvk, undefined);
      assert.equal(copies.budget.free('r', 'p1', 10), 10, 'watched by none, it counts no more');
    } finally {
      copies.close();
      stop.abort();
      srv.close();
    }
  });
});

// ---------------------------------------------------------------- against an API server in memory

const SECRET_GVK = { group: '', version: 'v1', kind: 'Secret' };
const NAMESPACE_GVK = { group: '', version: 'v1', kind: 'Namespace' };
const WIDGET_GVK = { group: 'example.com', version: 'v1', kind: 'Widget' };
const WIDGETS: ServedKind = { ...WIDGET_GVK, resource: 'widgets', namespaced: true };
const WAIT_MS = 5_000;

/** Discovery that tells how often it was asked, and how often it found no such kind. */
class CountingDiscovery extends Discovery {
  asked = 0;
  missed = 0;

  override async resourceFor(gvk: { group: string; version: string; kind: string }): Promise<ApiResource> {
    this.asked++;
    try {
      return await super.resourceFor(gvk);
    } catch (err) {
      this.missed++;
      throw err;
    }
  }
}

/** A copy `name` in `namespace` that rule `rule` made from peer p1 (of any kind: `base` gives kind and data). */
function stored(name: string, o: { namespace?: string; rule?: string; source?: string; uid?: string; base?: Partial<KubeObject> } = {}): KubeObject {
  const id = { clusterID: 'p1', group: '', kind: o.base?.kind ?? 'ConfigMap', namespace: o.namespace ?? 'ns', name: o.source ?? name, rule: o.rule ?? 'r' };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    data: { k: 'v' },
    ...o.base,
    metadata: { name, namespace: o.namespace ?? 'ns', uid: o.uid ?? `uid-${name}`, labels: { [LABELS.ownership]: 'p1' }, annotations: { [ANNOTATIONS.ownership]: 'p1', [ANNOTATIONS.source]: formatSourceIdentity(id) } },
  };
}

/** A copy with no source record of ours, as upstream's controller makes it (renamed from `original` when given). */
function legacyCopy(name: string, original?: { namespace: string; name: string }): KubeObject {
  const labels: Record<string, string> = { [LABELS.ownership]: 'p1', ...(original ? { [LABELS.originalNamespace]: original.namespace, [LABELS.originalName]: original.name } : {}) };
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', labels, annotations: { [ANNOTATIONS.ownership]: 'p1' } }, data: { k: 'v' } };
}

interface Local {
  readonly srv: MemoryApiServer;
  readonly copies: LocalCopies;
  readonly discovery: CountingDiscovery;
  /** What copyChanged was told, as `seen name` / `deleted name`. */
  readonly events: string[];
  /** Where the budget said room was freed, as `rule|peer`. */
  readonly freed: string[];
}

/** Our cluster's API server with LocalCopies over its real informers and discovery; all closed after the test. */
async function local(t: TestContext, o: { kinds?: readonly ServedKind[]; maxObjects?: number } = {}): Promise<Local> {
  const srv = await MemoryApiServer.start(o.kinds);
  const stop = new AbortController();
  const discovery = new CountingDiscovery(srv.rest, { missTtlMs: 0 });
  const factory = new InformerFactory({ cluster: 'local', rest: srv.rest, discovery, logger: silentLogger });
  factory.start(stop.signal);
  const events: string[] = [];
  const freed: string[] = [];
  const copies = new LocalCopies({
    factory,
    discovery,
    perPeer: { maxObjects: o.maxObjects ?? 100, maxBytes: 2 ** 30 },
    log: silentLogger,
  });
  copies.listen({
    copyChanged: (c, deleted) => events.push(`${deleted ? 'deleted' : 'seen'} ${c.metadata.name ?? ''}`),
    budgetFreed: (rule, peer) => freed.push(`${rule}|${peer}`),
  });
  t.after(() => {
    copies.close();
    stop.abort();
    srv.close();
  });
  return { srv, copies, discovery, events, freed };
}

/** `local`, holding `objects`, its copies watching ConfigMaps in each of `scopes` (all namespaces unless told) and listed. */
async function watching(t: TestContext, objects: KubeObject[], o: { scopes?: (readonly string[] | undefined)[]; maxObjects?: number } = {}): Promise<Local> {
  const l = await local(t, o.maxObjects ? { maxObjects: o.maxObjects } : {});
  for (const obj of objects) l.srv.put(obj);
  for (const scope of o.scopes ?? [undefined]) l.copies.acquire(GVK, scope);
  await eventually('the copies listed', () => l.copies.synced(GVK), WAIT_MS);
  return l;
}

const names = (objects: KubeObject[]): string[] => objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`).sort();

/** The watches of a resource the server was asked for, by the path they were asked at. */
const watchPaths = (srv: MemoryApiServer, resource: string): string[] => srv.requests.filter((r) => r.query.get('watch') === '1' && r.path.endsWith(`/${resource}`)).map((r) => r.path);

describe('LocalCopies: what it holds', () => {
  it('caches only objects carrying the ownership label: local objects of the kind are never held', async (t) => {
    const { copies } = await watching(t, [stored('a'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mine', namespace: 'ns' }, data: { k: 'v' } }]);
    assert.deepEqual(names(copies.all(GVK)), ['ns/a']);
    assert.equal(copies.get(GVK, 'ns', 'mine'), undefined);
  });

  it('finds a copy by the source object it records, whatever the rule named it', async (t) => {
    const { copies } = await watching(t, [stored('renamed', { source: 'a' }), stored('b')]);
    const key = sourceObjectKey({ clusterID: 'p1', group: '', kind: 'ConfigMap', namespace: 'ns', name: 'a' });
    assert.deepEqual(names(copies.bySource(GVK, key)), ['ns/renamed']);
  });

  it('finds copies without a source record of ours by the original name their labels give, or else by their own name', async (t) => {
    const { copies } = await watching(t, [legacyCopy('renamed', { namespace: 'ns', name: 'a' }), legacyCopy('a-too'), stored('a')]);
    assert.deepEqual(names(copies.legacy(GVK, 'ns', 'a')), ['ns/renamed'], 'a copy recording its source is none of these');
    assert.deepEqual(names(copies.legacy(GVK, 'ns', 'a-too')), ['ns/a-too']);
  });

  it('reads a copy only from a watch that covers its namespace', async (t) => {
    const { copies } = await watching(t, [stored('a'), stored('b', { namespace: 'other' })], { scopes: [['ns']] });
    assert.ok(copies.get(GVK, 'ns', 'a'));
    assert.equal(copies.get(GVK, 'other', 'b'), undefined);
    assert.deepEqual(names(copies.all(GVK)), ['ns/a']);
  });

  it('lists a copy two overlapping watches see once', async (t) => {
    const { copies } = await watching(t, [stored('a')], { scopes: [undefined, ['ns']] });
    assert.deepEqual(names(copies.all(GVK)), ['ns/a']);
    assert.equal(copies.budget.free('r', 'p1', 10), 9, 'and counts it once');
  });

  it('keeps of a copy’s managedFields our entries and every other writer’s but their status entries', () => {
    const o = stored('a');
    o.metadata.managedFields = [
      { manager: FIELD_MANAGER, operation: 'Apply' },
      { manager: FIELD_MANAGER, operation: 'Apply', subresource: 'status' },
      { manager: 'kubectl', operation: 'Update' },
      { manager: 'kubectl', operation: 'Update', subresource: 'scale' },
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status' },
    ];
    assert.deepEqual(trimCopyManagedFields(o).metadata.managedFields, [
      { manager: FIELD_MANAGER, operation: 'Apply' },
      { manager: FIELD_MANAGER, operation: 'Apply', subresource: 'status' },
      { manager: 'kubectl', operation: 'Update' },
      { manager: 'kubectl', operation: 'Update', subresource: 'scale' },
    ]);
  });
});

describe('LocalCopies: what it tells', () => {
  it('tells of every copy added, changed and deleted', async (t) => {
    const { srv, events } = await watching(t, []);
    srv.put(stored('a'));
    srv.put({ ...stored('a'), data: { k: 'changed' } });
    srv.remove(stored('a'));
    await eventually('the deletion told', () => events.includes('deleted a'), WAIT_MS);
    assert.deepEqual(events, ['seen a', 'seen a', 'deleted a']);
  });

  it('tells nothing of a change of bookkeeping only (its resourceVersion or managedFields)', async (t) => {
    const { srv, copies, events } = await local(t);
    srv.put(stored('a'));
    copies.acquire(GVK, undefined);
    await eventually('the copy seen', () => events.length === 1, WAIT_MS);
    srv.put({ ...stored('a'), metadata: { ...stored('a').metadata, managedFields: [{ manager: 'someone', operation: 'Update' }] } });
    srv.put(stored('b'));
    // b comes after the bookkeeping change on the same watch: by the time it is told, that change was seen.
    await eventually('b told', () => events.includes('seen b'), WAIT_MS);
    assert.deepEqual(events, ['seen a', 'seen b']);
  });

  it('tells of the copy a relist finds in another’s place, and frees the place of the one replaced', async (t) => {
    const { srv, copies, events, freed } = await local(t);
    srv.put(stored('a', { uid: 'uid-1' }));
    copies.acquire(GVK, undefined);
    await eventually('the copy seen', () => copies.get(GVK, 'ns', 'a'), WAIT_MS);
    // The watch ends; before the relist the copy is deleted and made again, so only the relist shows it, under its new uid.
    srv.expireWatches('configmaps');
    srv.remove(stored('a'));
    srv.put(stored('a', { uid: 'uid-2' }));
    await eventually('the relisted copy', () => copies.get(GVK, 'ns', 'a')?.metadata.uid === 'uid-2', WAIT_MS);
    assert.deepEqual(events, ['seen a', 'seen a']);
    assert.deepEqual(freed, ['r|p1']);
    assert.equal(copies.budget.free('r', 'p1', 10), 9, 'only the copy there now counts');
  });
});

describe('LocalCopies: budget', () => {
  it('counts each copy against the rule and peer it records', async (t) => {
    const { copies } = await watching(t, [stored('a'), stored('b'), stored('c', { rule: 'r2' })]);
    assert.equal(copies.budget.free('r', 'p1', 10), 8);
    assert.equal(copies.budget.free('r2', 'p1', 10), 9);
    assert.equal(copies.budget.free('r', 'p2', 10), 10);
  });

  it('tells where room was freed when a copy is deleted', async (t) => {
    const { srv, copies, freed } = await watching(t, [stored('a')]);
    srv.remove(stored('a'));
    await eventually('the room freed', () => freed.length > 0, WAIT_MS);
    assert.deepEqual(freed, ['r|p1']);
    assert.equal(copies.budget.free('r', 'p1', 10), 10);
  });

  it('tells where room was freed when another rule takes a copy over, and counts it there', async (t) => {
    const { srv, copies, freed } = await watching(t, [stored('a')]);
    srv.put(stored('a', { rule: 'r2' }));
    await eventually('the room freed', () => freed.length > 0, WAIT_MS);
    assert.deepEqual(freed, ['r|p1']);
    assert.equal(copies.budget.free('r', 'p1', 10), 10);
    assert.equal(copies.budget.free('r2', 'p1', 10), 9);
  });

  it('says whether the copies from a peer leave room for another, against the per-peer limit', async (t) => {
    const { srv, copies } = await watching(t, [stored('a')], { maxObjects: 2 });
    assert.ok(copies.budget.roomFrom('p1'));
    srv.put(stored('b', { rule: 'r2' }));
    await eventually('the second copy counted', () => !copies.budget.roomFrom('p1'), WAIT_MS);
  });
});

describe('LocalCopies: watches', () => {
  it('shares one watch of a kind and namespace among its users, and stops it when the last one lets go', async (t) => {
    const { srv, copies } = await watching(t, [stored('a')], { scopes: [undefined, undefined] });
    await eventually('one watch open', () => srv.openWatches('configmaps') === 1, WAIT_MS);
    copies.release(GVK, undefined);
    assert.ok(copies.get(GVK, 'ns', 'a'), 'another user still holds it');
    assert.deepEqual(copies.kinds(), [GVK]);
    copies.release(GVK, undefined);
    assert.equal(copies.get(GVK, 'ns', 'a'), undefined);
    assert.deepEqual(copies.kinds(), []);
    assert.equal(copies.synced(GVK), false, 'a kind not watched is not synced');
    await eventually('the watch closed', () => srv.openWatches('configmaps') === 0, WAIT_MS);
  });

  it('names every kind watched once, however many namespaces it is watched in', async (t) => {
    const { copies } = await local(t);
    copies.acquire(GVK, ['a', 'b']);
    copies.acquire(SECRET_GVK, undefined);
    assert.deepEqual(copies.kinds(), [GVK, SECRET_GVK]);
  });

  it('is synced for a kind only once every watch of it has listed', async (t) => {
    const { srv, copies } = await local(t);
    copies.acquire(GVK, ['ns']);
    await eventually('the first watch listed', () => copies.synced(GVK), WAIT_MS);
    const listed = srv.hold('configmaps');
    copies.acquire(GVK, ['other']);
    await eventually('the second list asked', () => srv.requests.some((r) => r.path === '/api/v1/namespaces/other/configmaps'), WAIT_MS);
    assert.equal(copies.synced(GVK), false);
    listed();
    await eventually('both watches listed', () => copies.synced(GVK), WAIT_MS);
  });

  it('keeps counting, after one of two overlapping watches of a namespaced kind closes, the copies the other still sees', async (t) => {
    const { copies, freed } = await watching(t, [stored('a'), stored('b', { namespace: 'other' })], { scopes: [undefined, ['ns']] });
    assert.equal(copies.budget.free('r', 'p1', 10), 8);
    copies.release(GVK, ['ns']);
    assert.equal(copies.budget.free('r', 'p1', 10), 8, 'the watch of all namespaces still sees both');
    assert.deepEqual(freed, []);
    copies.acquire(GVK, ['ns']);
    await eventually('the namespace watched again', () => copies.synced(GVK), WAIT_MS);
    copies.release(GVK, undefined);
    assert.equal(copies.budget.free('r', 'p1', 10), 9, 'only the copy in ns is still watched');
    assert.deepEqual(freed, ['r|p1']);
    assert.equal(copies.get(GVK, 'other', 'b'), undefined);
  });

  it('watches a cluster-scoped kind across the cluster, whatever namespaces a rule named', async (t) => {
    const { srv, copies } = await local(t);
    srv.put(stored('x', { namespace: '', base: { kind: 'Namespace', data: undefined } }));
    copies.acquire(NAMESPACE_GVK, ['only-here']);
    await eventually('the copies listed', () => copies.synced(NAMESPACE_GVK), WAIT_MS);
    assert.deepEqual(watchPaths(srv, 'namespaces'), ['/api/v1/namespaces']);
    assert.ok(copies.get(NAMESPACE_GVK, undefined, 'x'));
  });

  it('stops every watch when closed', async (t) => {
    const { srv, copies } = await local(t);
    copies.acquire(GVK, ['a', 'b']);
    copies.acquire(SECRET_GVK, undefined);
    await eventually('the watches open', () => srv.openWatches('configmaps') === 2 && srv.openWatches('secrets') === 1, WAIT_MS);
    copies.close();
    assert.deepEqual(copies.kinds(), []);
    await eventually('the watches closed', () => srv.openWatches('configmaps') + srv.openWatches('secrets') === 0, WAIT_MS);
  });
});

describe('LocalCopies: kinds not served yet', () => {
  it('keeps looking for a kind not served yet, and watches it once it is', async (t) => {
    const { srv, copies, discovery } = await local(t);
    copies.acquire(WIDGET_GVK, undefined);
    await eventually('the kind found missing', () => discovery.missed > 0, WAIT_MS);
    assert.equal(copies.synced(WIDGET_GVK), false);
    srv.serve(WIDGETS);
    srv.put({ ...stored('w'), apiVersion: 'example.com/v1', kind: 'Widget' });
    await eventually('the widgets listed', () => copies.get(WIDGET_GVK, 'ns', 'w'), WAIT_MS);
  });

  it('looks again at once when told a kind may be served now, instead of at its next retry', async (t) => {
    const { srv, copies, discovery } = await local(t);
    copies.acquire(WIDGET_GVK, undefined);
    await eventually('the kind found missing', () => discovery.missed > 0, WAIT_MS);
    srv.serve(WIDGETS);
    copies.retry();
    // Its own retry comes a second at the earliest.
    await eventually('asked again', () => discovery.asked > 1, 800);
    await eventually('the widgets watched', () => copies.synced(WIDGET_GVK), WAIT_MS);
  });
});

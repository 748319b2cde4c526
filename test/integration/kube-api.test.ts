// The REST client, discovery, informer factory, controller loop and event recorder against a real
// apiserver: server-side apply and status writes on a CRD with a status subresource, a CRD that
// appears after its informer was requested, Event aggregation, and watches leaving a connection
// the API server sent GOAWAY on after a 401.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClusterConfig } from '../../src/kube/config.ts';
import { Controller } from '../../src/kube/controller.ts';
import { Discovery, NoKindMatchError } from '../../src/kube/discovery.ts';
import { ApiError, isConflict, isNotFound } from '../../src/kube/errors.ts';
import { EVENTS, EventRecorder, type CoreEvent } from '../../src/kube/events.ts';
import { InformerFactory } from '../../src/kube/informer-factory.ts';
import { Informer } from '../../src/kube/informer.ts';
import { RestClient } from '../../src/kube/rest.ts';
import type { KubeObject, ResourceRef } from '../../src/kube/types.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { eventually } from '../support/eventually.ts';
import { assertCacheMatchesServer } from '../support/kube-helpers.ts';

const CRDS: ResourceRef = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
const CM: ResourceRef = { group: '', version: 'v1', resource: 'configmaps' };
const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };

interface Widget extends KubeObject {
  spec?: { size?: number; color?: string };
  status?: { phase?: string; observed?: number };
}

function crd(group: string, kind: string, plural: string): KubeObject {
  const object = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: object, status: object } } },
        },
      ],
    },
  };
}

describe('kube api', () => {
  let sandbox: Sandbox;
  let rest: RestClient;
  let discovery: Discovery;
  const ac = new AbortController();

  before(async () => {
    sandbox = await startSandbox({ clusters: 1, controllerManager: false });
    rest = await RestClient.fromConfig(ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig));
    discovery = new Discovery(rest, { missTtlMs: 500 });
  });
  after(async () => {
    ac.abort();
    rest?.close();
    await sandbox?.stop();
  });

  async function installCrd(group: string, kind: string, plural: string): Promise<ResourceRef> {
    await rest.create(CRDS, undefined, crd(group, kind, plural));
    await eventually(`${plural}.${group} established`, async () => {
      const c = await rest.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(CRDS, undefined, `${plural}.${group}`);
      return c.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True') ?? false;
    });
    return { group, version: 'v1', resource: plural };
  }

  it('maps kinds through discovery, not pluralisation', async () => {
    const ep = await discovery.resourceFor({ group: '', version: 'v1', kind: 'Endpoints' });
    assert.equal(ep.resource, 'endpoints');
    const np = await discovery.resourceFor({ group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy' });
    assert.equal(np.resource, 'networkpolicies');
    assert.equal(np.namespaced, true);
    const ns = await discovery.resourceFor({ group: '', version: 'v1', kind: 'Namespace' });
    assert.equal(ns.namespaced, false);
    assert.ok(ns.subresources.includes('status'));
    assert.ok(ns.verbs.includes('watch'));
    await assert.rejects(discovery.resourceFor({ group: 'nope.io', version: 'v1', kind: 'Nope' }), NoKindMatchError);
  });

  it('server-side applies with field ownership and writes status through the subresource', async () => {
    const widgets = await installCrd('test.kube.io', 'Widget', 'widgets');
    await eventually('Widget in discovery', async () => (await discovery.resourceFor({ group: 'test.kube.io', version: 'v1', kind: 'Widget' }).catch(() => undefined)) !== undefined);
    const w = (spec: Widget['spec']): Widget => ({ apiVersion: 'test.kube.io/v1', kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec });

    const created = await rest.apply<Widget>(widgets, 'default', w({ size: 1 }), { fieldManager: 'alice' });
    assert.equal(created.spec?.size, 1);
    // Same field, other manager: a conflict unless forced.
    const conflict = await rest.apply(widgets, 'default', w({ size: 2 }), { fieldManager: 'bob' }).catch((e: unknown) => e);
    assert.ok(conflict instanceof ApiError && isConflict(conflict), String(conflict));
    const forced = await rest.apply<Widget>(widgets, 'default', w({ size: 2, color: 'red' }), { fieldManager: 'bob', force: true });
    assert.equal(forced.spec?.size, 2);
    // Forcing took spec.size from alice, who owned nothing else.
    const managers = (forced.metadata.managedFields as { manager: string }[]).map((m) => m.manager);
    assert.deepEqual(managers, ['bob']);

    // Status: PUT /status changes status only; a status in a main-resource write is ignored.
    const withStatus = await rest.updateStatus<Widget>(widgets, 'default', { ...forced, spec: { size: 99 }, status: { phase: 'Ready' } });
    assert.equal(withStatus.status?.phase, 'Ready');
    assert.equal(withStatus.spec?.size, 2);
    const mainWrite = await rest.update<Widget>(widgets, 'default', { ...withStatus, spec: { size: 2, color: 'blue' }, status: { phase: 'Ignored' } });
    assert.equal(mainWrite.status?.phase, 'Ready');
    assert.equal(mainWrite.spec?.color, 'blue');
    // A stale resourceVersion is refused.
    assert.ok(isConflict(await rest.update(widgets, 'default', withStatus).catch((e: unknown) => e)));
    const patched = await rest.patchStatus<Widget>(widgets, 'default', 'w1', 'merge', { status: { observed: 3 } });
    assert.deepEqual(patched.status, { phase: 'Ready', observed: 3 });
    const applied = await rest.patchStatus<Widget>(widgets, 'default', 'w1', 'apply', { apiVersion: 'test.kube.io/v1', kind: 'Widget', metadata: { name: 'w1' }, status: { phase: 'Done' } }, { fieldManager: 'status-writer', force: true });
    assert.equal(applied.status?.phase, 'Done');
    assert.equal((await rest.getStatus<Widget>(widgets, 'default', 'w1')).status?.phase, 'Done');

    // Delete with a uid precondition: a wrong uid is refused, the right one works.
    const wrongUid = await rest.delete(widgets, 'default', 'w1', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }).catch((e: unknown) => e);
    assert.ok(isConflict(wrongUid), String(wrongUid));
    await rest.delete(widgets, 'default', 'w1', { preconditions: { uid: applied.metadata.uid! }, propagationPolicy: 'Background' });
    assert.ok(isNotFound(await rest.get(widgets, 'default', 'w1').catch((e: unknown) => e)));
    const version = JSON.parse((await rest.getRaw('/version')).body.toString()) as { gitVersion: string };
    assert.match(version.gitVersion, /^v1\./);
  });

  it('picks up a CRD created after its informer was requested, and reconciles its objects', async () => {
    const factory = new InformerFactory({ cluster: 'c1', rest, discovery });
    const scope = { group: 'late.kube.io', version: 'v1', kind: 'Gadget', namespace: 'default' };
    const informer = factory.forKind<Widget>(scope);
    assert.equal(factory.forKind(scope), informer, 'one shared informer per scope');
    const reconciled: string[] = [];
    const controller = new Controller({
      name: 'gadgets',
      workers: 2,
      reconcile: async (key) => {
        reconciled.push(key);
        if (key === 'default/flaky' && reconciled.filter((k) => k === key).length < 3) throw new Error('transient');
      },
    });
    controller.watch(informer);
    factory.start(ac.signal);
    const controllerDone = controller.start(ac.signal, [informer]);
    // It has looked for the kind and failed: past the point where it could have synced.
    await eventually('the informer to fail to resolve Gadget', () => informer.lastError !== undefined, 30_000);
    assert.equal(informer.hasSynced(), false, 'no such kind yet');

    const gadgets = await installCrd('late.kube.io', 'Gadget', 'gadgets');
    for (const name of ['g1', 'flaky']) await rest.create(gadgets, 'default', { apiVersion: 'late.kube.io/v1', kind: 'Gadget', metadata: { name } });
    assert.equal(await informer.waitForSync(AbortSignal.timeout(60_000)), true);
    await eventually('both gadgets cached', () => informer.store.size === 2, 30_000);
    await eventually('flaky retried until it succeeded', () => reconciled.filter((k) => k === 'default/flaky').length === 3, 30_000);
    assert.ok(reconciled.includes('default/g1'));
    ac.abort();
    await controllerDone;
  });

  it('a 401 on a connection that carries watches: the server says GOAWAY, the watches move to a new connection and the old one closes, their caches missing nothing', async () => {
    const base = await ClusterConfig.fromString(sandbox.clusters[0]!.kubeconfig).connection();
    let badTokenNext = false;
    const client = new RestClient({
      ...base,
      authHeaders: async () => {
        if (!badTokenNext) return base.authHeaders();
        badTokenNext = false;
        return { Authorization: 'Bearer not-a-token' };
      },
    });
    const ns = 'goaway-401';
    await rest.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const signal = new AbortController();
    const informers = [undefined, 'app=a'].map((labelSelector) => new Informer({ rest: client, resource: CM, namespace: ns, labelSelector }));
    const running = informers.map((inf) => inf.start(signal.signal));
    try {
      for (const inf of informers) assert.equal(await inf.waitForSync(AbortSignal.timeout(30_000)), true);
      assert.deepEqual([client.connectionStats().open, client.connectionStats().opened], [1, 1]);
      // Answered 401, then sent again with the right token on a new connection: the API server
      // will not leave a connection that carried a 401 open on HTTP/2.
      badTokenNext = true;
      await assert.rejects(client.get(CM, ns, 'absent'), (err) => isNotFound(err));
      for (let i = 0; i < 5; i++) await rest.create(CM, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: i % 2 ? 'a' : 'b' } } });
      await eventually('the old connection to close, its watches gone to the new one', () => client.connectionStats().open === 1 && client.connectionStats().draining === 0, 10_000);
      assert.ok(client.connectionStats().goaways >= 1);
      assert.equal(client.connectionStats().opened, 2);
      await assertCacheMatchesServer(informers[0]!, rest, CM, ns);
      await eventually('the selected cache to hold the two of app=a', () => informers[1]!.store.size === 2, 10_000);
    } finally {
      signal.abort();
      await Promise.all(running);
      client.close();
    }
  });

  it('aggregates repeated events into one Event with a count', async () => {
    const signal = new AbortController();
    const recorder = new EventRecorder({ rest, component: 'cluster-controller' });
    const running = recorder.start(signal.signal);
    const cm = await rest.create<KubeObject>(CM, 'default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'evented' } });
    for (let i = 0; i < 3; i++) recorder.event(cm, 'Warning', 'SyncFailed', 'peer unreachable');
    recorder.event(cm, 'Normal', 'Synced', 'ok');
    try {
      await eventually('events written', async () => {
        const list = await rest.list<CoreEvent>(EVENTS, { namespace: 'default', fieldSelector: 'involvedObject.name=evented' });
        const failed = list.items.filter((e) => e.reason === 'SyncFailed');
        return failed.length === 1 && failed[0]!.count === 3 && list.items.some((e) => e.reason === 'Synced');
      });
      const ev = (await rest.list<CoreEvent>(EVENTS, { namespace: 'default', fieldSelector: 'involvedObject.name=evented,reason=SyncFailed' })).items[0]!;
      assert.equal(ev.type, 'Warning');
      assert.equal(ev.source.component, 'cluster-controller');
      assert.equal(ev.involvedObject.uid, cm.metadata.uid);
    } finally {
      signal.abort();
      await running;
    }
  });
});

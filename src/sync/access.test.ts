import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { ApiResource } from '../kube/index.ts';
import type { ResourceAttributes } from '../kube/rest.ts';
import { MemoryApiServer } from '../../test/support/sync-apiserver.ts';
import { firstDenied } from './access.ts';

const CONFIGMAPS: ApiResource = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [], subresources: [] };
const WIDGETS: ApiResource = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true, verbs: [], subresources: [] };
const CLUSTERS: ApiResource = { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', resource: 'clusters', kind: 'Cluster', namespaced: false, verbs: [], subresources: [] };
const READ = ['get', 'list', 'watch'];

/** A server answering access reviews as `allow` says, closed after the test. */
async function server(t: TestContext, allow: (a: ResourceAttributes) => boolean = () => true): Promise<MemoryApiServer> {
  const srv = await MemoryApiServer.start();
  t.after(() => srv.close());
  srv.allow = allow;
  return srv;
}

/** What the server was asked, as `verb resource.group in namespace`. */
function asked(srv: MemoryApiServer): string[] {
  return srv.requests
    .filter((r) => r.method === 'POST')
    .map((r) => {
      const a = (r.body as { spec: { resourceAttributes: ResourceAttributes } }).spec.resourceAttributes;
      return `${a.verb} ${a.resource}${a.group ? `.${a.group}` : ''}/${a.version} in ${a.namespace ?? '(all)'}`;
    });
}

const signal = (): AbortSignal => new AbortController().signal;

describe('firstDenied', () => {
  it('asks about every verb cluster-wide when no namespaces are given, and finds nothing denied when all are allowed', async (t) => {
    const srv = await server(t);
    assert.equal(await firstDenied(srv.rest, CONFIGMAPS, READ, undefined, signal()), undefined);
    assert.deepEqual(asked(srv), ['get configmaps/v1 in (all)', 'list configmaps/v1 in (all)', 'watch configmaps/v1 in (all)']);
  });

  it('names the first verb denied with its resource and group, and asks nothing after it', async (t) => {
    const srv = await server(t, (a) => a.verb !== 'list');
    assert.equal(await firstDenied(srv.rest, WIDGETS, READ, undefined, signal()), 'list widgets.example.com cluster-wide');
    assert.deepEqual(asked(srv), ['get widgets.example.com/v1 in (all)', 'list widgets.example.com/v1 in (all)']);
  });

  it('checks a namespaced resource in each namespace given, and names the namespace where it is denied', async (t) => {
    const srv = await server(t, (a) => !(a.namespace === 'b' && a.verb === 'watch'));
    assert.equal(await firstDenied(srv.rest, CONFIGMAPS, READ, ['a', 'b'], signal()), 'watch configmaps in namespace b');
    assert.deepEqual(asked(srv), ['get configmaps/v1 in a', 'list configmaps/v1 in a', 'watch configmaps/v1 in a', 'get configmaps/v1 in b', 'list configmaps/v1 in b', 'watch configmaps/v1 in b']);
  });

  it('passes a reader allowed only in the namespaces given', async (t) => {
    const srv = await server(t, (a) => a.namespace === 'a');
    assert.equal(await firstDenied(srv.rest, CONFIGMAPS, READ, ['a'], signal()), undefined);
  });

  it('checks a cluster-scoped resource cluster-wide, whatever namespaces are given', async (t) => {
    const srv = await server(t, (a) => a.namespace === undefined);
    assert.equal(await firstDenied(srv.rest, CLUSTERS, ['get'], ['a', 'b'], signal()), undefined);
    assert.deepEqual(asked(srv), ['get clusters.clusterregistry.k8s.cisco.com/v1alpha1 in (all)']);
  });

  it('asks nothing and fails once its signal has aborted', async (t) => {
    const srv = await server(t);
    const stop = new AbortController();
    stop.abort();
    await assert.rejects(firstDenied(srv.rest, CONFIGMAPS, READ, undefined, stop.signal));
    assert.deepEqual(asked(srv), []);
  });
});

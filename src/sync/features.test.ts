import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { ClusterFeature } from '../core/api/types.ts';
import { CacheBudget, InformerFactory, silentLogger } from '../kube/index.ts';
import { eventually } from '../../test/support/eventually.ts';
import { MemoryApiServer } from '../../test/support/sync-apiserver.ts';
import { PeerFeatures } from './features.ts';

function feature(name: string, featureName: string, labels?: Record<string, string>): ClusterFeature {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name, ...(labels ? { labels } : {}) }, spec: { featureName } };
}

/** A peer's features over a real informer of an in-memory server; all closed after the test. */
async function setup(t: TestContext, o: { maxObjects?: number } = {}): Promise<{ srv: MemoryApiServer; features: PeerFeatures; start: () => void }> {
  const srv = await MemoryApiServer.start();
  const stop = new AbortController();
  const budget = o.maxObjects === undefined ? undefined : new CacheBudget({ limits: { maxObjects: o.maxObjects, maxBytes: 2 ** 30 } });
  const informers = new InformerFactory({ cluster: 'p1', rest: srv.rest, logger: silentLogger, budgetFor: () => budget });
  const features = new PeerFeatures(informers);
  t.after(() => {
    features.close();
    stop.abort();
    srv.close();
  });
  return { srv, features, start: () => informers.start(stop.signal) };
}

const WAIT_MS = 10_000;

describe('PeerFeatures', () => {
  it("knows no features until the peer's ClusterFeatures are listed", async (t) => {
    const { srv, features, start } = await setup(t);
    srv.put(feature('f', 'istio'));
    const release = srv.hold('clusterfeatures');
    start();
    await eventually('the list asked for', () => srv.requests.some((r) => r.path.endsWith('/clusterfeatures')), WAIT_MS);
    assert.equal(features.advertised(), undefined);
    release();
    await eventually('the features known', () => features.advertised() !== undefined, WAIT_MS);
  });

  it('advertises each ClusterFeature as its feature name and labels', async (t) => {
    const { srv, features, start } = await setup(t);
    srv.put(feature('a', 'istio', { version: '1.20' }));
    srv.put(feature('b', 'vault'));
    start();
    const advertised = await eventually('the features known', () => features.advertised(), WAIT_MS);
    assert.deepEqual(
      advertised.sort((x, y) => x.featureName.localeCompare(y.featureName)),
      [
        { featureName: 'istio', labels: { version: '1.20' } },
        { featureName: 'vault', labels: {} },
      ],
    );
  });

  it('tells its listeners once the features are listed, and on each feature added, relabelled or removed', async (t) => {
    const { srv, features, start } = await setup(t);
    let told = 0;
    features.subscribe(() => told++);
    start();
    await eventually('told of the listing', () => told === 1, WAIT_MS);
    const f = srv.put(feature('a', 'istio'));
    await eventually('told of the addition', () => told === 2, WAIT_MS);
    srv.put({ ...f, metadata: { ...f.metadata, labels: { version: '2' } } });
    await eventually('told of the new labels', () => told === 3, WAIT_MS);
    srv.remove(f);
    await eventually('told of the removal', () => told === 4 && features.advertised()?.length === 0, WAIT_MS);
  });

  it('does not tell its listeners of a change that leaves feature names and labels as they were', async (t) => {
    const { srv, features, start } = await setup(t);
    const a = srv.put(feature('a', 'istio'));
    const b = srv.put(feature('b', 'vault'));
    let told = 0;
    features.subscribe(() => told++);
    start();
    await eventually('told of the listing', () => told === 1, WAIT_MS);
    srv.put({ ...a, metadata: { ...a.metadata, annotations: { note: 'x' } } });
    srv.put({ ...b, spec: { featureName: 'consul' } });
    await eventually('told of the renamed feature', () => told >= 2, WAIT_MS);
    assert.equal(told, 2, 'the annotation alone told nothing');
  });

  it('tells a listener nothing once it unsubscribed', async (t) => {
    const { srv, features, start } = await setup(t);
    let gone = 0;
    let staying = 0;
    features.subscribe(() => gone++)();
    features.subscribe(() => staying++);
    start();
    await eventually('the other listener told of the listing', () => staying === 1, WAIT_MS);
    srv.put(feature('a', 'istio'));
    await eventually('the other listener told of the addition', () => staying === 2, WAIT_MS);
    assert.equal(gone, 0);
  });

  it('knows no features while its cache lacks one its budget refused', async (t) => {
    const { srv, features, start } = await setup(t, { maxObjects: 1 });
    srv.put(feature('a', 'istio'));
    start();
    await eventually('the features known', () => features.advertised()?.length === 1, WAIT_MS);
    srv.put(feature('b', 'vault'));
    await eventually('the features unknown', () => features.advertised() === undefined, WAIT_MS);
  });

  it('stops its watch on the peer when closed', async (t) => {
    const { srv, features, start } = await setup(t);
    start();
    await eventually('watching', () => srv.openWatches('clusterfeatures') === 1, WAIT_MS);
    features.close();
    await eventually('no longer watching', () => srv.openWatches('clusterfeatures') === 0, WAIT_MS);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster } from '../api/types.ts';
import { CLUSTER_ID_PROPERTY, clusterIDMismatch, clusterIDProperty, clusterProfileChanged, clusterProfileFor } from './inventory.ts';

const cluster = (status: Cluster['status']): Cluster => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name: 'east' }, spec: { clusterID: 'uid-east' }, ...(status ? { status } : {}) });

describe('SIG-Multicluster inventory', () => {
  it('describes a Ready member as a healthy ClusterProfile with its version and properties', () => {
    const p = clusterProfileFor(cluster({ state: 'Ready', type: 'Peer', version: 'v1.36.3', provider: 'amazon', distribution: 'EKS', locality: { region: 'eu-west-1' }, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] }), 'ns');
    assert.deepEqual(p.metadata, { name: 'east', namespace: 'ns', labels: { 'x-k8s.io/cluster-manager': 'cluster-registry' } });
    assert.deepEqual(p.spec, { displayName: 'east', clusterManager: { name: 'cluster-registry' } });
    assert.deepEqual(p.status?.conditions.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime]), [['ControlPlaneHealthy', 'True', 'ClusterReady', '2026-01-01T00:00:00Z']]);
    assert.deepEqual(p.status?.version, { kubernetes: 'v1.36.3' });
    assert.deepEqual(Object.fromEntries(p.status?.properties.map((x) => [x.name, x.value]) ?? []), {
      [CLUSTER_ID_PROPERTY]: 'uid-east',
      'cluster-registry.k8s.cisco.com/type': 'Peer',
      'cluster-registry.k8s.cisco.com/state': 'Ready',
      'cluster-registry.k8s.cisco.com/provider': 'amazon',
      'cluster-registry.k8s.cisco.com/distribution': 'EKS',
      'topology.kubernetes.io/region': 'eu-west-1',
    });
  });

  it('says why a member is not healthy, and Unknown before its first check', () => {
    const failed = clusterProfileFor(cluster({ state: 'Failed', message: 'dial tcp: connection refused' }), 'ns').status?.conditions[0];
    assert.deepEqual([failed?.status, failed?.reason, failed?.message], ['False', 'ClusterFailed', 'dial tcp: connection refused']);
    const unchecked = clusterProfileFor(cluster(undefined), 'ns');
    assert.deepEqual([unchecked.status?.conditions[0]?.status, unchecked.status?.version], ['Unknown', undefined]);
    assert.deepEqual(unchecked.status?.properties.map((x) => x.name), [CLUSTER_ID_PROPERTY], 'no empty property: the API requires a value');
    const long = clusterProfileFor(cluster({ state: 'Ready', provider: 'x'.repeat(5000) }), 'ns');
    assert.equal(long.status?.properties.find((x) => x.name.endsWith('/provider'))?.value.length, 1024, "a peer's text is cut to what the API takes");
  });

  it('is owned by its Cluster, and keeps the conditions and properties other writers keep', () => {
    const c = { ...cluster({ state: 'Ready' }), metadata: { name: 'east', uid: 'cluster-uid' } };
    const existing = {
      conditions: [
        { type: 'ControlPlaneHealthy', status: 'False' as const, reason: 'Old', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'Joined', status: 'True' as const, reason: 'Theirs', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
      ],
      properties: [
        { name: 'example.com/theirs', value: 'kept' },
        { name: CLUSTER_ID_PROPERTY, value: 'stale' },
      ],
    };
    const p = clusterProfileFor(c, 'ns', existing);
    assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', name: 'east', uid: 'cluster-uid' }]);
    assert.deepEqual(p.status?.conditions.map((x) => [x.type, x.status]), [['Joined', 'True'], ['ControlPlaneHealthy', 'True']]);
    assert.deepEqual(p.status?.properties.map((x) => [x.name, x.value]).slice(0, 2), [['example.com/theirs', 'kept'], [CLUSTER_ID_PROPERTY, 'uid-east']]);
  });

  it('changes a stored profile only when its spec, our label or its status differ', () => {
    const wanted = clusterProfileFor(cluster({ state: 'Ready' }), 'ns');
    const stored = { ...structuredClone(wanted), metadata: { ...wanted.metadata, uid: 'u', resourceVersion: '5' } };
    assert.equal(clusterProfileChanged(stored, wanted), false);
    assert.equal(clusterProfileChanged({ ...stored, status: undefined }, wanted), true);
    assert.equal(clusterProfileChanged({ ...stored, metadata: { ...stored.metadata, labels: {} } }, wanted), true);
    assert.equal(clusterProfileChanged(stored, clusterProfileFor(cluster({ state: 'Failed' }), 'ns')), true);
  });

  it('publishes the ID under the name KEP-2149 gives it, and reports another value without quoting it at length', () => {
    assert.deepEqual(clusterIDProperty('uid'), { apiVersion: 'about.k8s.io/v1alpha1', kind: 'ClusterProperty', metadata: { name: 'cluster.clusterset.k8s.io' }, spec: { value: 'uid' } });
    assert.equal(clusterIDMismatch(clusterIDProperty('uid'), 'uid'), undefined);
    const message = clusterIDMismatch(clusterIDProperty('y'.repeat(10_000)), 'uid') ?? '';
    assert.ok(message.length < 500, 'bounded');
    assert.match(message, /kube-system UID uid, which it keeps$/);
  });
});

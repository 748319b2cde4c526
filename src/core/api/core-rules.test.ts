import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreClusterFeature, coreResourceSyncRules } from './core-rules.ts';

describe('core resources', () => {
  it('core ClusterFeature', () => {
    assert.deepEqual(coreClusterFeature(), {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'ClusterFeature',
      metadata: {
        name: 'cluster-registry-core-resources',
        labels: { 'cluster-registry-controller.k8s.cisco.com/core-sync-resource': 'true' },
      },
      spec: { featureName: 'cluster-registry-core-resources-source' },
    });
  });

  it('three core rules, as Go serialises them', () => {
    const rules = coreResourceSyncRules('my-ns');
    const featureMatch = [{ featureName: 'cluster-registry-core-resources-source' }];
    assert.deepEqual(
      rules.map((r) => [r.metadata?.name, r.metadata?.labels, r.spec]),
      [
        [
          'cluster-registry-core-resource-clusters-sink',
          { 'cluster-registry-controller.k8s.cisco.com/core-sync-resource': 'true' },
          {
            clusterFeatureMatch: featureMatch,
            groupVersionKind: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' },
            rules: [{ mutations: {} }],
          },
        ],
        [
          'cluster-registry-core-resource-cluster-secrets-sink',
          { 'cluster-registry-controller.k8s.cisco.com/core-sync-resource': 'true' },
          {
            clusterFeatureMatch: featureMatch,
            groupVersionKind: { version: 'v1', kind: 'Secret' },
            rules: [
              {
                match: [{ content: [{ key: 'type', value: 'k8s.cisco.com/cluster-registry-secret' }], namespaces: ['my-ns'], objectKey: {} }],
                mutations: {},
              },
            ],
          },
        ],
        [
          'cluster-registry-core-resource-syncrules-sink',
          { 'cluster-registry-controller.k8s.cisco.com/core-sync-resource': 'true' },
          {
            clusterFeatureMatch: featureMatch,
            groupVersionKind: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'ResourceSyncRule' },
            rules: [{ mutations: {} }],
          },
        ],
      ],
    );
    for (const r of rules) assert.equal(r.kind, 'ResourceSyncRule');
  });

  it('returns fresh objects each call (callers may mutate them)', () => {
    const a = coreResourceSyncRules('ns');
    a[0]!.metadata.labels!.x = 'y';
    assert.equal(coreResourceSyncRules('ns')[0]!.metadata.labels!.x, undefined);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../api/keys.ts';
import type { Cluster, KubeObject, ResourceSyncRule } from '../api/types.ts';
import { renderRule } from './render.ts';

function cluster(name: string, clusterID: string): Cluster {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name }, spec: { clusterID } };
}

function rule(spec: ResourceSyncRule['spec']): ResourceSyncRule {
  return { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'r' }, spec };
}

const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'test-service', namespace: 'ns', labels: { sync: 'yes' } }, spec: { ports: [] } };
const base = { object: service, cluster: cluster('demo-cluster-1', 'peer-uid'), localCluster: cluster('local', 'local-uid') };

describe('renderRule', () => {
  it('previews the copy of a matching object (upstream template test case)', () => {
    const res = renderRule({
      ...base,
      rule: rule({
        groupVersionKind: { version: 'v1', kind: 'Service' },
        rules: [{ match: [{ labels: [{ matchLabels: { sync: 'yes' } }] }], mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ printf "%s-%s" .Object.GetName .Cluster.GetName }}' }] } }],
      }),
    });
    assert.deepEqual(res.errors, []);
    assert.equal(res.matched, true);
    assert.equal(res.matchedRules.length, 1);
    assert.equal(res.copy?.metadata?.name, 'test-service-demo-cluster-1');
    assert.equal(res.copy?.metadata?.annotations?.[ANNOTATIONS.ownership], 'peer-uid');
  });

  it('reports no copy when nothing matches', () => {
    const res = renderRule({ ...base, rule: rule({ groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{}] }) });
    assert.deepEqual(res, { matched: false, matchedRules: [], errors: [] });
  });

  it('returns validation errors with their locations', () => {
    const res = renderRule({ ...base, rule: rule({ groupVersionKind: { version: 'v1', kind: 'Service' }, rules: [{ match: [{ labels: [{ matchExpressions: [{ key: 'a', operator: 'Nope' }] }] }] }] }) });
    assert.equal(res.matched, false);
    assert.equal(res.copy, undefined);
    assert.equal(res.errors.length, 1);
    assert.match(res.errors[0] ?? '', /^spec\.rules\[0\]\.match\[0\]\.labels\[0\]: /);
  });

  it('returns override errors located in the rule', () => {
    const res = renderRule({
      ...base,
      rule: rule({ groupVersionKind: { version: 'v1', kind: 'Service' }, rules: [{}, { mutations: { overrides: [{ type: 'replace', path: '/nope/x', value: '1' }] } }] }),
    });
    assert.equal(res.matched, true);
    assert.equal(res.copy, undefined);
    assert.match(res.errors[0] ?? '', /^spec\.rules\[1\]\.mutations\.overrides\[0\]: could not apply patch op/);
  });

  it('uses localClusterID when given', () => {
    const res = renderRule({
      ...base,
      localClusterID: 'peer-uid',
      rule: rule({ groupVersionKind: { version: 'v1', kind: 'Service' }, rules: [{ mutations: { overrides: [{ type: 'replace', path: '/metadata/name', value: '{{ .LocalCluster.GetName }}' }] } }] }),
    });
    assert.equal(res.copy?.metadata?.name, 'demo-cluster-1');
  });
});

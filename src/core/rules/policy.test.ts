import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../api/keys.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { copyPolicy } from './policy.ts';

const L = 'local-id';
const P = 'peer-id';
const owned = (o: KubeObject, owner = P): KubeObject => ({ ...o, metadata: { ...o.metadata, annotations: { [ANNOTATIONS.ownership]: owner } } });
const cluster = (name: string, id: string, secret?: string): Cluster => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name }, spec: { clusterID: id, ...(secret ? { authInfo: { secretRef: { name: secret, namespace: 'cr' } } } : {}) } });
const facts = { localClusterID: L, clusters: [cluster('me', L, 'me'), cluster('peer', P, 'peer')] };
const credentials = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'cr' }, type: 'k8s.cisco.com/cluster-registry-secret' });

describe('copyPolicy', () => {
  it('allows ordinary objects', () => {
    assert.deepEqual(copyPolicy(owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'apps' } }), facts), { allowed: true });
  });
  it('refuses kinds that grant rights or change the control plane, and the system namespaces', () => {
    for (const [apiVersion, kind] of [['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'], ['rbac.authorization.k8s.io/v1', 'Role'], ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'], ['apiregistration.k8s.io/v1', 'APIService'], ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'], ['certificates.k8s.io/v1', 'CertificateSigningRequest'], ['coordination.k8s.io/v1', 'Lease']]) {
      assert.equal(copyPolicy(owned({ apiVersion, kind, metadata: { name: 'x' } }), facts).allowed, false, kind);
    }
    assert.equal(copyPolicy(owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'kube-system' } }), facts).allowed, false);
  });
  it('refuses Secrets that mint or carry cluster credentials', () => {
    for (const type of ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token']) {
      assert.equal(copyPolicy(owned({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'apps' }, type }), facts).allowed, false, type);
    }
  });
  it('takes a Cluster only from the cluster it describes', () => {
    assert.equal(copyPolicy(owned(cluster('peer', P)), facts).allowed, true);
    assert.equal(copyPolicy(owned(cluster('someone', 'other-id')), facts).allowed, false, 'owned by a cluster it does not describe');
    assert.equal(copyPolicy(owned({ ...cluster('empty', ''), spec: {} }), facts).allowed, false);
  });
  it('takes credentials only for the cluster whose Cluster names them, never over our own', () => {
    assert.equal(copyPolicy(owned(credentials('peer')), facts).allowed, true);
    assert.equal(copyPolicy(owned(credentials('me')), facts).allowed, false);
    const stranger = copyPolicy(owned(credentials('peer'), 'other-id'), facts);
    assert.deepEqual(stranger.allowed === false && stranger.untilRegistryChanges, true);
    assert.equal(copyPolicy(owned(credentials('not-named')), facts).allowed, false);
  });
});

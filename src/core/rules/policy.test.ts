import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../api/keys.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { copyPolicy, credentialsInUse } from './policy.ts';

const L = 'local-id';
const P = 'peer-id';
const owned = (o: KubeObject, owner = P): KubeObject => ({ ...o, metadata: { ...o.metadata, annotations: { [ANNOTATIONS.ownership]: owner } } });
const cluster = (name: string, id: string, secret?: string): Cluster => ({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: { name }, spec: { clusterID: id, ...(secret ? { authInfo: { secretRef: { name: secret, namespace: 'cr' } } } : {}) } });
const facts = { localClusterID: L, clusters: [cluster('me', L, 'me'), cluster('peer', P, 'peer')], reserved: [] };
const credentials = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'cr' }, type: 'k8s.cisco.com/cluster-registry-secret' });

describe('copyPolicy', () => {
  it('allows ordinary objects', () => {
    assert.deepEqual(copyPolicy(owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'apps' } }), facts), { allowed: true });
  });
  it('refuses kinds that grant rights or change the control plane, and the system namespaces', () => {
    for (const [apiVersion, kind] of [['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'], ['rbac.authorization.k8s.io/v1', 'Role'], ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'], ['apiregistration.k8s.io/v1', 'APIService'], ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'], ['certificates.k8s.io/v1', 'CertificateSigningRequest'], ['coordination.k8s.io/v1', 'Lease'],
      ['apiregistration.k8s.io/v2', 'Future'], ['apiextensions.k8s.io/v1beta1', 'Anything'], ['certificates.k8s.io/v1beta1', 'ClusterTrustBundle'], ['coordination.k8s.io/v1alpha2', 'LeaseCandidate'],
      ['flowcontrol.apiserver.k8s.io/v1', 'FlowSchema'], ['flowcontrol.apiserver.k8s.io/v1', 'PriorityLevelConfiguration'], ['internal.apiserver.k8s.io/v1alpha1', 'StorageVersion'],
      ['node.k8s.io/v1', 'RuntimeClass'], ['scheduling.k8s.io/v1', 'PriorityClass'], ['v1', 'Node'], ['v1', 'PersistentVolume'], ['storage.k8s.io/v1', 'CSIDriver'], ['storage.k8s.io/v1', 'VolumeAttachment'], ['authentication.k8s.io/v1', 'TokenRequest'], ['authorization.k8s.io/v1', 'SubjectAccessReview']]) {
      assert.equal(copyPolicy(owned({ apiVersion, kind, metadata: { name: 'x' } }), facts).allowed, false, kind);
    }
    assert.equal(copyPolicy(owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'kube-system' } }), facts).allowed, false);
    // Neighbours of denied kinds stay allowed.
    for (const [apiVersion, kind] of [['v1', 'Namespace'], ['v1', 'ServiceAccount'], ['storage.k8s.io/v1', 'StorageClass'], ['v1', 'PersistentVolumeClaim'], ['apps/v1', 'Deployment']]) {
      assert.equal(copyPolicy(owned({ apiVersion, kind, metadata: { name: 'x' } }), facts).allowed, true, kind);
    }
  });
  it("refuses what the controller keeps for itself, and only that", () => {
    const reserved = [{ group: '', kind: 'Secret', namespace: 'cr', name: 'webhook-tls' }];
    const tls = (name: string, namespace = 'cr', apiVersion = 'v1', kind = 'Secret'): KubeObject => owned({ apiVersion, kind, metadata: { name, namespace } });
    const v = copyPolicy(tls('webhook-tls'), { ...facts, reserved });
    assert.ok(!v.allowed && !v.untilRegistryChanges);
    for (const other of [tls('webhook-tls', 'apps'), tls('other'), tls('webhook-tls', 'cr', 'v1', 'ConfigMap'), tls('webhook-tls', 'cr', 'example.com/v1', 'Secret')]) {
      assert.equal(copyPolicy(other, { ...facts, reserved }).allowed, true, JSON.stringify(other.metadata));
    }
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
  it("takes no Cluster that names another member's credentials (the first to name them keeps them)", () => {
    const third = cluster('third', 'third-id', 'peer');
    const v = copyPolicy(owned(third, 'third-id'), facts);
    assert.ok(!v.allowed && v.untilRegistryChanges);
    assert.equal(copyPolicy(owned(cluster('third', 'third-id', 'third')), { ...facts, clusters: facts.clusters }).allowed, false, 'owned by another');
    assert.equal(copyPolicy(owned(cluster('third', 'third-id', 'third'), 'third-id'), facts).allowed, true);
    assert.equal(copyPolicy(owned(cluster('peer', P, 'peer')), facts).allowed, true, 'its own, already named by our Cluster of it');
    assert.equal(copyPolicy(owned(cluster('third', 'third-id', 'me'), 'third-id'), facts).allowed, false, 'our own reader credentials');
    // A second Cluster naming the same Secret does not hold up its owner's credentials.
    assert.equal(copyPolicy(owned(credentials('peer')), { ...facts, clusters: [...facts.clusters, third] }).allowed, true);
  });
});

describe('credentialsInUse', () => {
  it('holds for the Secret our Cluster of its owner reads, and for nothing else', () => {
    assert.equal(credentialsInUse(owned(credentials('peer')), facts.clusters), true);
    // Another member's copy of the same Secret, a Secret no Cluster of its owner names, another kind in its place.
    assert.equal(credentialsInUse(owned(credentials('peer'), 'third-id'), facts.clusters), false);
    assert.equal(credentialsInUse(owned(credentials('other')), facts.clusters), false);
    assert.equal(credentialsInUse(owned({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'peer', namespace: 'cr' } }), facts.clusters), false);
    assert.equal(credentialsInUse(owned(credentials('peer')), []), false);
  });
});

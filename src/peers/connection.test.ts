import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import type { Secret } from '../core/api/resources.ts';
import type { Cluster } from '../core/api/types.ts';
import { detectDistribution, registryReaches, type NodeInfo } from '../core/registry/index.ts';
import { credentialsTarget, PeerConfigError, peerCacheTransform, peerClusterConfig, peerFingerprint, type PeerInputs } from './connection.ts';

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': CA, ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  });
}
const inputs = (kc: string, endpoint?: PeerInputs['endpoint']): PeerInputs => ({ name: 'p', expectedID: 'id', secretID: 'ns/p', kubeconfig: kc, endpoint });

describe('peerClusterConfig', () => {
  it('applies the endpoint override: address normalised, CA replaced', async () => {
    const other = Buffer.from('OTHER').toString('base64');
    const overridden = peerClusterConfig(inputs(kubeconfig({ token: 't' }), { serverAddress: '1.2.3.4:443', caBundle: other }));
    assert.equal(overridden.server, 'https://1.2.3.4');
    assert.equal(String((await overridden.connection()).tls.ca), 'OTHER');
    const plain = peerClusterConfig(inputs(kubeconfig({ token: 't' })));
    assert.equal(plain.server, 'https://10.0.0.1:6443');
    assert.match(String((await plain.connection()).tls.ca), /BEGIN CERTIFICATE/);
  });

  it('refuses credentials that would run commands, read files or leave TLS, naming the key but not its value', () => {
    const secret = 'VALUE-3b9a';
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: secret, args: ['-c', 'id'] } }, {}, 'users[0].user.exec'],
      [{ 'auth-provider': { name: 'oidc', config: { 'id-token': secret } } }, {}, 'users[0].user.auth-provider'],
      [{ token: 't', 'token-file': `/var/run/secrets/kubernetes.io/serviceaccount/${secret}` }, {}, 'users[0].user.token-file'],
      [{ 'client-certificate': `/etc/${secret}.crt`, 'client-key': '/etc/x.key' }, {}, 'users[0].user.client-certificate'],
      [{ token: 't' }, { 'certificate-authority': `/${secret}/ca.crt`, 'certificate-authority-data': undefined }, 'clusters[0].cluster.certificate-authority'],
      [{ token: 't' }, { 'insecure-skip-tls-verify': true }, 'clusters[0].cluster.insecure-skip-tls-verify'],
    ];
    for (const [user, cluster, key] of cases) {
      assert.throws(() => peerClusterConfig(inputs(kubeconfig(user, cluster))), { name: 'PeerConfigError', message: `${key} is not allowed in a peer kubeconfig` });
    }
    assert.throws(() => peerClusterConfig(inputs(kubeconfig({ token: 't' }, { server: `http://${secret}:8080` }))), {
      name: 'PeerConfigError',
      message: 'clusters[0].cluster.server must be an https URL',
    });
  });

  it('refuses an http endpoint override by the name of its field', () => {
    for (const serverAddress of ['http://10.9.8.7:6443', 'ftp://10.9.8.7']) {
      assert.throws(() => peerClusterConfig(inputs(kubeconfig({ token: 't' }), { serverAddress })), (e: unknown) => {
        assert.ok(e instanceof PeerConfigError);
        assert.equal(e.message, 'spec.kubernetesApiEndpoints[].serverAddress must be an https URL');
        return true;
      });
    }
    assert.throws(() => peerClusterConfig(inputs(kubeconfig({ token: 't' }), { serverAddress: 'https://[not-an-ip' })), {
      name: 'PeerConfigError',
      message: 'spec.kubernetesApiEndpoints[].serverAddress is not a valid URL',
    });
  });

  it('reports an unreadable kubeconfig as a PeerConfigError without quoting it', () => {
    assert.throws(() => peerClusterConfig(inputs('token: [secret-value')), (e: unknown) => e instanceof PeerConfigError && /^not valid YAML/.test(e.message) && !e.message.includes('secret-value'));
  });

  it('fingerprints every input that a connection is built from', () => {
    const base = inputs(kubeconfig({ token: 't' }));
    const fp = peerFingerprint(base);
    assert.equal(peerFingerprint({ ...base }), fp);
    for (const changed of [
      { ...base, kubeconfig: kubeconfig({ token: 't2' }) },
      { ...base, secretID: 'ns/q' },
      { ...base, expectedID: 'other' },
      { ...base, endpoint: { serverAddress: 'x' } },
      { ...base, endpoint: { caBundle: 'y' } },
    ]) {
      assert.notEqual(peerFingerprint(changed), fp);
    }
  });
});

describe('credentialsTarget', () => {
  const secret = (kc: string): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'p', namespace: 'ns' }, type: 'k8s.cisco.com/cluster-registry-secret', data: { kubeconfig: Buffer.from(kc).toString('base64') } });
  it('says where a token goes (server, CA, server name), whatever the token', () => {
    const base = credentialsTarget(secret(kubeconfig({ token: 'a' })));
    assert.ok(base);
    assert.equal(credentialsTarget(secret(kubeconfig({ token: 'b' }))), base, 'a fresh token for the same server');
    assert.notEqual(credentialsTarget(secret(kubeconfig({ token: 'a' }, { server: 'https://10.0.0.2:6443' }))), base);
    assert.notEqual(credentialsTarget(secret(kubeconfig({ token: 'a' }, { 'certificate-authority-data': Buffer.from('OTHER').toString('base64') }))), base);
    assert.notEqual(credentialsTarget(secret(kubeconfig({ token: 'a' }, { 'tls-server-name': 'elsewhere' }))), base);
    // Unreadable, or not a peer's kubeconfig: nowhere it could be compared.
    assert.equal(credentialsTarget({ ...secret(''), data: {} }), undefined);
    assert.equal(credentialsTarget(secret(kubeconfig({ tokenFile: '/var/run/token' }))), undefined);
  });
});

describe('peerCacheTransform', () => {
  it("keeps of a peer's ClusterFeature only its name, labels and featureName, and drops every object's managedFields", () => {
    const feature = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ClusterFeature', metadata: { name: 'f', uid: 'u', resourceVersion: '3', labels: { a: 'b' }, annotations: { pad: 'x'.repeat(1000) }, managedFields: [{}] }, spec: { featureName: 'n', extra: 'y' } };
    assert.deepEqual(peerCacheTransform(feature), { apiVersion: feature.apiVersion, kind: 'ClusterFeature', metadata: { name: 'f', uid: 'u', resourceVersion: '3', labels: { a: 'b' } }, spec: { featureName: 'n' } });
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { keep: 'me' }, managedFields: [{}] }, data: { a: '1' } };
    assert.deepEqual(peerCacheTransform(structuredClone(cm)), { ...cm, metadata: { name: 'c', annotations: { keep: 'me' } } });
  });

  it("drops a peer's ResourceSyncRule status, which grows with the group and is never read, and keeps its spec whole", () => {
    const spec = { groupVersionKind: { version: 'v1', kind: 'Secret' }, rules: [{ match: [{ namespaces: ['a'] }] }] };
    const rule = { apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'ResourceSyncRule', metadata: { name: 'r', managedFields: [{}] }, spec, status: { clusters: Array.from({ length: 100 }, (_, i) => ({ name: `c${i}` })) } };
    assert.deepEqual(peerCacheTransform(rule), { apiVersion: rule.apiVersion, kind: 'ResourceSyncRule', metadata: { name: 'r' }, spec });
  });

  it("keeps of a peer's Cluster status what is read of it (a peer holds one per member), and of any object no last-applied record", () => {
    const spec = { clusterID: 'id', kubernetesApiEndpoints: [{ serverAddress: 'https://a', caBundle: 'Y2E=' }] };
    const now = Date.now();
    const at = (agoMs: number) => new Date(now - agoMs).toISOString();
    const cluster: Cluster = {
      apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
      kind: 'Cluster',
      metadata: { name: 'c', annotations: { keep: 'me', 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(5000) }, managedFields: [{}] },
      spec,
      status: {
        state: 'Ready',
        message: 'm',
        conditions: [
          { type: 'Ready', status: 'True', lastHeartbeatTime: at(120_000), reason: 'r', message: 'x'.repeat(1000) },
          { type: 'ClustersSynced', status: 'True', lastHeartbeatTime: at(1000), lastTransitionTime: at(9_000_000) },
        ],
        distribution: 'KIND',
        version: 'v1.36.3',
      },
    };
    const kept = peerCacheTransform(structuredClone(cluster)) as Cluster;
    assert.deepEqual(kept, {
      apiVersion: cluster.apiVersion,
      kind: 'Cluster',
      metadata: { name: 'c', annotations: { keep: 'me' } },
      spec,
      status: { state: 'Ready', conditions: [{ type: 'ClustersSynced', status: 'True', lastHeartbeatTime: at(1000) }] },
    });
    // What the peer's registry says it reaches reads the same from our cache as from the peer.
    for (const lostAt of [-Infinity, now - 500, now - 60_000]) assert.equal(registryReaches([kept], 'id', lostAt, now), registryReaches([cluster], 'id', lostAt, now), `lost at ${lostAt}`);
    assert.equal(registryReaches([kept], 'id', -Infinity, now), true);
    const bare = peerCacheTransform({ apiVersion: cluster.apiVersion, kind: 'Cluster', metadata: { name: 'b' }, spec });
    assert.equal('status' in bare, false, 'no status stays none');
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', annotations: { 'banzaicloud.com/last-applied': 'x', 'kubectl.kubernetes.io/last-applied-configuration': 'y' } }, data: { kubeconfig: 'eA==' } };
    assert.deepEqual(peerCacheTransform(structuredClone(secret)), { ...secret, metadata: { name: 's', annotations: {} } });
  });

  it("keeps of a peer's Node what its Cluster's metadata reads: the CRI socket's value, and one RKE or K3S key without its value", () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n', labels: { a: 'b' }, annotations: { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd.sock', 'rke.cattle.io/external-ip': '1.2.3.4', 'rke.cattle.io/internal-ip': '10.0.0.1', 'k3s.io/node-args': 'x'.repeat(10_000), other: 'y' } },
      spec: { providerID: 'k3s://n', podCIDR: '10.0.0.0/24' },
      status: { nodeInfo: { kubeletVersion: 'v1.36.3', osImage: 'Debian' }, capacity: { cpu: '2' } },
    };
    const kept = peerCacheTransform(structuredClone(node));
    assert.deepEqual(kept.metadata.annotations, { 'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd.sock', 'rke.cattle.io/external-ip': '', 'k3s.io/node-args': '' });
    // The peer is told apart as the untrimmed Node would be.
    assert.equal(detectDistribution(kept as NodeInfo), detectDistribution(node));
    assert.equal(detectDistribution(kept as NodeInfo), 'RKE');
  });
});

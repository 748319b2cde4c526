import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { PeerConfigError, peerClusterConfig, peerFingerprint, type PeerInputs } from './connection.ts';

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
  it('applies the endpoint override: address normalised, CA replaced', () => {
    const other = Buffer.from('OTHER').toString('base64');
    const kc = peerClusterConfig(inputs(kubeconfig({ token: 't' }), { serverAddress: '1.2.3.4:443', caBundle: other })).kubeConfig;
    assert.equal(kc.getCurrentCluster()?.server, 'https://1.2.3.4');
    assert.equal(kc.getCurrentCluster()?.caData, other);
    assert.equal(peerClusterConfig(inputs(kubeconfig({ token: 't' }))).kubeConfig.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
  });

  it('refuses credentials that would run commands or read files on this cluster', () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, RegExp][] = [
      [{ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', 'id'] } }, {}, /an exec plugin/],
      [{ 'auth-provider': { name: 'oidc', config: {} } }, {}, /an auth provider/],
      [{ 'client-certificate': '/etc/x.crt', 'client-key': '/etc/x.key' }, {}, /a client-certificate file, a client-key file/],
      [{ token: 't' }, { 'certificate-authority': '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt', 'certificate-authority-data': undefined }, /a certificate-authority file/],
    ];
    for (const [user, cluster, want] of cases) {
      assert.throws(() => peerClusterConfig(inputs(kubeconfig(user, cluster))), (e: unknown) => e instanceof PeerConfigError && want.test(e.message));
    }
  });

  it('reports an unreadable kubeconfig as a PeerConfigError without quoting it', () => {
    assert.throws(() => peerClusterConfig(inputs('token: [secret-value')), (e: unknown) => e instanceof PeerConfigError && !e.message.includes('secret-value'));
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

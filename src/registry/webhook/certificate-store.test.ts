import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pairFromSecret, secretFor, secretNameFor } from './certificate-store.ts';
import { generateCertificates, verifyCertificates } from '../../kube/certificates.ts';

const TLS = 'kubernetes.io/tls';
const pair = { caCert: 'CA PEM\n', tlsCert: 'CERT PEM\n', tlsKey: 'KEY PEM\n' };

describe('webhook certificate Secret', () => {
  it('is a kubernetes.io/tls Secret named after the webhook configuration', () => {
    assert.equal(secretNameFor('cluster-validator-webhook'), 'cluster-validator-webhook-tls');
    const secret = secretFor('cluster-registry', 'cluster-validator-webhook-tls', pair, '7');
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(secret.metadata, { name: 'cluster-validator-webhook-tls', namespace: 'cluster-registry', resourceVersion: '7' });
    assert.deepEqual(Object.keys(secret.data ?? {}).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    assert.equal(secret.data?.['tls.crt'], Buffer.from('CERT PEM\n').toString('base64'));
    assert.equal(secretFor('ns', 'n', pair).metadata.resourceVersion, undefined);
  });

  it('round-trips the pair, and reads an incomplete Secret as none', () => {
    assert.deepEqual(pairFromSecret(secretFor('ns', 'n', pair)), pair);
    const { data } = secretFor('ns', 'n', pair);
    assert.equal(pairFromSecret({ metadata: {}, type: TLS, data: { ...data, 'ca.crt': '' } }), undefined);
    assert.equal(pairFromSecret({ metadata: {}, type: TLS }), undefined);
    assert.equal(pairFromSecret(undefined), undefined);
  });

  it('trusts no pair of another type of Secret, nor one copied from a peer', () => {
    const mine = secretFor('ns', 'n', pair);
    assert.equal(pairFromSecret({ ...mine, type: 'Opaque' }), undefined);
    assert.equal(pairFromSecret({ ...mine, metadata: { ...mine.metadata, annotations: { 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id': 'peer' } } }), undefined);
    assert.equal(pairFromSecret({ ...mine, metadata: { ...mine.metadata, labels: { 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id': 'peer' } } }), undefined);
  });

  it('round-trips a generated pair that still verifies, and a corrupted stored pair does not', async () => {
    const names = { dnsNames: ['webhook.ns.svc'], ipAddresses: [] };
    const [real, other] = await Promise.all([generateCertificates(names), generateCertificates(names)]);
    const stored = pairFromSecret(secretFor('ns', 'n', real));
    assert.deepEqual(stored, real);
    assert.equal(verifyCertificates(stored, { names }).ok, true);

    const { data = {} } = secretFor('ns', 'n', real);
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    const corruptions: [key: string, value: string, reason: RegExp][] = [
      ['tls.key', b64(other.tlsKey), /^tls\.key does not match tls\.crt$/],
      ['ca.crt', b64(other.caCert), /^tls\.crt is not signed by ca\.crt$/],
      ['tls.crt', (data['tls.crt'] ?? '').slice(0, 400), /^tls\.crt does not parse$/],
    ];
    for (const [key, value, reason] of corruptions) {
      const verdict = verifyCertificates(pairFromSecret({ metadata: {}, type: TLS, data: { ...data, [key]: value } })!, { names });
      assert.ok(!verdict.ok && reason.test(verdict.reason), `${key} corrupted: ${JSON.stringify(verdict)}`);
    }
  });
});

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import type { Cluster } from '../../core/api/types.ts';
import { generateCertificates } from './certificates.ts';
import type { CertificatePair } from './certificates.ts';
import { WebhookServer } from './server.ts';

const LOCAL_ID = '11111111-2222-3333-4444-555555555555';

function request(port: number, ca: string, method: string, path: string, body?: string): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, method, path, ca, agent: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, fingerprint: (res.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? '' }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function review(operation: string, object: unknown): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid: 'req-1', kind: { group: 'clusterregistry.k8s.cisco.com', version: 'v1alpha1', kind: 'Cluster' }, operation, object },
  });
}

describe('webhook server', () => {
  let pairs: CertificatePair[];
  let server: WebhookServer;
  let port: number;
  const stop = new AbortController();
  const existing: Cluster[] = [{ metadata: { name: 'home' }, spec: { clusterID: LOCAL_ID } }];

  before(async () => {
    pairs = await Promise.all([generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] }), generateCertificates({ dnsNames: [], ipAddresses: ['127.0.0.1'] })]);
    server = new WebhookServer({ port: 0, host: '127.0.0.1', certificates: pairs[0]!, clusters: () => existing, localClusterID: () => LOCAL_ID });
    await server.start(stop.signal);
    port = server.port!;
  });
  after(async () => {
    stop.abort();
    await server?.stopped();
  });

  it('denies a second Cluster with the local cluster ID', async () => {
    const res = await request(port, pairs[0]!.caCert, 'POST', '/validate-cluster', review('CREATE', { metadata: { name: 'other' }, spec: { clusterID: LOCAL_ID } }));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'req-1',
        allowed: false,
        status: { code: 409, message: `validating unique local cluster CR failed: a local cluster CR with name home already exists with the same clusterID ${LOCAL_ID}` },
      },
    });
  });

  it('allows a peer Cluster and an update of the local one', async () => {
    for (const [op, object] of [
      ['CREATE', { metadata: { name: 'peer' }, spec: { clusterID: 'peer-id' } }],
      ['UPDATE', { metadata: { name: 'home' }, spec: { clusterID: LOCAL_ID } }],
    ] as const) {
      const res = await request(port, pairs[0]!.caCert, 'POST', '/validate-cluster', review(op, object));
      assert.deepEqual(JSON.parse(res.body).response, { uid: 'req-1', allowed: true });
    }
  });

  it('answers 400 to malformed input, 404 elsewhere and 405 to other methods', async () => {
    const ca = pairs[0]!.caCert;
    assert.equal((await request(port, ca, 'POST', '/validate-cluster', 'not json')).status, 400);
    assert.equal((await request(port, ca, 'POST', '/validate-cluster', review('CREATE', 'x'))).status, 400);
    assert.equal((await request(port, ca, 'POST', '/other', '{}')).status, 404);
    assert.equal((await request(port, ca, 'GET', '/validate-cluster')).status, 405);
  });

  it('serves a new certificate to new connections after setCertificates', async () => {
    const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;
    assert.equal((await request(port, pairs[0]!.caCert, 'GET', '/validate-cluster')).fingerprint, fingerprint(pairs[0]!.tlsCert));
    server.setCertificates(pairs[1]!);
    assert.equal((await request(port, pairs[1]!.caCert, 'GET', '/validate-cluster')).fingerprint, fingerprint(pairs[1]!.tlsCert));
    await assert.rejects(request(port, pairs[0]!.caCert, 'GET', '/validate-cluster'));
  });
});

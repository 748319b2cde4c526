import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { caBundleCertificates, generateCertificates, requiredNamesOf, rotatedCaBundle, verifyCertificates } from './certificates.ts';
import type { CertificatePair, RequiredNames } from './certificates.ts';

const DAY = 24 * 3600 * 1000;
const names: RequiredNames = { dnsNames: ['webhook.cluster-registry.svc', 'webhook.cluster-registry.svc.cluster.local'], ipAddresses: ['127.0.0.1', '::1'] };

function expectFailure(pair: CertificatePair, opts: Parameters<typeof verifyCertificates>[1], pattern: RegExp): void {
  const verdict = verifyCertificates(pair, opts);
  assert.equal(verdict.ok, false);
  if (!verdict.ok) assert.match(verdict.reason, pattern);
}

describe('webhook certificates', () => {
  let pair: CertificatePair;
  let other: CertificatePair;

  before(async () => {
    [pair, other] = await Promise.all([generateCertificates(names), generateCertificates({ dnsNames: ['other.example'], ipAddresses: [] })]);
  });

  it('makes an RSA-2048 CA named after the first DNS name and a serving certificate it signed', () => {
    const ca = new X509Certificate(pair.caCert);
    const tls = new X509Certificate(pair.tlsCert);
    assert.equal(ca.ca, true);
    assert.equal(tls.ca, false);
    assert.equal(ca.subject, 'CN=webhook.cluster-registry.svc');
    assert.equal(ca.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert.equal(tls.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert.ok(tls.verify(ca.publicKey));
    assert.ok(tls.checkPrivateKey(createPrivateKey(pair.tlsKey)));
    assert.equal(
      tls.subjectAltName,
      'DNS:webhook.cluster-registry.svc, DNS:webhook.cluster-registry.svc.cluster.local, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
    );
    const lifetime = tls.validToDate.getTime() - tls.validFromDate.getTime();
    assert.ok(Math.abs(lifetime - 365 * DAY) < 5 * 60 * 1000, `lifetime ${lifetime}`);
    assert.doesNotMatch(pair.caCert, /PRIVATE KEY/);
  });

  it('accepts a fresh pair for every name it was made for', () => {
    const verdict = verifyCertificates(pair, { names });
    assert.equal(verdict.ok, true);
    if (verdict.ok) assert.ok(verdict.notAfter.getTime() > Date.now() + 360 * DAY);
    assert.equal(verifyCertificates(pair, { names: { dnsNames: ['webhook.cluster-registry.svc'], ipAddresses: [] } }).ok, true);
  });

  it('rejects a certificate signed by another CA', () => {
    expectFailure({ ...pair, caCert: other.caCert }, {}, /not signed by ca\.crt/);
  });

  it('rejects a pair missing a required DNS name or IP address', () => {
    expectFailure(pair, { names: { dnsNames: ['webhook.other.svc'], ipAddresses: [] } }, /does not cover DNS name webhook\.other\.svc/);
    expectFailure(pair, { names: { dnsNames: [], ipAddresses: ['10.0.0.1'] } }, /does not cover IP address 10\.0\.0\.1/);
    // No wildcard or subject CN fallback.
    expectFailure(other, { names: { dnsNames: ['x.other.example'], ipAddresses: [] } }, /does not cover/);
  });

  it('rejects a key that does not belong to the certificate', () => {
    expectFailure({ ...pair, tlsKey: other.tlsKey }, {}, /tls\.key does not match tls\.crt/);
  });

  it('rejects what does not parse, without quoting it', () => {
    expectFailure({ ...pair, tlsCert: 'garbage' }, {}, /^tls\.crt does not parse$/);
    expectFailure({ ...pair, tlsKey: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }, {}, /^tls\.key does not parse$/);
    expectFailure({ ...pair, caCert: '' }, {}, /ca\.crt holds no certificate/);
  });

  it('renews when less than a third of the lifetime is left, or within an explicit margin', () => {
    const at = (days: number): Date => new Date(Date.now() + days * DAY);
    assert.equal(verifyCertificates(pair, { now: at(240) }).ok, true);
    expectFailure(pair, { now: at(250) }, /tls\.crt expires at .* within the renewal margin|ca\.crt expires/);
    assert.equal(verifyCertificates(pair, { now: at(300), renewalMarginMs: 30 * DAY }).ok, true);
    expectFailure(pair, { now: at(340), renewalMarginMs: 30 * DAY }, /within the renewal margin/);
    expectFailure(pair, { now: at(-1) }, /not valid before/);
  });

  it('generates for a given time and lifetime', async () => {
    const old = await generateCertificates({ ...names, now: new Date(Date.now() - 50 * 60 * 1000), validityMs: 60 * 60 * 1000 });
    expectFailure(old, { names }, /within the renewal margin/);
    assert.equal(verifyCertificates(old, { names, renewalMarginMs: 0 }).ok, true);
  });

  it('keeps the replaced CA trusted after a rotation while it is valid', () => {
    const bundle = rotatedCaBundle(other.caCert, pair.caCert);
    assert.deepEqual(caBundleCertificates(bundle), [other.caCert, pair.caCert]);
    // The first CA is the signer.
    assert.equal(verifyCertificates({ ...other, caCert: bundle }).ok, true);
    expectFailure({ ...pair, caCert: bundle }, {}, /not signed/);
    // Only the direct predecessor is carried, and an expired one is dropped.
    assert.deepEqual(caBundleCertificates(rotatedCaBundle(pair.caCert, bundle)), [pair.caCert, other.caCert]);
    assert.equal(rotatedCaBundle(other.caCert, pair.caCert, new Date(Date.now() + 400 * DAY)), other.caCert);
    assert.equal(rotatedCaBundle(other.caCert, undefined), other.caCert);
  });

  it('splits hosts into DNS names and IP addresses, sorted and unique', () => {
    assert.deepEqual(requiredNamesOf(['b.svc', '127.0.0.1', 'a.svc', 'b.svc', '::1']), { dnsNames: ['a.svc', 'b.svc'], ipAddresses: ['127.0.0.1', '::1'] });
  });
});

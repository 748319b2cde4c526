import assert from 'node:assert/strict';
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import { connect, createServer } from 'node:tls';
import { caBundleCertificates, generateCertificates, requiredNamesOf, rotatedCaBundle, verifyCertificates } from './certificates.ts';
import type { CertificatePair, RequiredNames } from './certificates.ts';

const DAY = 24 * 3600 * 1000;
const names: RequiredNames = { dnsNames: ['webhook.cluster-registry.svc', 'webhook.cluster-registry.svc.cluster.local'], ipAddresses: ['127.0.0.1', '::1'] };

// node:crypto does not expose key-usage bits, criticality or key identifiers, so the tests read
// them from the DER with this small TLV walker rather than with the library that wrote them.
interface Tlv {
  tag: number;
  body: Buffer;
}

function tlvs(der: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let i = 0; i < der.length; ) {
    const tag = der[i] ?? 0;
    let length = der[i + 1] ?? 0;
    let at = i + 2;
    if (length & 0x80) {
      const n = length & 0x7f;
      length = der.readUIntBE(at, n);
      at += n;
    }
    out.push({ tag, body: der.subarray(at, at + length) });
    i = at + length;
  }
  return out;
}

const OID = { basicConstraints: '551d13', keyUsage: '551d0f', subjectKeyId: '551d0e', authorityKeyId: '551d23' } as const;

/** Extensions by OID (hex of the encoded OID): Certificate > TBSCertificate > [3] > Extensions. */
function extensions(cert: X509Certificate): Map<string, { critical: boolean; value: Buffer }> {
  const tbs = tlvs(tlvs(cert.raw)[0]!.body)[0]!.body;
  const wrapped = tlvs(tbs).find((t) => t.tag === 0xa3)!;
  const out = new Map<string, { critical: boolean; value: Buffer }>();
  for (const ext of tlvs(tlvs(wrapped.body)[0]!.body)) {
    const [oid, ...rest] = tlvs(ext.body);
    const critical = rest.length === 2 && rest[0]!.body[0] === 0xff;
    out.set(oid!.body.toString('hex'), { critical, value: rest[rest.length - 1]!.body });
  }
  return out;
}

/** The key-usage bits after the unused-bits byte: 0x80 digitalSignature, 0x20 keyEncipherment, 0x04 keyCertSign. */
function keyUsageBits(cert: X509Certificate): { critical: boolean; bits: string } {
  const ext = extensions(cert).get(OID.keyUsage)!;
  return { critical: ext.critical, bits: tlvs(ext.value)[0]!.body.subarray(1).toString('hex') };
}

function expectFailure(pair: CertificatePair, opts: Parameters<typeof verifyCertificates>[1], pattern: RegExp): void {
  const verdict = verifyCertificates(pair, opts);
  assert.equal(verdict.ok, false);
  if (!verdict.ok) assert.match(verdict.reason, pattern);
}

describe('webhook certificates', () => {
  let pair: CertificatePair;
  let other: CertificatePair;
  // A later pair for the same names: its CA has the same subject as pair's.
  let renewed: CertificatePair;

  before(async () => {
    [pair, other, renewed] = await Promise.all([generateCertificates(names), generateCertificates({ dnsNames: ['other.example'], ipAddresses: [] }), generateCertificates(names)]);
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

  it('makes a chain that node:crypto checks out on its own', () => {
    const ca = new X509Certificate(pair.caCert);
    const tls = new X509Certificate(pair.tlsCert);
    // The CA: self-issued and self-signed, basicConstraints CA:TRUE critical, may sign certificates.
    assert.ok(ca.checkIssued(ca) && ca.verify(ca.publicKey));
    assert.equal(extensions(ca).get(OID.basicConstraints)?.critical, true);
    assert.deepEqual(keyUsageBits(ca), { critical: true, bits: '84' });
    assert.deepEqual(ca.keyUsage, ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    // Subject key identifier: SHA-1 of the RSAPublicKey (RFC 5280 4.2.1.2, method 1).
    const caKeyId = createHash('sha1').update(ca.publicKey.export({ type: 'pkcs1', format: 'der' })).digest();
    assert.deepEqual(tlvs(extensions(ca).get(OID.subjectKeyId)!.value)[0]!.body, caKeyId);

    // The serving certificate: issued and signed by the CA, not itself a CA, serverAuth only.
    assert.ok(tls.checkIssued(ca) && tls.verify(ca.publicKey));
    assert.ok(!tls.verify(tls.publicKey));
    assert.equal(tls.issuer, ca.subject);
    assert.equal(tls.subject, 'O=cluster-registry\nCN=webhook.cluster-registry.svc');
    assert.equal(extensions(tls).get(OID.basicConstraints)?.critical, true);
    assert.deepEqual(keyUsageBits(tls), { critical: true, bits: 'a0' });
    assert.deepEqual(tls.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    const authorityKeyId = tlvs(tlvs(extensions(tls).get(OID.authorityKeyId)!.value)[0]!.body)[0]!;
    assert.deepEqual(authorityKeyId, { tag: 0x80, body: caKeyId });
    for (const name of names.dnsNames) assert.equal(tls.checkHost(name, { subject: 'never' }), name);
    for (const ip of names.ipAddresses) assert.equal(tls.checkIP(ip), ip);
    assert.equal(tls.checkHost('cluster-registry.svc', { subject: 'never' }), undefined);
    // Positive serials of at most 128 bits, one per certificate.
    for (const cert of [ca, tls]) assert.match(cert.serialNumber, /^[0-9A-F]{1,32}$/);
    assert.notEqual(ca.serialNumber, tls.serialNumber);
    assert.ok(tls.checkPrivateKey(createPrivateKey(pair.tlsKey)));
    assert.match(pair.tlsKey, /^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n$/);
  });

  it('serves TLS that a client trusting only ca.crt accepts for each DNS name', async () => {
    const server = createServer({ key: pair.tlsKey, cert: pair.tlsCert }, (socket) => socket.end());
    await once(server.listen(0, '127.0.0.1'), 'listening');
    const handshake = async (servername: string, ca: string): Promise<void> => {
      const socket = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, servername, ca });
      try {
        await once(socket, 'secureConnect');
      } finally {
        socket.destroy();
      }
    };
    try {
      // OpenSSL's chain check also enforces basicConstraints, key usage and serverAuth.
      for (const name of names.dnsNames) await handshake(name, pair.caCert);
      await handshake(names.dnsNames[0]!, rotatedCaBundle(other.caCert, pair.caCert));
      await assert.rejects(handshake(names.dnsNames[0]!, other.caCert), /unable to (get|verify)/);
      await assert.rejects(handshake('webhook.other.svc', pair.caCert), /ERR_TLS_CERT_ALTNAME_INVALID|does not match/);
    } finally {
      server.close();
    }
  });

  it('accepts a fresh pair for every name it was made for', () => {
    const verdict = verifyCertificates(pair, { names });
    assert.equal(verdict.ok, true);
    if (verdict.ok) assert.ok(verdict.notAfter.getTime() > Date.now() + 360 * DAY);
    assert.equal(verifyCertificates(pair, { names: { dnsNames: ['webhook.cluster-registry.svc'], ipAddresses: [] } }).ok, true);
  });

  it('rejects a certificate signed by another CA, also one with the same name', () => {
    expectFailure({ ...pair, caCert: other.caCert }, {}, /not signed by ca\.crt/);
    expectFailure({ ...pair, caCert: renewed.caCert }, {}, /not signed by ca\.crt/);
  });

  it('rejects a tampered certificate and a pair stored the wrong way round', () => {
    const der = Buffer.from(new X509Certificate(pair.tlsCert).raw);
    der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0xff;
    // Parsing does not check the signature, so the tampered certificate still loads.
    expectFailure({ ...pair, tlsCert: new X509Certificate(der).toString() }, {}, /tls\.crt is not signed by ca\.crt/);
    expectFailure({ ...pair, caCert: pair.tlsCert }, {}, /ca\.crt is not a CA certificate/);
    const lines = pair.tlsCert.split('\n');
    expectFailure({ ...pair, tlsCert: [...lines.slice(0, 3), ...lines.slice(4)].join('\n') }, {}, /^tls\.crt does not parse$/);
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
    // Whole seconds: certificate times have no finer precision.
    const now = new Date(Math.floor(Date.now() / 1000) * 1000 - 50 * 60 * 1000);
    const old = await generateCertificates({ ...names, now, validityMs: 60 * 60 * 1000 });
    for (const pem of [old.caCert, old.tlsCert]) {
      const cert = new X509Certificate(pem);
      assert.equal(cert.validFromDate.getTime(), now.getTime() - 60 * 1000);
      assert.equal(cert.validToDate.getTime(), now.getTime() + 60 * 60 * 1000);
    }
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

// The webhook's self-signed certificates as pure functions over PEM strings: a CA and a serving
// certificate signed by it (upstream §12.2, with the serving key RSA-2048 like the CA), and the
// check that decides whether a stored pair can still be served.
import { X509Certificate, createPrivateKey, generateKeyPair, randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import forge from 'node-forge';

const generateRsa = promisify(generateKeyPair);

export const DEFAULT_VALIDITY_MS = 365 * 24 * 3600 * 1000;
// Certificates start slightly in the past so a verifier whose clock is a little behind accepts them.
const BACKDATE_MS = 60 * 1000;
const FALLBACK_COMMON_NAME = 'cluster-validator-webhook';

/** What a serving certificate must cover. */
export interface RequiredNames {
  dnsNames: readonly string[];
  ipAddresses: readonly string[];
}

/**
 * A serving pair as stored in the Secret. `caCert` may hold more than one certificate: the first
 * is the CA that signed `tlsCert`, the others are predecessors still trusted during a rotation.
 */
export interface CertificatePair {
  caCert: string;
  tlsCert: string;
  tlsKey: string;
}

export interface GenerateOptions extends RequiredNames {
  now?: Date;
  validityMs?: number;
}

/** A fresh CA and a serving certificate it signed; the CA key is dropped, renewal makes a new CA. */
export async function generateCertificates(opts: GenerateOptions): Promise<CertificatePair> {
  const now = opts.now ?? new Date();
  const validityMs = opts.validityMs ?? DEFAULT_VALIDITY_MS;
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(now.getTime() + validityMs);
  // node:crypto generates keys off the event loop, which keeps serving admission requests meanwhile.
  const [caKeys, tlsKeys] = await Promise.all([rsaKeyPair(), rsaKeyPair()]);

  const commonName = opts.dnsNames[0] ?? opts.ipAddresses[0] ?? FALLBACK_COMMON_NAME;
  const caName = [{ name: 'commonName', value: commonName }];
  const ca = newCertificate(caKeys.publicKey, caName, caName, notBefore, notAfter);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  // A subject equal to the issuer's would make OpenSSL clients take the leaf for self-signed.
  const tlsName = [{ name: 'organizationName', value: 'cluster-registry' }, { name: 'commonName', value: commonName }];
  const tls = newCertificate(tlsKeys.publicKey, tlsName, caName, notBefore, notAfter);
  tls.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
    {
      name: 'subjectAltName',
      altNames: [...opts.dnsNames.map((value) => ({ type: 2, value })), ...opts.ipAddresses.map((ip) => ({ type: 7, ip }))],
    },
  ]);
  tls.sign(caKeys.privateKey, forge.md.sha256.create());

  // forge writes CRLF line ends; Kubernetes tooling and bundle concatenation expect LF.
  const lf = (pem: string): string => pem.replace(/\r\n/g, '\n');
  return {
    caCert: lf(forge.pki.certificateToPem(ca)),
    tlsCert: lf(forge.pki.certificateToPem(tls)),
    tlsKey: lf(forge.pki.privateKeyToPem(tlsKeys.privateKey)),
  };
}

export interface VerifyOptions {
  names?: RequiredNames;
  now?: Date;
  /**
   * Renew when less than this is left of either certificate. Default: a third of the
   * certificate's own lifetime.
   */
  renewalMarginMs?: number;
}

export type Verdict = { ok: true; notAfter: Date } | { ok: false; reason: string };

/**
 * Whether a pair can be served: it parses, the key belongs to the certificate, the first CA
 * signed it, it covers every required name, and both stay valid past now + the renewal margin.
 * Reasons never quote key material.
 */
export function verifyCertificates(pair: CertificatePair, opts: VerifyOptions = {}): Verdict {
  const now = opts.now ?? new Date();
  let ca: X509Certificate;
  let tls: X509Certificate;
  let key: KeyObject;
  try {
    const first = caBundleCertificates(pair.caCert)[0];
    if (!first) return { ok: false, reason: 'ca.crt holds no certificate' };
    ca = new X509Certificate(first);
  } catch {
    return { ok: false, reason: 'ca.crt does not parse' };
  }
  try {
    tls = new X509Certificate(pair.tlsCert);
  } catch {
    return { ok: false, reason: 'tls.crt does not parse' };
  }
  try {
    key = createPrivateKey(pair.tlsKey);
  } catch {
    return { ok: false, reason: 'tls.key does not parse' };
  }
  if (!tls.checkPrivateKey(key)) return { ok: false, reason: 'tls.key does not match tls.crt' };
  if (!ca.ca) return { ok: false, reason: 'ca.crt is not a CA certificate' };
  if (!tls.checkIssued(ca) || !tls.verify(ca.publicKey)) return { ok: false, reason: 'tls.crt is not signed by ca.crt' };
  for (const name of opts.names?.dnsNames ?? []) {
    if (tls.checkHost(name, { subject: 'never', wildcards: false }) !== name) return { ok: false, reason: `tls.crt does not cover DNS name ${name}` };
  }
  for (const ip of opts.names?.ipAddresses ?? []) {
    if (tls.checkIP(ip) === undefined) return { ok: false, reason: `tls.crt does not cover IP address ${ip}` };
  }
  for (const [what, cert] of [
    ['ca.crt', ca],
    ['tls.crt', tls],
  ] as const) {
    if (cert.validFromDate > now) return { ok: false, reason: `${what} is not valid before ${cert.validFromDate.toISOString()}` };
    const lifetime = cert.validToDate.getTime() - cert.validFromDate.getTime();
    const margin = opts.renewalMarginMs ?? lifetime / 3;
    if (cert.validToDate.getTime() - margin <= now.getTime()) {
      return { ok: false, reason: `${what} expires at ${cert.validToDate.toISOString()}, within the renewal margin` };
    }
  }
  return { ok: true, notAfter: tls.validToDate < ca.validToDate ? tls.validToDate : ca.validToDate };
}

/** The certificates of a PEM bundle, each as its own PEM block. */
export function caBundleCertificates(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)?.map((b) => `${b}\n`) ?? [];
}

/**
 * The `ca.crt` to store with a fresh pair: its own CA first, then the CA of the pair it replaces
 * while that one is still valid, so clients keep trusting replicas that have not reloaded yet.
 */
export function rotatedCaBundle(freshCa: string, previousCa: string | undefined, now = new Date()): string {
  const previous = caBundleCertificates(previousCa ?? '')[0];
  if (!previous) return freshCa;
  try {
    if (new X509Certificate(previous).validToDate <= now) return freshCa;
  } catch {
    return freshCa;
  }
  return `${freshCa.trimEnd()}\n${previous}`;
}

/** Splits required names given as one list of hosts into DNS names and IP addresses. */
export function requiredNamesOf(hosts: Iterable<string>): RequiredNames {
  const dnsNames = new Set<string>();
  const ipAddresses = new Set<string>();
  for (const host of hosts) (isIP(host) ? ipAddresses : dnsNames).add(host);
  return { dnsNames: [...dnsNames].sort(), ipAddresses: [...ipAddresses].sort() };
}

async function rsaKeyPair(): Promise<{ privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey }> {
  const { privateKey } = await generateRsa('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
  const forgeKey = forge.pki.privateKeyFromPem(privateKey);
  return { privateKey: forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function newCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  subject: forge.pki.CertificateField[],
  issuer: forge.pki.CertificateField[],
  notBefore: Date,
  notAfter: Date,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A positive 128-bit serial: the top bit clear keeps the DER integer from reading as negative.
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject(subject);
  cert.setIssuer(issuer);
  return cert;
}

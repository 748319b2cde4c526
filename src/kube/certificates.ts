// Self-signed serving certificates as functions over PEM strings (the webhook's, and test
// servers'): a CA and a serving certificate it signed (RSA-2048 keys, a year's validity), and
// the check that decides whether a stored pair can still be served. node:crypto makes the keys, signs
// and does every check; @peculiar/x509 only lays out the certificates' DER.
import { KeyObject, X509Certificate, createPrivateKey, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';

export const DEFAULT_VALIDITY_MS = 365 * 24 * 3600 * 1000;
// Certificates start slightly in the past so a verifier whose clock is a little behind accepts them.
const BACKDATE_MS = 60 * 1000;
const FALLBACK_COMMON_NAME = 'cluster-validator-webhook';
// RSA, not ECDSA P-256, although both would do: upstream serves RSA-2048 and the serving
// certificate keeps keyEncipherment, which only an RSA key has. Key generation runs on the libuv
// pool, so its cost is latency once a rotation, not event-loop time.
const KEY_ALGORITHM: webcrypto.RsaHashedKeyGenParams = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' };

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
  const [x509, caKeys, tlsKeys] = await Promise.all([loadX509(), rsaKeyPair(), rsaKeyPair()]);

  const commonName = opts.dnsNames[0] ?? opts.ipAddresses[0] ?? FALLBACK_COMMON_NAME;
  const caName: X509.JsonName = [{ CN: [commonName] }];
  // Both certificates are issued by the CA key under the CA's name, for the same window. The
  // library draws a random 128-bit serial and encodes it as a positive, minimal DER integer.
  const issue = (subject: X509.JsonName, publicKey: webcrypto.CryptoKey, extensions: X509.Extension[]): Promise<X509.X509Certificate> =>
    x509.X509CertificateGenerator.create({ subject, issuer: caName, publicKey, signingKey: caKeys.privateKey, notBefore, notAfter, extensions }, webcrypto);
  const caKeyId = await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, webcrypto);
  const ca = await issue(caName, caKeys.publicKey, [
    new x509.BasicConstraintsExtension(true, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
    caKeyId,
  ]);
  // A subject equal to the issuer's would make OpenSSL clients take the leaf for self-signed.
  const tls = await issue([{ O: ['cluster-registry'] }, { CN: [commonName] }], tlsKeys.publicKey, [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    new x509.AuthorityKeyIdentifierExtension(caKeyId.keyId),
    new x509.SubjectAlternativeNameExtension([
      ...opts.dnsNames.map((value) => ({ type: 'dns' as const, value })),
      ...opts.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ]),
  ]);

  // node:crypto writes the PEM: LF line ends and a final newline, as bundles are concatenated.
  const pem = (cert: X509.X509Certificate): string => new X509Certificate(Buffer.from(cert.rawData)).toString();
  return {
    caCert: pem(ca),
    tlsCert: pem(tls),
    // PKCS#1 ("RSA PRIVATE KEY"), the format stored so far.
    tlsKey: KeyObject.from(tlsKeys.privateKey).export({ type: 'pkcs1', format: 'pem' }).toString(),
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

function rsaKeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

/**
 * The certificate builder, imported on first use: with the Reflect polyfill its DI container needs,
 * it takes about 130 ms to load, which CLI commands and replicas that find a valid stored pair
 * never need to pay. The polyfill must be evaluated first.
 */
async function loadX509(): Promise<typeof X509> {
  await import('reflect-metadata');
  return import('@peculiar/x509');
}

// The webhook's serving pair, kept in ONE kubernetes.io/tls Secret in the controller namespace and
// shared by every replica (upstream had per-replica certificates behind one caBundle). Any
// replica creates it when absent, only the leader replaces it, and every replica watches it.
import { isAlreadyExists, isConflict, isNotFound, silentLogger } from '../../kube/index.ts';
import { hasCopyMarks } from '../../core/api/source-identity.ts';
import type { Informer, InformerFactory, Logger, ObjectClient } from '../../kube/index.ts';
import { SECRETS, secretText, type Secret } from '../../core/api/resources.ts';
import type { CertificatePair } from '../../kube/certificates.ts';

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';
export const TLS_SECRET_KEYS = { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt' } as const;

/** The webhook's Secret is an ordinary Secret; the alias names its role. */
export type TlsSecret = Secret;

/** `<webhook-configuration-name>-tls`. */
export function secretNameFor(configurationName: string): string {
  return `${configurationName}-tls`;
}

/**
 * The pair in a Secret, or undefined when a key is missing, or when the Secret is not ours to
 * trust: of another type, or a copy synced from a peer (its serving key and CA are the peer's).
 */
export function pairFromSecret(secret: TlsSecret | undefined): CertificatePair | undefined {
  if (!secret || secret.type !== TLS_SECRET_TYPE || hasCopyMarks(secret)) return undefined;
  const [caCert, tlsCert, tlsKey] = [TLS_SECRET_KEYS.ca, TLS_SECRET_KEYS.cert, TLS_SECRET_KEYS.key].map((k) => secretText(secret, k));
  return caCert && tlsCert && tlsKey ? { caCert, tlsCert, tlsKey } : undefined;
}

export function secretFor(namespace: string, name: string, pair: CertificatePair, resourceVersion?: string): TlsSecret {
  const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    type: TLS_SECRET_TYPE,
    data: { [TLS_SECRET_KEYS.cert]: b64(pair.tlsCert), [TLS_SECRET_KEYS.key]: b64(pair.tlsKey), [TLS_SECRET_KEYS.ca]: b64(pair.caCert) },
  };
}

export interface CertificateStoreOptions {
  rest: ObjectClient;
  /** Shared factory of this cluster; the caller starts it. */
  informers: InformerFactory;
  namespace: string;
  secretName: string;
  log?: Logger;
}

export class CertificateStore {
  readonly namespace: string;
  readonly secretName: string;
  private readonly rest: ObjectClient;
  private readonly informer: Informer<TlsSecret>;
  private readonly log: Logger;
  private lastSeen: CertificatePair | undefined;

  constructor(opts: CertificateStoreOptions) {
    this.rest = opts.rest;
    this.namespace = opts.namespace;
    this.secretName = opts.secretName;
    this.log = (opts.log ?? silentLogger).child({ secret: `${opts.namespace}/${opts.secretName}` });
    // Only this one Secret: the process never caches other Secrets for the webhook.
    this.informer = opts.informers.forResource<TlsSecret>({ ...SECRETS, namespace: opts.namespace, fieldSelector: `metadata.name=${opts.secretName}` });
    this.informer.addEventHandler({
      onAdd: (s) => this.remember(s),
      onUpdate: (_, s) => this.remember(s),
    });
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    return this.informer.waitForSync(signal);
  }

  /** The stored pair as last seen by the watch, or undefined when the Secret is absent or incomplete. */
  current(): CertificatePair | undefined {
    return pairFromSecret(this.stored());
  }

  /** The last complete pair ever seen, also after the Secret was deleted (its CA stays trusted during a rotation). */
  lastKnown(): CertificatePair | undefined {
    return this.current() ?? this.lastSeen;
  }

  /** Calls `handler` with the stored pair on every change, undefined when it is gone. Returns an unsubscribe. */
  onChange(handler: (pair: CertificatePair | undefined) => void): () => void {
    return this.informer.addEventHandler({
      onAdd: (s) => handler(pairFromSecret(s)),
      onUpdate: (old, s) => {
        if (old.metadata.resourceVersion !== s.metadata.resourceVersion) handler(pairFromSecret(s));
      },
      onDelete: () => handler(undefined),
    });
  }

  /**
   * The stored pair; when there is none, stores `generate()`'s. Replicas starting together race
   * to create it and all of them end up with the winner's.
   */
  async ensure(generate: () => Promise<CertificatePair>, signal: AbortSignal): Promise<CertificatePair> {
    // After a write lost a race, the informer may not have seen the winner yet: read the API.
    let fresh = false;
    for (;;) {
      const stored = (fresh ? undefined : this.stored()) ?? (await this.fetch(signal));
      const existing = pairFromSecret(stored);
      if (existing) return existing;
      const pair = await generate();
      try {
        if (!stored) {
          await this.rest.create(SECRETS, this.namespace, secretFor(this.namespace, this.secretName, pair), { signal });
          this.log.info('created the webhook certificate Secret');
        } else if (stored.type === TLS_SECRET_TYPE) {
          // Incomplete, or a peer's copy: ours replaces it (the write drops the copy's marks).
          await this.rest.update(SECRETS, this.namespace, secretFor(this.namespace, this.secretName, pair, stored.metadata.resourceVersion), { signal });
          this.log.warn('replaced a webhook certificate Secret that was incomplete or not ours');
        } else {
          // A Secret's type cannot change: the one of another type goes, and the next pass creates ours.
          await this.rest.delete(SECRETS, this.namespace, this.secretName, { signal, preconditions: { uid: stored.metadata.uid, resourceVersion: stored.metadata.resourceVersion } });
          this.log.warn({ type: stored.type }, 'deleted a Secret of another type in the place of the webhook certificate Secret');
          continue;
        }
        return pair;
      } catch (err) {
        if (!isAlreadyExists(err) && !isConflict(err) && !isNotFound(err)) throw err;
        this.log.info('the webhook certificate Secret changed meanwhile (another replica); looking again');
        fresh = true;
      }
    }
  }

  /**
   * Replaces the stored pair (leader only). The write is conditional on the version last seen, so
   * a concurrent change fails with a Conflict instead of being overwritten.
   */
  async replace(pair: CertificatePair, signal: AbortSignal): Promise<void> {
    const stored = this.stored();
    if (stored) {
      await this.rest.update(SECRETS, this.namespace, secretFor(this.namespace, this.secretName, pair, stored.metadata.resourceVersion), { signal });
    } else {
      await this.rest.create(SECRETS, this.namespace, secretFor(this.namespace, this.secretName, pair), { signal });
    }
    this.log.info('stored a renewed webhook certificate');
  }

  private stored(): TlsSecret | undefined {
    return this.informer.store.getByName(this.namespace, this.secretName);
  }

  private remember(secret: TlsSecret): void {
    this.lastSeen = pairFromSecret(secret) ?? this.lastSeen;
  }

  private async fetch(signal: AbortSignal): Promise<TlsSecret | undefined> {
    return this.rest.getIfExists<TlsSecret>(SECRETS, this.namespace, this.secretName, { signal });
  }
}

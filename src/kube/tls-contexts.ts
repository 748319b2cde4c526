// TLS contexts shared by every connection with the same CA and client certificate. Node builds a
// context (a certificate store holding the parsed CA, the key) for each connection it is not
// given one for; one per distinct material is enough, whatever the number of peers or sockets.
import { createHash } from 'node:crypto';
import tls from 'node:tls';
import type { TlsSettings } from './credentials.ts';

export interface SharedSecureContext {
  readonly context: tls.SecureContext;
  /** Hands back this holder's reference; the context goes when the last one does. */
  release(): void;
}

interface Entry {
  readonly context: tls.SecureContext;
  holders: number;
}

const contexts = new Map<string, Entry>();

/** The context for this material, built on first use; each call is one reference to release. */
export function sharedSecureContext(settings: TlsSettings): SharedSecureContext {
  const key = materialKey(settings);
  let entry = contexts.get(key);
  if (!entry) {
    entry = { context: tls.createSecureContext({ ca: settings.ca, cert: settings.cert, key: settings.key }), holders: 0 };
    contexts.set(key, entry);
  }
  entry.holders++;
  const held = entry;
  let released = false;
  return {
    context: held.context,
    release: () => {
      if (released) return;
      released = true;
      if (--held.holders === 0 && contexts.get(key) === held) contexts.delete(key);
    },
  };
}

/** How many distinct contexts are alive (for tests). */
export function liveSecureContexts(): number {
  return contexts.size;
}

// A digest, so the map holds no key material of its own.
function materialKey(settings: TlsSettings): string {
  const h = createHash('sha256');
  for (const part of [settings.ca, settings.cert, settings.key]) {
    const bytes = part === undefined ? Buffer.alloc(0) : Buffer.from(part);
    h.update(`${bytes.length}:`).update(bytes);
  }
  return h.digest('hex');
}

// The hub token a spoke holds: a TokenRequest token of its own ServiceAccount on the hub, with a
// bounded lifetime, renewed by the spoke through its grant (which lets that ServiceAccount ask
// for tokens of itself only) before it lapses. A token is read for its times and its
// ServiceAccount only, unverified: the hub is the one that checks it.
import { parseDocument, isMap, isSeq } from 'yaml';

export interface HubToken {
  /** ms since the epoch */
  readonly issuedAt: number;
  readonly expiresAt: number;
  readonly namespace: string;
  readonly serviceAccount: string;
}

/**
 * Renewed when less than this share of its lifetime is left. A token that lapsed cannot renew
 * itself (the spoke needs `hub grant` again), so a hub may be away for this share of the lifetime
 * before that happens: half, not the reader token's third, since a hub is one cluster a spoke
 * cannot do without, and a renewal costs the hub only one more TokenRequest per lifetime.
 */
const RENEW_AT_REMAINING = 1 / 2;
const SERVICE_ACCOUNT_SUBJECT = /^system:serviceaccount:([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/;
/** Longer than any JWT a hub issues; what is longer is not read. */
const MAX_TOKEN = 16 << 10;

/** The times and ServiceAccount of a ServiceAccount token, or undefined when `token` is none (a legacy token has no expiry). */
export function hubTokenClaims(token: string | undefined): HubToken | undefined {
  if (!token || token.length > MAX_TOKEN) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { iat, exp, sub } = (claims ?? {}) as { iat?: unknown; exp?: unknown; sub?: unknown };
  if (typeof iat !== 'number' || typeof exp !== 'number' || exp <= iat || typeof sub !== 'string') return undefined;
  const m = SERVICE_ACCOUNT_SUBJECT.exec(sub);
  if (!m?.[1] || !m[3]) return undefined;
  return { issuedAt: iat * 1000, expiresAt: exp * 1000, namespace: m[1], serviceAccount: m[3] };
}

/** When the token is to be renewed (ms since the epoch): halfway through its lifetime, or `refreshSeconds` after it was issued when that is sooner. */
export function renewalDue(t: HubToken, refreshSeconds = 0): number {
  const byLifetime = t.expiresAt - (t.expiresAt - t.issuedAt) * RENEW_AT_REMAINING;
  return refreshSeconds > 0 ? Math.min(byLifetime, t.issuedAt + refreshSeconds * 1000) : byLifetime;
}

/** Where the token's ServiceAccount asks for a new token of itself. */
export function tokenRequestPath(t: Pick<HubToken, 'namespace' | 'serviceAccount'>): string {
  return `/api/v1/namespaces/${t.namespace}/serviceaccounts/${t.serviceAccount}/token`;
}

/** The TokenRequest for a token that lives `seconds`. */
export function tokenRequest(seconds: number): Record<string, unknown> {
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: seconds } };
}

/** How long `t` was issued for: what its renewal asks for again. */
export function tokenLifetimeSeconds(t: HubToken): number {
  return Math.round((t.expiresAt - t.issuedAt) / 1000);
}

/**
 * `kubeconfig` with `next` in place of the token `current`, everything else as it was; undefined
 * when `current` is not the token of exactly one of its users.
 */
export function withToken(kubeconfig: string, current: string, next: string): string | undefined {
  const doc = parseDocument(kubeconfig, { logLevel: 'silent', uniqueKeys: false });
  if (doc.errors.length > 0) return undefined;
  const users = doc.get('users');
  if (!isSeq(users)) return undefined;
  const holding = users.items.flatMap((entry) => {
    const user = isMap(entry) ? entry.get('user') : undefined;
    return isMap(user) && user.get('token') === current ? [user] : [];
  });
  if (holding.length !== 1) return undefined;
  holding[0]!.set('token', next);
  return doc.toString();
}

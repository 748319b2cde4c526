import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { hubTokenClaims, renewalDue, tokenLifetimeSeconds, tokenRequest, tokenRequestPath, withToken } from './token.ts';

const jwt = (claims: Record<string, unknown>): string => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
const sa = 'system:serviceaccount:cluster-registry:cluster-registry-spoke-eu1';

describe('the hub token', () => {
  it('is read for its times and ServiceAccount; anything else is no token that can be renewed', () => {
    assert.deepEqual(hubTokenClaims(jwt({ iat: 1000, exp: 1600, sub: sa })), { issuedAt: 1_000_000, expiresAt: 1_600_000, namespace: 'cluster-registry', serviceAccount: 'cluster-registry-spoke-eu1' });
    for (const t of [undefined, '', 'not.a.jwt', jwt({ iat: 1000, sub: sa }), jwt({ iat: 1000, exp: 900, sub: sa }), jwt({ iat: 1000, exp: 1600, sub: 'system:admin' }), jwt({ iat: 1000, exp: 1600, sub: 'system:serviceaccount:ns/../x:y' }), `a.${'x'.repeat(20_000)}.b`]) {
      assert.equal(hubTokenClaims(t), undefined, String(t).slice(0, 40));
    }
  });
  it('is renewed halfway through its lifetime (a hub may be away for the other half), or sooner when asked', () => {
    const t = hubTokenClaims(jwt({ iat: 0, exp: 900, sub: sa }))!;
    assert.equal(renewalDue(t), 450_000);
    assert.equal(renewalDue(t, 20), 20_000);
    assert.equal(renewalDue(t, 3600), 450_000);
    assert.deepEqual(tokenRequest(tokenLifetimeSeconds(t)), { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 900 } }, 'as long-lived as the one granted');
    assert.equal(tokenRequestPath(t), '/api/v1/namespaces/cluster-registry/serviceaccounts/cluster-registry-spoke-eu1/token');
  });
  it('is replaced in the kubeconfig, and nothing else is', () => {
    const kubeconfig = ['apiVersion: v1', 'kind: Config', 'clusters:', '- name: hub', '  cluster:', '    server: https://hub:6443', '    tls-server-name: hub.example', 'users:', '- name: spoke', '  user:', '    token: old-token', '- name: other', '  user:', '    token: other-token', ''].join('\n');
    assert.deepEqual(parse(withToken(kubeconfig, 'old-token', 'new-token') ?? ''), parse(kubeconfig.replace('old-token', 'new-token')));
    assert.equal(withToken(kubeconfig, 'missing', 'x'), undefined);
    assert.equal(withToken(kubeconfig.replace('other-token', 'old-token'), 'old-token', 'x'), undefined, 'two users holding it: ambiguous');
    assert.equal(withToken('users: [', 'old-token', 'x'), undefined);
  });
});

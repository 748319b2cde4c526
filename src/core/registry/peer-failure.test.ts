import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CREDENTIALS_REFUSED, peerFailure, unreachableMessage, unusableSettings } from './peer-failure.ts';

describe('peerFailure', () => {
  it('tells refused credentials and an unreachable peer from other failures by what the reconciler writes', () => {
    const since = Date.parse('2026-01-01T00:00:00Z');
    const cases: [string | undefined, string, string][] = [
      ['MissingAuthInfo', 'spec.authInfo.secretRef must name the credentials Secret (name and namespace)', 'credentials'],
      ['InvalidAuthInfo', 'credentials Secret cr/x not found', 'credentials'],
      ['Failed', unreachableMessage(since, CREDENTIALS_REFUSED.unauthorized), 'credentials'],
      ['Failed', unreachableMessage(since, CREDENTIALS_REFUSED.forbidden), 'credentials'],
      // The credentials Secret's kubeconfig parses, but its client key does not.
      ['Failed', unreachableMessage(since, unusableSettings('the client key is not a PEM private key')), 'credentials'],
      ['Failed', unreachableMessage(since, 'cannot reach the peer: connect ECONNREFUSED (unusable connection settings: none)'), 'unreachable'],
      ['Failed', unreachableMessage(since, 'cannot reach the peer: ECONNREFUSED'), 'unreachable'],
      ['Failed', 'invalid cluster ID: the credentials reach cluster x, but spec.clusterID is y; nothing is synced from it', 'other'],
      ['Ready', '', 'other'],
      [undefined, '', 'other'],
    ];
    for (const [state, message, want] of cases) assert.equal(peerFailure(state, message), want, message);
    assert.equal(unreachableMessage(since, 'e'), 'peer unreachable since 2026-01-01T00:00:00.000Z: e');
    assert.equal(unreachableMessage(since, unusableSettings('e')), 'peer unreachable since 2026-01-01T00:00:00.000Z: unusable connection settings: e', 'the text written is unchanged');
  });
});

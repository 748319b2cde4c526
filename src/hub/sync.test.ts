import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hubWrites } from './sync.ts';

describe('the writes a spoke may send its hub', () => {
  it('are PATCHes of objects of the kind or their status, and PUTs of the Secrets named: nothing else', () => {
    const allowed = hubWrites({ group: 'example.com', version: 'v1', resource: 'databases' }, ['db-credentials-eu1']);
    for (const [method, path] of [
      ['PATCH', '/apis/example.com/v1/namespaces/team-eu1/databases/db-eu1'],
      ['PATCH', '/apis/example.com/v1/namespaces/team-eu1/databases/db-eu1/status'],
      ['PATCH', '/apis/example.com/v1/databases/cluster-scoped'],
      ['PUT', '/api/v1/namespaces/team-eu1/secrets/db-credentials-eu1'],
    ] as const) {
      assert.ok(allowed(method, path), `${method} ${path}`);
    }
    for (const [method, path] of [
      ['PUT', '/apis/example.com/v1/namespaces/team-eu1/databases/db-eu1'],
      ['DELETE', '/apis/example.com/v1/namespaces/team-eu1/databases/db-eu1'],
      ['POST', '/apis/example.com/v1/namespaces/team-eu1/databases'],
      ['PATCH', '/apis/example.com/v1/namespaces/team-eu1/databases/db-eu1/scale'],
      ['PATCH', '/apis/example.comx/v1/namespaces/team-eu1/databases/db-eu1'],
      ['PATCH', '/apis/example.com/v1/namespaces/team-eu1/otherkinds/db-eu1'],
      ['PUT', '/api/v1/namespaces/team-eu1/secrets/other'],
      ['PATCH', '/api/v1/namespaces/team-eu1/secrets/db-credentials-eu1'],
      ['PUT', '/api/v1/namespaces/team-eu1/secrets/db-credentials-eu1x'],
    ] as const) {
      assert.ok(!allowed(method, path), `${method} ${path}`);
    }
    assert.ok(!hubWrites({ group: '', version: 'v1', resource: 'configmaps' }, [])('PUT', '/api/v1/namespaces/a/secrets/x'), 'no Secret listed: none');
    assert.ok(hubWrites({ group: '', version: 'v1', resource: 'configmaps' }, [])('PATCH', '/api/v1/namespaces/a/configmaps/x'));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatApiVersion, formatOriginalGVK, fullGVK, gvkOf, parseApiVersion, sameGVK } from './gvk.ts';

describe('gvk', () => {
  it('parses apiVersion with the core group as ""', () => {
    assert.deepEqual(parseApiVersion('v1'), { group: '', version: 'v1' });
    assert.deepEqual(parseApiVersion('apps/v1'), { group: 'apps', version: 'v1' });
    assert.deepEqual(parseApiVersion(undefined), { group: '', version: '' });
    assert.deepEqual(gvkOf({ apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1', kind: 'Cluster', metadata: {} }), {
      group: 'clusterregistry.k8s.cisco.com',
      version: 'v1alpha1',
      kind: 'Cluster',
    });
  });

  it('formats apiVersion and the original-gvk annotation', () => {
    assert.equal(formatApiVersion({ version: 'v1' }), 'v1');
    assert.equal(formatApiVersion({ group: 'apps', version: 'v1' }), 'apps/v1');
    assert.equal(formatOriginalGVK({ version: 'v1', kind: 'Secret' }), 'Secret./v1');
    assert.equal(formatOriginalGVK({ group: 'apps', version: 'v1', kind: 'Deployment' }), 'Deployment.apps/v1');
  });

  it('compares with absent fields equal to ""', () => {
    assert.ok(sameGVK({ version: 'v1', kind: 'Secret' }, { group: '', version: 'v1', kind: 'Secret' }));
    assert.ok(!sameGVK({ version: 'v1', kind: 'Secret' }, { group: 'x', version: 'v1', kind: 'Secret' }));
    assert.deepEqual(fullGVK({}), { group: '', version: '', kind: '' });
  });
});

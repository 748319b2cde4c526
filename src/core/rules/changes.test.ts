import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../api/types.ts';
import { copyRelevantChange } from './changes.ts';

const base: KubeObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 's', namespace: 'n', resourceVersion: '1', generation: 1, labels: { a: '1' }, managedFields: [{ manager: 'x' }] },
  data: { k: 'dg==' },
};

describe('copyRelevantChange', () => {
  it('ignores resourceVersion, managedFields and generation bumps', () => {
    assert.equal(copyRelevantChange(base, { ...base, metadata: { ...base.metadata, resourceVersion: '2', generation: 2, managedFields: [] } }, true), false);
  });
  it('sees removals (upstream missed them)', () => {
    assert.equal(copyRelevantChange(base, { ...base, metadata: { ...base.metadata, labels: {} } }, false), true);
    assert.equal(copyRelevantChange(base, { ...base, data: {} }, false), true);
  });
  it('counts status only when the rule syncs it', () => {
    const withStatus = { ...base, status: { phase: 'x' } };
    assert.equal(copyRelevantChange(base, withStatus, false), false);
    assert.equal(copyRelevantChange(base, withStatus, true), true);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeMutationFailure, RuleError } from './errors.ts';

describe('describeMutationFailure', () => {
  const err = new RuleError([
    { path: 'spec.rules[0].mutations.overrides[0].value', message: 'template: :1: error calling fail: s3cr3t-value' },
    { path: 'spec.rules[0].mutations.overrides[1]', message: 'could not apply patch op: found map keys: password' },
  ]);
  it('says all for objects other than Secrets', () => {
    assert.equal(describeMutationFailure(err, false), err.message);
  });
  it('says only where in the rule it failed for a Secret, never what it quoted', () => {
    const text = describeMutationFailure(err, true);
    assert.doesNotMatch(text, /s3cr3t|password/);
    assert.match(text, /^spec\.rules\[0\]\.mutations\.overrides\[0\]\.value: failed on this Secret .*; spec\.rules\[0\]\.mutations\.overrides\[1\]: failed on this Secret/);
  });
});

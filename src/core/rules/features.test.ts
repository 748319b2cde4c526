import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { featuresSatisfied, type AdvertisedFeature } from './features.ts';

const a: AdvertisedFeature = { featureName: 'a', labels: { testlabel: 'testlabelvalue', testlabelkey: 'x' } };
const b: AdvertisedFeature = { featureName: 'b', labels: {} };

describe('featuresSatisfied', () => {
  it('holds without requirements, even for a peer with no features', () => {
    assert.equal(featuresSatisfied(undefined, []), true);
    assert.equal(featuresSatisfied([], []), true);
  });
  it('needs every requirement (upstream: pending until both A and B are advertised)', () => {
    const reqs = [
      { featureName: 'a', matchLabels: { testlabel: 'testlabelvalue' }, matchExpressions: [{ key: 'testlabelkey', operator: 'Exists' }] },
      { featureName: 'b' },
    ];
    assert.equal(featuresSatisfied(reqs, []), false);
    assert.equal(featuresSatisfied(reqs, [a]), false);
    assert.equal(featuresSatisfied(reqs, [a, b]), true);
    assert.equal(featuresSatisfied(reqs, [b]), false);
  });
  it('matches labels of the feature with the required name only', () => {
    const reqs = [{ featureName: 'b', matchLabels: { testlabel: 'testlabelvalue' } }];
    assert.equal(featuresSatisfied(reqs, [a, b]), false);
    assert.equal(featuresSatisfied([{ matchLabels: { testlabel: 'testlabelvalue' } }], [b, a]), true);
  });
  it('an empty requirement needs at least one feature', () => {
    assert.equal(featuresSatisfied([{}], []), false);
    assert.equal(featuresSatisfied([{}], [b]), true);
  });
  it('NotIn and DoesNotExist work on feature labels', () => {
    assert.equal(featuresSatisfied([{ matchExpressions: [{ key: 'testlabel', operator: 'DoesNotExist' }] }], [a]), false);
    assert.equal(featuresSatisfied([{ matchExpressions: [{ key: 'testlabel', operator: 'NotIn', values: ['other'] }] }], [a]), true);
  });
});

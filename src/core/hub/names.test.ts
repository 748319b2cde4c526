import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { localPlace, type HubNames } from './names.ts';

describe('hub names', () => {
  const names: HubNames = { suffix: '-eu1', namespaceSuffix: '-eu1', namespacePrefix: 'region-' };

  it('takes only the hub objects with the suffixes, and strips them', () => {
    assert.deepEqual(localPlace({ namespace: 'team-a-eu1', name: 'db-eu1' }, names), { place: { namespace: 'region-team-a', name: 'db' } });
    assert.deepEqual(localPlace({ name: 'db-eu1' }, names), { place: { name: 'db' } }, 'cluster-scoped: the name alone');
    assert.equal(localPlace({ namespace: 'team-a-eu1', name: 'db-us1' }, names), undefined, "another spoke's object");
    assert.equal(localPlace({ namespace: 'team-a-us1', name: 'db-eu1' }, names), undefined, "another spoke's namespace");
    assert.equal(localPlace({ namespace: 'team-a-eu1', name: '-eu1' }, names), undefined, 'nothing is left once the suffix goes');
    assert.deepEqual(localPlace({ namespace: 'a', name: 'b' }, {}), { place: { namespace: 'a', name: 'b' } }, 'no suffix: every object, as named');
  });

  it('refuses a mapped name that is not a valid name, instead of repairing it', () => {
    assert.match((localPlace({ namespace: 'team-eu1', name: 'Db-eu1' }, names) as { refused: string }).refused, /name "Db"/);
    assert.match((localPlace({ namespace: 'a.b-eu1', name: 'db-eu1' }, names) as { refused: string }).refused, /namespace "region-a.b"/);
    assert.match((localPlace({ namespace: `${'x'.repeat(60)}-eu1`, name: 'db-eu1' }, names) as { refused: string }).refused, /is not a valid namespace name/, 'the prefix makes it longer than 63');
  });
});

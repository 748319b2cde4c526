import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressable } from './names.ts';
import type { KubeObject } from './types.ts';

describe('addressable', () => {
  it('tells the names a template can make that no request path can carry', () => {
    const named = (name: string | undefined, namespace?: string): KubeObject => ({ metadata: { ...(name !== undefined ? { name } : {}), ...(namespace !== undefined ? { namespace } : {}) } });
    for (const o of [named(''), named(undefined), named('.'), named('..'), named('a', '.'), named('a', '..'), named('a%b'), named('a/b'), named('a', 'n%s')]) assert.equal(addressable(o), false, JSON.stringify(o.metadata));
    for (const o of [named('a'), named('a', 'ns'), named('...'), named('a.b', 'ns')]) assert.equal(addressable(o), true, JSON.stringify(o.metadata));
  });
});

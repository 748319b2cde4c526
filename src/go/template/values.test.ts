import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fromJSON, isTrue, T, T_MAP_ANY, T_SLICE_ANY, compareStrings } from './values.ts';

describe('Go value model', () => {
  it('decodes JSON like unstructured: int64, float64, nil, maps and slices', () => {
    assert.equal(fromJSON(3).t, T.int64);
    assert.equal(fromJSON(3.5).t, T.float64);
    assert.equal(fromJSON(null).t, T.any);
    assert.equal(fromJSON({}).t, T_MAP_ANY);
    assert.equal(fromJSON([]).t, T_SLICE_ANY);
  });

  it('has Go truthiness', () => {
    for (const falsy of [0, '', [], {}, null, false, 0.0]) assert.equal(isTrue(fromJSON(falsy)), false);
    for (const truthy of [1, 'x', [0], { a: 1 }, true, 0.5]) assert.equal(isTrue(fromJSON(truthy)), true);
  });

  it('orders strings by code point (UTF-8 byte order)', () => {
    assert.deepEqual(['\uff01', '\u{1f600}', 'b', 'B'].sort(compareStrings), ['B', 'b', '\uff01', '\u{1f600}']);
  });
});

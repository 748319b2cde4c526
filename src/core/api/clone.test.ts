import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { cloneJSON, without } from './clone.ts';

function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

describe('cloneJSON', () => {
  it('gives an equal, unfrozen value sharing nothing with a frozen original', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const original = JSON.parse(JSON.stringify(v)) as unknown;
        deepFreeze(original);
        const copy = cloneJSON(original);
        assert.deepEqual(copy, original);
        const walk = (a: unknown, b: unknown): void => {
          if (typeof a !== 'object' || a === null) return;
          assert.notEqual(a, b);
          assert.equal(Object.isFrozen(a), false);
          for (const k of Object.keys(a)) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
        };
        walk(copy, original);
      }),
    );
  });

  it('keeps a __proto__ key as data, not as the prototype', () => {
    const original = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = cloneJSON(original);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: true });
    assert.equal(JSON.stringify(copy), JSON.stringify(original));
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('without', () => {
  it('is the record without the keys, in the same order, the original untouched', () => {
    const recordAndKeys = fc.dictionary(fc.string(), fc.jsonValue()).chain((record) => fc.tuple(fc.constant(record), fc.tuple(fc.subarray(Object.keys(record)), fc.array(fc.string())).map(([some, others]) => [...some, ...others])));
    fc.assert(
      fc.property(recordAndKeys, ([record, keys]) => {
        const original = JSON.parse(JSON.stringify(record)) as Record<string, unknown>;
        const before = JSON.stringify(original);
        const out = without(original, keys);
        assert.deepEqual(Object.entries(out), Object.entries(original).filter(([k]) => !keys.includes(k)));
        assert.equal(JSON.stringify(original), before);
      }),
    );
  });

  it('keeps a __proto__ key as data, not as the prototype', () => {
    const out = without(JSON.parse('{"__proto__": {"polluted": true}, "a": 1, "b": 2}') as Record<string, unknown>, ['b']);
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(JSON.stringify(out), '{"__proto__":{"polluted":true},"a":1}');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compareGo, goQuote, utf8Length } from './gostring.ts';
import { gjsonGet, jsonMarshalForMatch } from './index.ts';

const json = jsonMarshalForMatch({
  metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'web' } },
  spec: { replicas: 3, ratio: 2.5, on: true, off: false, none: null },
  items: [{ n: 'a', v: 1 }, { n: 'b', v: 2 }, { n: 'c', v: 3 }],
});

describe('gjsonGet', () => {
  it('follows dot paths with escapes', () => {
    assert.equal(gjsonGet(json, 'metadata.name').str(), 'web');
    assert.equal(gjsonGet(json, 'metadata.labels.app\\.kubernetes\\.io/name').str(), 'web');
    assert.equal(gjsonGet(json, 'metadata.labels.app.kubernetes.io/name').exists, false);
  });

  it('coerces like Int() and String()', () => {
    const r = (p: string): [boolean, bigint, string] => {
      const res = gjsonGet(json, p);
      return [res.exists, res.int(), res.str()];
    };
    assert.deepEqual(r('spec.replicas'), [true, 3n, '3']);
    assert.deepEqual(r('spec.ratio'), [true, 2n, '2.5']);
    assert.deepEqual(r('spec.on'), [true, 1n, 'true']);
    assert.deepEqual(r('spec.off'), [true, 0n, 'false']);
    assert.deepEqual(r('spec.none'), [true, 0n, '']);
    assert.deepEqual(r('spec.missing'), [false, 0n, '']);
    assert.deepEqual(r('metadata.name'), [true, 0n, 'web']);
    assert.deepEqual(r('metadata.labels'), [true, 0n, '{"app.kubernetes.io/name":"web"}']);
    assert.equal(gjsonGet('{"s":"-42"}', 's').int(), -42n);
    assert.equal(gjsonGet('{"n":1e300}', 'n').str(), '1' + '0'.repeat(300));
    assert.equal(gjsonGet('{"n":9223372036854775808}', 'n').int(), -9223372036854775808n); // gjson's parseInt wraps
  });

  it('supports wildcards, arrays, queries, pipes and modifiers', () => {
    assert.equal(gjsonGet(json, 'meta*.n?me').str(), 'web');
    assert.equal(gjsonGet(json, 'items.#').int(), 3n);
    assert.equal(gjsonGet(json, 'items.1.n').str(), 'b');
    assert.equal(gjsonGet(json, 'items.#.n').raw, '["a","b","c"]');
    assert.equal(gjsonGet(json, 'items.#(v>1).n').str(), 'b');
    assert.equal(gjsonGet(json, 'items.#(v>1)#.n').raw, '["b","c"]');
    assert.equal(gjsonGet(json, 'items.#(n%"?")#|#').int(), 3n);
    assert.equal(gjsonGet(json, 'items.#.n|@reverse').raw, '["c","b","a"]');
    assert.equal(gjsonGet(json, 'metadata.@this.name').str(), 'web');
    assert.equal(gjsonGet(json, 'items.#(').exists, false);
  });

  it('finds every top-level key of a marshalled object by its escaped name', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 4 }), (obj) => {
        const text = jsonMarshalForMatch(obj);
        return Object.keys(obj).every((k) => {
          const path = k.replace(/[.|*?\\#@[\]{}()!=<>%"~:,]/g, (c) => '\\' + c);
          if (path === '' || [...k].some((c) => c < ' ') || (path.length > 1 && (path[0] === '[' || path[0] === '{' || path[0] === '@'))) return true;
          return gjsonGet(text, path).raw === jsonMarshalForMatch(obj[k]);
        });
      }),
    );
  });
});

describe('jsonMarshalForMatch', () => {
  it('sorts keys in byte order and escapes like encoding/json', () => {
    assert.equal(jsonMarshalForMatch({ b: 1, a: '<&>', é: [null, 1.5, '\u2028'] }), '{"a":"\\u003c\\u0026\\u003e","b":1,"é":[null,1.5,"\\u2028"]}');
  });
});

describe('Go string helpers', () => {
  it('measure, order and quote like Go', () => {
    assert.equal(utf8Length('aé😀'), 7);
    assert.ok(compareGo('\uffff', '😀') < 0);
    assert.equal(goQuote('a"\n\u0007é\u200b'), '"a\\"\\n\\aé\\u200b"');
  });
});

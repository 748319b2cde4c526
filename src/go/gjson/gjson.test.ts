import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compareGo, goQuote, goByteLength } from '../strings.ts';
import { GjsonLimitError, gjsonGet, jsonMarshalForMatch } from './index.ts';
import { noSlowerThan } from '../../../test/support/timing.ts';

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

describe('wildcard matching (% and !% queries, wildcard keys)', () => {
  it("gives Go's answers, the suffix and escape quirks included", () => {
    const m = (subject: string, pattern: string): boolean => gjsonGet(jsonMarshalForMatch([subject]), `#(%${JSON.stringify(pattern)})#|#`).int() === 1n;
    assert.equal(m('abc', 'a*c'), true);
    assert.equal(m('abc', 'a?c'), true);
    assert.equal(m('a*c', 'a\\*c'), true);
    assert.equal(m('abc', 'a\\*c'), false);
    assert.equal(m('xa\\', '*a\\'), true); // a trailing backslash is literal when matched from the end
    assert.equal(m('a\\', 'a\\'), false); // and matches nothing from the front
    assert.equal(m('aé😀b', 'a??b'), true); // ? is a rune
    assert.equal(m('ab', '*a*b*c*'), false);
  });

  it('matches patterns Go recurses on exponentially in linear time', () => {
    // Go stops at 10000 calls per byte; the previous port took 29.5 s on a 2,000-character subject.
    const doc = jsonMarshalForMatch(['a'.repeat(2000), 'a'.repeat(1000) + 'b', 'ab'.repeat(1000)]);
    for (const pattern of ['*a*a*a*a*a*a*a*a*a*a*b*', '*?*?*?*?*?*?*?*?*?*?c', '*ab*ab*ab*ab*ab*ab*ac*']) {
      noSlowerThan(() => gjsonGet(doc, `#(%${JSON.stringify(pattern)})#`), () => gjsonGet(doc, '#(%"*b*")#'), 10);
    }
    assert.equal(gjsonGet(doc, '#(%"*a*a*a*a*a*a*a*a*a*a*b*")#|#').int(), 2n);
    assert.equal(gjsonGet(doc, '#(!%"*a*a*a*a*a*a*a*a*a*a*b*")#|#').int(), 1n);
  });

  it('bounds the comparisons of one Get over many long subjects', () => {
    // every element is searched at every position for a 200-rune stretch: 2·10^8 comparisons
    const doc = jsonMarshalForMatch(Array.from({ length: 40 }, () => 'a'.repeat(50_000)));
    const stretch = `*${'a'.repeat(200)}b*`;
    noSlowerThan(() => gjsonGet(doc, `#(%${JSON.stringify(stretch)})#|#`), () => gjsonGet(doc, '#(%"*b*")#|#'), 20);
    assert.equal(gjsonGet(doc, `#(%${JSON.stringify(stretch)})#|#`).int(), 0n);
    // a key pattern is matched against every key the same way
    const keys = jsonMarshalForMatch(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`${i}${'a'.repeat(50_000)}`, i])));
    noSlowerThan(() => gjsonGet(keys, `*${'a'.repeat(200)}b`), () => gjsonGet(keys, '*b'), 20);
  });
});

describe('other linear-time parsing of peer input', () => {
  it('reads number query values and trims @flatten items in linear time', () => {
    // Both went through regexes that backtrack quadratically: a long digit run ending badly,
    // a long run of spaces inside an item.
    const digits = '1'.repeat(100_000);
    noSlowerThan(() => gjsonGet('[1,2]', `#(>${digits}x)#`), () => gjsonGet('[1,2]', `#(>${digits})#`), 5);
    const spaced = jsonMarshalForMatch([`a${' '.repeat(100_000)}b`, [`c${' '.repeat(100_000)}d`]]);
    const plain = jsonMarshalForMatch([`a${'x'.repeat(100_000)}b`, [`c${'x'.repeat(100_000)}d`]]);
    noSlowerThan(() => gjsonGet(spaced, '@flatten'), () => gjsonGet(plain, '@flatten'), 5);
    assert.equal(gjsonGet('[1,2,3]', '#(>1.5e0)#').raw, '[2,3]');
    assert.equal(gjsonGet('[1,2,3]', '#(>1_0)#').raw, '[]');
    assert.equal(gjsonGet('[[ 1 ], 2]', '@flatten').raw, '[1,2]');
  });
});

describe('jsonMarshalForMatch', () => {
  it('sorts keys in byte order and escapes like encoding/json', () => {
    assert.equal(jsonMarshalForMatch({ b: 1, a: '<&>', é: [null, 1.5, '\u2028'] }), '{"a":"\\u003c\\u0026\\u003e","b":1,"é":[null,1.5,"\\u2028"]}');
  });
});

describe('Go string helpers', () => {
  it('measure, order and quote like Go', () => {
    assert.equal(goByteLength('aé😀'), 7);
    assert.ok(compareGo('\uffff', '😀') < 0);
    assert.equal(goQuote('a"\n\u0007é\u200b'), '"a\\"\\n\\aé\\u200b"');
  });
});

describe('@pretty on long values', () => {
  it('prettifies strings, numbers and a prefix far longer than a call takes arguments', () => {
    const long = 'a'.repeat(300_000);
    const doc = JSON.stringify({ s: long, n: Number('1'.repeat(20)), o: { t: long } });
    const out = gjsonGet(doc, '@pretty').str();
    assert.ok(out.includes(`"s": "${long}"`) && out.includes(`"t": "${long}"`));
    const prefixed = gjsonGet('{"a":1}', `@pretty:{"prefix":"${' '.repeat(200_000)}"}`).str();
    assert.ok(prefixed.includes(`\n${' '.repeat(200_000)}  "a": 1\n`));
  });
});

describe('what one Get may build', () => {
  const doc = JSON.stringify({ data: { k: 'd'.repeat(900_000) }, kind: 'ConfigMap' });
  it('lets a path copy a large document a few times, and fails one that would copy it many times over', () => {
    assert.equal(gjsonGet(doc, '@reverse|@reverse|kind').str(), 'ConfigMap');
    assert.throws(() => gjsonGet(doc, `${'@reverse|'.repeat(40)}kind`), GjsonLimitError);
    // Nested selectors double what they build at each level.
    const nested = Array.from({ length: 6 }).reduce<string>((p) => `{a:${p},b:${p}}`, '@this');
    assert.throws(() => gjsonGet(doc, nested), GjsonLimitError);
    assert.throws(() => gjsonGet('{"a":{"b":{"c":{"d":[1,2,3]}}}}', `@pretty:{"indent":"${' '.repeat(2_000_000)}"}`), GjsonLimitError);
    // A flat selector naming the same field many times is charged before it is joined.
    assert.throws(() => gjsonGet(doc, `{${Array.from({ length: 300 }, (_, i) => `a${i}:data`).join(',')}}`), GjsonLimitError);
  });
  it('starts each Get with the whole budget', () => {
    for (let i = 0; i < 40; i++) assert.equal(gjsonGet(doc, '@reverse|kind').str(), 'ConfigMap');
  });
});

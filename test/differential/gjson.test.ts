// gjson v1.9.3 differential test: every path is evaluated by tidwall/gjson (through the Go
// oracle) and by src/go/gjson; exists, Int(), String(), Raw and the type must all agree.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { gjsonGet, jsonMarshalForMatch } from '../../src/go/gjson/index.ts';
import { differentialOracle } from '../support/oracle.ts';

const { oracle, tally } = differentialOracle('gjson');

function ours(json: string, path: string): unknown {
  const r = gjsonGet(json, path);
  return { exists: r.exists, int: r.int().toString(), string: r.str(), raw: r.raw, type: r.type };
}

/** Compares one (json, path); returns a description of the disagreement, if any. */
async function check(json: string, path: string): Promise<string | undefined> {
  tally.cases++;
  const go = await oracle.call('gjson', { json, path });
  const expected = go.ok ? go.result : { error: go.error };
  let actual: unknown;
  try {
    actual = ours(json, path);
  } catch (e) {
    actual = { error: String(e) };
  }
  try {
    assert.deepStrictEqual(actual, expected);
    tally.agree++;
    return undefined;
  } catch {
    return `path ${JSON.stringify(path)} on ${JSON.stringify(json)}:\n  go: ${JSON.stringify(expected)}\n  ts: ${JSON.stringify(actual)}`;
  }
}

async function checkAll(json: string, paths: string[]): Promise<void> {
  const failures: string[] = [];
  for (const path of paths) {
    const f = await check(json, path);
    if (f !== undefined) failures.push(f);
  }
  assert.deepEqual(failures, []);
}

const people = jsonMarshalForMatch({
  name: { first: 'Tom', last: 'Anderson' },
  age: 37,
  children: ['Sara', 'Alex', 'Jack'],
  'fav.movie': 'Deer Hunter',
  friends: [
    { first: 'Dale', last: 'Murphy', age: 44, nets: ['ig', 'fb', 'tw'] },
    { first: 'Roger', last: 'Craig', age: 68, nets: ['fb', 'tw'] },
    { first: 'Jane', last: 'Murphy', age: 47, nets: ['ig', 'tw'] },
  ],
  'a*b': 1,
  'q?': 2,
  'pipe|key': 3,
  'hash#': 4,
  '@at': 5,
});

const object = jsonMarshalForMatch({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'cm',
    namespace: 'default',
    labels: { 'app.kubernetes.io/name': 'web', tier: 'front' },
    annotations: { 'example.com/html': '<b>&amp;</b>' },
  },
  data: { replicas: '3', flag: 'true', empty: '' },
  spec: { replicas: 3, ratio: 0.5, enabled: true, disabled: false, nothing: null, list: [], map: {} },
});

// Every JSON type under Int() and String(), including the `value: 0` edge and large numbers.
const coercions = `{"zero":0,"negzero":-0,"one":1,"neg":-7,"f":1.9,"nf":-1.9,"exp":1e3,"fexp":1.5e300,"tiny":1e-7,` +
  `"safe":9007199254740991,"unsafe":9007199254740993,"i64max":9223372036854775807,"i64over":9223372036854775808,` +
  `"huge":123456789012345678901234567890,"negbig":-98765432109876543210,"bigf":1e19,"frac":0.1,"trail":2.50,` +
  `"s0":"0","s12":"12","sneg":"-12","splus":"+1","sfloat":"1.5","sabc":"abc","sempty":"","sbig":"99999999999999999999",` +
  `"sdash":"-","t":true,"fl":false,"n":null,"o":{"a":1},"a":[1,2],"esc":"a\\"b\\\\c\\u00e9\\ud83d\\ude00\\n",` +
  `"bad":"\\ud800x","bad2":"\\uZZZZ","ws":  [ 1 , 2 ]  }`;

/**
 * Strings Go and JavaScript hold differently, as keys and values: control characters, what
 * HTML-safe escaping changes, lone surrogates (U+FFFD once Go decodes them), astral runes.
 */
const HARD = {
  ctl: 'a\bb\fc\u0001\u001f\u007f\u0000',
  html: "<a href='x'>&amp;</a>\u2028\u2029",
  lone: 'x\ud800y\udcffz\udfff',
  astral: 'a😀b\u{10ffff}',
  '<k&\b\ud800>': 'v',
  list: ['\f', '\udcff', '<>', '😀'],
};

describe('gjson differential', () => {
  it('every modifier and selector on control characters, HTML, lone surrogates and astral runes', () =>
    checkAll(jsonMarshalForMatch(HARD), [
      ...Object.keys(HARD).flatMap((k) => {
        const key = k.replace(/[.*?|#@\\]/g, '\\$&');
        return [key, `${key}|@reverse`, `${key}|@pretty`, `${key}|@ugly`, `${key}|@this`, `${key}|@valid`, `[${key},${key}]`, `{${key},"x":${key}}`];
      }),
      '@pretty', '@ugly', '@reverse', '@this', '@pretty:{"sortKeys":true}', 'list|@join', 'list|@flatten', 'list.#(=="<>")', 'list.#(%"*\ud800*")#',
    ]));


  it('dot paths, escapes, wildcards and indexes', () =>
    checkAll(people, [
      'name.last', 'name.first', 'age', 'children', 'children.#', 'children.0', 'children.2', 'children.3', 'children.-1',
      'child*.2', 'c?ildren.0', '*.first', 'name.*', 'fav\\.movie', 'fav.movie', 'a\\*b', 'a*b', 'q\\?', 'pipe\\|key',
      'hash\\#', 'hash#', '\\@at', '@at', 'friends.1.last', 'friends.1.nets.0', 'friends.01.last', 'friends.18446744073709551616.first',
      'name\\', 'name.', '.name', '', 'x', 'name..first', 'friends.#', 'friends.#.first', 'friends.#.nets', 'friends.#.nets.#',
      'friends.#.nets.0', 'friends.#.missing', 'friends.#.#', '*', '?ame', 'n*e.l*t', 'children.*', 'friends.*.first',
      'name.\\first', '\\n\\a\\m\\e.first', 'fri*.#.age',
    ]));

  it('queries', () =>
    checkAll(people, [
      'friends.#(last=="Murphy").first', 'friends.#(last=="Murphy")#.first', 'friends.#(last=Murphy).first',
      'friends.#(last!="Murphy")#.first', 'friends.#(age>45)#.last', 'friends.#(age>=47)#.last', 'friends.#(age<47)#.last',
      'friends.#(age<=47)#.last', 'friends.#(age==44).first', 'friends.#(age=="44").first', 'friends.#(first%"D*").last',
      'friends.#(first!%"D*")#.last', 'friends.#(first%"?oger").age', 'friends.#(nets.#(=="fb"))#.first',
      'friends.#(nets.#(=="ig")).last', 'friends.#(age)', 'friends.#(missing)', 'friends.#(age)#', 'friends.#[age>45]#.first',
      'friends.#(first>"Jane")#.first', 'friends.#(first<="Jane")#.first', 'children.#(=="Alex")', 'children.#(!="Alex")#',
      'children.#(%"*a*")#', 'friends.#(age>45)#|#', 'friends.#(age>45)#|0.first', 'friends.#(last=="Murphy")#|@reverse',
      'friends.#(', 'friends.#(age', 'friends.#(age>)', 'friends.#()', 'friends.#(last==)#', 'friends.#(last=="")#',
      'friends.#(last=="Mur\\"phy")', 'friends.#(first=~true)#', 'friends.#(age=~true)#.first', 'friends.#(nets.0=="ig")#.first',
      'friends.#(last=="Murphy").nets|#', 'friends.#(age>40).nets.#(=="tw")', 'friends.#(age!47)#.first',
    ]));

  it('pipes, sub-selectors and modifiers', () =>
    checkAll(people, [
      '@this', '@reverse', 'children|@reverse', 'children.@reverse', 'children|@reverse|0', 'children.@reverse.0',
      'name|@reverse', 'friends.#.nets|@flatten', 'friends.#.nets|@flatten:{"deep":true}', 'friends|@join', 'friends.@join:{"preserve":true}',
      '@valid', 'name.@valid', '@ugly', 'friends.0|@pretty', 'name|@pretty:{"sortKeys":true}', 'friends.1|@pretty:{"indent":"\\t","prefix":" "}',
      'children|@pretty:{"width":10}', '@nope', '@', 'name|first', 'name|last|@this', 'friends|#', 'friends|0|age', 'friends.0|nets.1',
      '[name.first,age]', '[name.first,missing,age]', '{name.first,age,"x":children.0}', '{name,nick:name.first}', '{"a":age}|a',
      '[age,children.0].1', '[age', '{age}', '{children.#(=="Alex")}', 'friends.#.{first,age}', '..0', '..#', '@reverse:', '@this:x|0',
      'name.@reverse', 'friends.0.@this.age', '@flatten', 'children|@valid',
    ]));

  it('Int() and String() of every JSON type', () =>
    checkAll(coercions, [
      'zero', 'negzero', 'one', 'neg', 'f', 'nf', 'exp', 'fexp', 'tiny', 'safe', 'unsafe', 'i64max', 'i64over', 'huge', 'negbig',
      'bigf', 'frac', 'trail', 's0', 's12', 'sneg', 'splus', 'sfloat', 'sabc', 'sempty', 'sbig', 'sdash', 't', 'fl', 'n', 'o',
      'a', 'esc', 'bad', 'bad2', 'ws', 'ws.1', 'missing', 'o.a', 'a.#',
    ]));

  it('a Kubernetes object marshalled like upstream', () =>
    checkAll(object, [
      'kind', 'apiVersion', 'metadata.name', 'metadata.labels.app\\.kubernetes\\.io/name', 'metadata.labels.tier',
      'metadata.annotations.example\\.com/html', 'data.replicas', 'data.flag', 'data.empty', 'spec.replicas', 'spec.ratio',
      'spec.enabled', 'spec.disabled', 'spec.nothing', 'spec.list', 'spec.map', 'spec.list.#', 'metadata.labels', 'metadata.*',
      'metadata.labels.*', 'data.*',
    ]));

  // Patterns on which Go's matcher recurses until its limit (10000 calls per byte), or close to
  // it, on long subjects; both must give Go's answers, and ours fast.
  const long = jsonMarshalForMatch({
    a: 'a'.repeat(2000),
    ab: 'ab'.repeat(1000) + 'c',
    mixed: 'x'.repeat(500) + 'é😀'.repeat(300) + 'y',
    esc: 'a*b?c\\d' + 'a'.repeat(300),
    list: ['a'.repeat(1500), 'a'.repeat(700) + 'b' + 'a'.repeat(700), 'ab'.repeat(500), 'z'],
    ['k' + 'a'.repeat(1000) + 'k']: 1,
  });
  const wild = [
    '*a*a*a*a*a*a*a*a*b*', '*a*a*a*a*a*a*a*a*a', 'a*a*a*a*a*a*a*a*a*', '*?*?*?*?*?*?*?*?*?c', '*ab*ab*ab*ab*ab*ac*', '*ab*ab*ab*ab*ab*c',
    '*a?a?a?a*b*', '*x*é😀*é😀*y', '*x*😀é*😀é*z', 'a\\*b*', 'a\\*b\\?c*', '*\\\\d*', '*d\\', 'a*\\', '**a**b**', '*',
  ];
  it('wildcard matching on long subjects', () =>
    checkAll(long, [
      ...['a', 'ab', 'mixed', 'esc'].flatMap((k) => wild.flatMap((w) => [`[${k}].#(%${JSON.stringify(w)})`, `[${k}].#(!%${JSON.stringify(w)})`])),
      ...wild.map((w) => `list.#(%${JSON.stringify(w)})#`),
      ...wild.map((w) => `list.#(!%${JSON.stringify(w)})#|#`),
      'k*a*a*a*a*a*a*k', 'k*a*a*a*a*a*a*b', 'k?a*a?a*a?a*a*k', '*a*a*a*a*a*b', 'k*\\*',
    ]));

  it('number query values and @flatten spacing', () =>
    checkAll(jsonMarshalForMatch([1, 2, 3, 10, 0.5, [' x ', '\u00a0y\u2003'], '  z  ', 'a  \t  b']), [
      ...['1.5e0', '1_0', '0x1p1', '0x_1p1', '111x', '1.', '.5', '1e', '1e+', '1e_1', '+1', '-_1', '_1', '1._5', '1__0', '1.2.3', 'inf', '-Inf', 'NaN', 'e1']
        .flatMap((v) => [`#(>${v})#`, `#(==${v})#`]),
      '@flatten', '@flatten:{"deep":true}', '#.@flatten',
    ]));

  it('malformed JSON', async () => {
    const failures: string[] = [];
    for (const json of ['', '{', '{"a":', '{"a":1', '[1,2', '{"a":"x', '"str"', '5', 'true', '{"a":}', '{a:1}', '[,1]', '{"a" 1}',
      '{"a":1,,"b":2}', '  {"a":[1,{"b":2}]}', '{"a":"\\"}', '{"a\\":1}', '{"a":tru}', '{"a":-}', '{"a":1e}', '{"a":0x10}', '{"a":[}']) {
      for (const path of ['a', 'a.0', 'a.b', 'a.1.b', '#', '0', '@this', 'b', '*', 'a|#']) {
        const f = await check(json, path);
        if (f !== undefined) failures.push(f);
      }
    }
    assert.deepEqual(failures, []);
  });

  it('jsonMarshalForMatch matches json.Marshal of an unstructured object', async () => {
    const values: unknown[] = [
      { b: 1, a: '<&>', c: [1.5, -0, 1e21, 1e-7, 123456789], '\u2028': '\u2029', é: 'x', Z: null, 'a\u0000': '\u0001\b\f\n\r\t' },
      HARD,
      [], {}, 'plain', 0, true, null, { nested: { z: 1, y: { x: [{}] } } },
    ];
    const failures: string[] = [];
    for (const obj of values) {
      tally.cases++;
      const go = await oracle.call('jsonmarshal', { obj });
      if (go.ok && go.result === jsonMarshalForMatch(obj)) tally.agree++;
      else failures.push(`${JSON.stringify(obj)}: go ${JSON.stringify(go)} ts ${jsonMarshalForMatch(obj)}`);
    }
    assert.deepEqual(failures, []);
  });

  // Paths built from gjson's syntax over keys that exist in the generated documents.
  const key = fc.constantFrom('a', 'b', 'c', 'a.b', 'x y', 'é', '', '1', '0');
  const doc = fc.jsonValue({ maxDepth: 3 }).chain((v) => fc.constantFrom(jsonMarshalForMatch(v), JSON.stringify(v, null, 1)));
  const docOf = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }).map(jsonMarshalForMatch);
  const component = fc.oneof(
    key.map((k) => k.replace(/[.|*?\\#@]/g, (c) => '\\' + c)),
    fc.constantFrom('*', '?', 'a*', '*b', '#', '0', '1', '2', '-1', '@this', '@reverse', '@flatten', '@join', '@valid', '@ugly'),
    fc.tuple(key, fc.constantFrom('==', '!=', '<', '<=', '>', '>=', '%', '!%', '='), fc.constantFrom('1', '"a"', 'true', '"*"', '0', 'a'), fc.boolean())
      .map(([k, op, v, all]) => `#(${k}${op}${v})${all ? '#' : ''}`),
    fc.tuple(key, key).map(([x, y]) => `[${x},${y}]`),
    fc.tuple(key, key).map(([x, y]) => `{${x},"k":${y}}`),
  );
  const path = fc.array(fc.tuple(component, fc.constantFrom('.', '|')), { minLength: 1, maxLength: 4 })
    .map((parts) => parts.map(([c, sep], i) => (i === 0 ? c : sep + c)).join(''));
  const noisyPath = fc.string({ unit: fc.constantFrom(...'ab01.|#()[]{}*?\\@!=<>%"~:, '), maxLength: 14 });

  // Wildcard patterns (stars, ?, escapes, a trailing backslash) on subjects from the same runes.
  const wildRune = fc.constantFrom('a', 'b', '*', '?', '\\', 'é', '😀');
  const wildCase = fc.tuple(
    fc.array(fc.string({ unit: wildRune, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    fc.string({ unit: fc.oneof(wildRune, fc.constantFrom('*', '\\*', '\\?', '\\\\')), maxLength: 10 }),
    fc.constantFrom('%', '!%'),
  );

  it('generated wildcard patterns', async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(wildCase, async ([subjects, pattern, op]) => {
        const f = await check(jsonMarshalForMatch(subjects), `#(${op}${JSON.stringify(pattern)})#`);
        if (f !== undefined) failures.push(f);
        return f === undefined;
      }),
      { numRuns: Number(process.env.DIFFERENTIAL_RUNS ?? 1500) },
    );
    assert.deepEqual(failures, []);
  });

  it('generated documents and paths', async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.oneof(doc, docOf), fc.oneof(path, path, noisyPath), async (json, p) => {
        const f = await check(json, p);
        if (f !== undefined) failures.push(f);
        return f === undefined;
      }),
      // DIFFERENTIAL_RUNS raises the number of generated cases for a deeper search.
      { numRuns: Number(process.env.DIFFERENTIAL_RUNS ?? 1500) },
    );
    assert.deepEqual(failures, []);
  });
});

// go-patch v0.2.0 differential test: every op list is applied by cppforlife/go-patch (through
// the Go oracle, on the YAML form of the document, as upstream applies overrides) and by
// src/go/gopatch; the resulting document or the error text must agree.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyOps, type Op } from '../../src/go/gopatch/index.ts';
import { decodedByGo, differentialOracle } from '../support/oracle.ts';

const { oracle, tally } = differentialOracle('gopatch');
// DIFFERENTIAL_RUNS raises the number of generated cases for a deeper search.
const runs = Number(process.env.DIFFERENTIAL_RUNS ?? 1500);

async function check(doc: unknown, ops: unknown[]): Promise<string | undefined> {
  tally.cases++;
  const go = await oracle.call('gopatch', { doc, ops });
  // The oracle omits a null result.
  const expected: unknown = go.ok ? { doc: go.result ?? null } : { error: go.error };
  const before = JSON.stringify(doc);
  let actual: unknown;
  try {
    // JSON round trip: what the oracle can return (it has no undefined, and -0 is 0)
    // The document and the values come as the API server hands them over; the paths as written, which parsePointer takes as Go would.
    const asRead = (ops as Op[]).map((op) => ('value' in op ? { ...op, value: decodedByGo(op.value) } : op));
    actual = { doc: JSON.parse(JSON.stringify(applyOps(decodedByGo(doc), asRead)) ?? 'null') };
  } catch (e) {
    actual = { error: (e as Error).message };
  }
  try {
    assert.deepStrictEqual(actual, expected);
    assert.equal(JSON.stringify(doc), before, 'the input document was modified');
    tally.agree++;
    return undefined;
  } catch (e) {
    return `${JSON.stringify(ops)} on ${before}:\n  go: ${JSON.stringify(expected)}\n  ts: ${JSON.stringify(actual)}\n  ${(e as Error).message.split('\n')[0]}`;
  }
}

const doc = {
  name: 'web',
  n: 1,
  f: 1.5,
  t: true,
  z: null,
  s: 'str',
  m: { k: 'v', 'a/b': 1, 'c:d': 2, 'e~f': 3, '': 'empty', 'x?': 4 },
  list: [{ name: 'a', v: 1 }, { name: 'b' }, { name: 'b' }, 3, 'c', [1, 2], { name: 1 }],
  empty: [],
  nested: { deeper: { leaf: 'x' } },
  // Strings Go and JavaScript hold differently: control characters, HTML, lone surrogates, astral runes.
  hard: { 'a\bb': '\f', '<&>': '\u2028', 'x\ud800': '\udcff', '😀': [{ name: '\ud800' }, { name: '<' }] },
};

const paths = [
  '', '/', '/name', '/missing', '/missing?', '/missing?/x', '/missing?/x/y', '/missing?/-', '/missing?/0', '/missing?/k=v',
  '/missing?/k=v/x', '/m/k', '/m/a~1b', '/m/c~7d', '/m/e~0f', '/m/', '/m/x?', '/m/x??', '/m/k?/extra', '/m/k/extra',
  '/list/0', '/list/6', '/list/7', '/list/-1', '/list/-7', '/list/-8', '/list/+1', '/list/01', '/list/-', '/list/-/x',
  '/list/0/name', '/list/0/v', '/list/0:prev', '/list/0:next', '/list/6:next', '/list/1:prev:prev', '/list/0:before',
  '/list/0:after', '/list/-1:after', '/list/-1:before', '/list/0:before:after', '/list/0:after:prev', '/list/0:prev:after',
  '/list/0:before/name', '/list/0:bogus', '/list/0:prev:bogus', '/list/name=a', '/list/name=a/v', '/list/name=a/w?',
  '/list/name=b', '/list/name=c', '/list/name=c?', '/list/name=c?/v', '/list/name=1', '/list/name=a:next', '/list/name=a:before',
  '/list/name=a:after', '/list/name=a:next/x', '/list/name=a?:after', '/list/name=a:bogus', '/list/name', '/list/k=v=w',
  '/empty/0', '/empty/-', '/empty/-1', '/empty/name=x?', '/n/x', '/n/0', '/s/0', '/t/-', '/z/x', '/z/0', '/f/name=x',
  '/nested/deeper/leaf', '/nested/deeper?/leaf/x', '/nested?/deeper/new', '/name:prev', '/-', '/-:prev', '/list/-:after',
  'name', '~', '/list/9223372036854775807', '/list/9223372036854775807:next', '/list/-9223372036854775808',
  '/list/-9223372036854775808:prev', '/list/9223372036854775808', '/list/1e2', '/list/0x1', '/list/ 1',
  '/hard/a\bb', '/hard/<&>', '/hard/x\ud800', '/hard/x\udcff', '/hard/😀/name=\ud800', '/hard/😀/name=<', '/hard/😀/name=\uFFFD/x?', '/hard/\ud800?/k',
];

const values: unknown[] = ['new', 0, 2.5, true, null, { a: [1, { b: 'c' }] }, [], ['x'], '', 'true', '0', '<\b\ud800>', { '\udcff': '\u2029' }];

describe('gopatch differential', () => {
  it('every path token kind, for replace and remove', async () => {
    const failures: string[] = [];
    for (const path of paths) {
      for (const ops of [[{ type: 'replace', path, value: 'new' }], [{ type: 'remove', path }]]) {
        const f = await check(doc, ops);
        if (f !== undefined) failures.push(f);
      }
    }
    assert.deepEqual(failures, []);
  });

  it('values of every type, and op definitions go-patch rejects', async () => {
    const failures: string[] = [];
    const opLists: unknown[][] = [
      ...values.map((value) => [{ type: 'replace', path: '/m/k', value }]),
      ...values.map((value) => [{ type: 'replace', path: '', value }]),
      ...values.map((value) => [{ type: 'replace', path: '/list/-', value }]),
      [{ type: 'replace', path: '/m/k' }],
      [{ type: 'replace', value: 1 }],
      [{ type: 'remove', path: '/m/k', value: 1 }],
      [{ type: 'remove' }],
      [{ type: 'test', path: '/m/k' }],
      [{ type: 'copy', path: '/m/k', value: 1 }],
      [{ type: '', path: '/m/<&>' }],
      [{ path: '/m/k' }],
      [{ type: 'Replace', path: '/m/k', value: 1 }],
      [{ type: 'replace', path: 'm/k', value: 1 }],
      [{ type: 'replace', path: '/m/k:prev', value: 1 }],
      [{ type: 'replace', path: '/a:bogus', value: 1 }],
      [{ type: 'replace', path: '/-:next', value: 1 }],
      [{ type: 'remove', path: '/x"y\\z\n<>&\u2028' }],
      [{ type: 'replace', path: '/m/k', value: 1 }, { type: 'remove', path: 'bad' }],
      [{ type: 'replace', path: '/m/new?', value: 1 }, { type: 'replace', path: '/m/new', value: 2 }],
      [{ type: 'remove', path: '/list/0' }, { type: 'remove', path: '/list/0' }, { type: 'replace', path: '/list/0:before', value: 'first' }],
      [{ type: 'replace', path: '/missing?/k=v/x', value: 1 }, { type: 'replace', path: '/missing/k=v/y', value: 2 }],
      [{ type: 'remove', path: '/m' }, { type: 'remove', path: '/m?/k' }, { type: 'remove', path: '/m/k' }],
    ];
    for (const ops of opLists) {
      const f = await check(doc, ops);
      if (f !== undefined) failures.push(f);
    }
    for (const d of [null, 'scalar', 5, [], [1, 2], {}]) {
      for (const ops of [[{ type: 'replace', path: '/0', value: 1 }], [{ type: 'replace', path: '/-', value: 1 }], [{ type: 'remove', path: '/k' }], [{ type: 'replace', path: '/k?', value: 1 }]]) {
        const f = await check(d, ops);
        if (f !== undefined) failures.push(f);
      }
    }
    assert.deepEqual(failures, []);
  });

  const key = fc.constantFrom('a', 'b', 'name', 'k', 'x', '');
  const scalar = fc.oneof(fc.constantFrom('a', 'b', 'x', '', 'true'), fc.integer({ min: -5, max: 5 }), fc.boolean(), fc.constant(null));
  const genDoc = fc.letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.array(fc.oneof(tie('node'), fc.record({ name: fc.constantFrom('a', 'b', 'x') }).chain((r) => fc.dictionary(key, tie('node'), { maxKeys: 2 }).map((d) => ({ ...d, ...r })))), { maxLength: 3 }),
      fc.dictionary(key, tie('node'), { maxKeys: 3 }),
    ),
  })).node;
  const token = fc.oneof(
    key.map((k) => k.replace(/[~/:]/g, (c) => (c === '~' ? '~0' : c === '/' ? '~1' : '~7'))),
    key.map((k) => k + '?'),
    fc.integer({ min: -4, max: 4 }).map(String),
    fc.constantFrom('-', 'name=a', 'name=b?', 'name=x', 'k=v?'),
    fc.tuple(fc.constantFrom('0', '1', '-1', 'name=a', 'name=b'), fc.constantFrom(':prev', ':next', ':before', ':after', ':prev:next', ':after:next'))
      .map(([t, m]) => t + m),
  );
  const genPath = fc.array(token, { maxLength: 4 }).map((ts) => ts.map((t) => '/' + t).join(''));
  const genOp = fc.oneof(
    fc.record({ type: fc.constant('replace'), path: genPath, value: genDoc }),
    fc.record({ type: fc.constant('remove'), path: genPath }),
  );

  it('generated documents and ops', async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(genDoc, fc.array(genOp, { minLength: 1, maxLength: 3 }), async (d, ops) => {
        const f = await check(d, ops);
        if (f !== undefined) failures.push(f);
        return f === undefined;
      }),
      { numRuns: runs },
    );
    assert.deepEqual(failures, []);
  });
});

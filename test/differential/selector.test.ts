// Label selector differential test: every selector is parsed and matched by apimachinery
// v0.21.3 (through the Go oracle) and by src/go/labels; the match result, String() and
// error texts must agree.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { labelSelectorToSelector, parseSelector, type LabelSelector, type Selector } from '../../src/go/labels/index.ts';
import { differentialOracle } from '../support/oracle.ts';

const { oracle, tally } = differentialOracle('selector');
// DIFFERENTIAL_RUNS raises the number of generated cases for a deeper search.
const runs = Number(process.env.DIFFERENTIAL_RUNS ?? 1500);

type Input = { selector: string } | { labelSelector: LabelSelector | null };

function ours(input: Input, labels: Record<string, string>): unknown {
  let sel: Selector;
  try {
    sel = 'selector' in input ? parseSelector(input.selector) : labelSelectorToSelector(input.labelSelector);
  } catch (e) {
    return { error: (e as Error).message };
  }
  return { matches: sel.matches(labels), string: sel.toString() };
}

// Go walks matchLabels in random order, so with several invalid entries only "it fails" is comparable.
function errorIsDeterministic(input: Input): boolean {
  if (!('labelSelector' in input) || input.labelSelector === null) return true;
  const entries = Object.entries(input.labelSelector.matchLabels ?? {});
  let invalid = 0;
  for (const [k, v] of entries) {
    try {
      labelSelectorToSelector({ matchLabels: { [k]: v } });
    } catch {
      invalid++;
    }
  }
  return invalid <= 1;
}

async function check(input: Input, labels: Record<string, string>): Promise<string | undefined> {
  tally.cases++;
  const go = await oracle.call('selector', { ...input, labels });
  const expected: unknown = go.ok ? go.result : { error: go.error };
  let actual = ours(input, labels);
  if (!go.ok && !errorIsDeterministic(input) && typeof actual === 'object' && actual !== null && 'error' in actual) {
    actual = expected;
  }
  try {
    assert.deepStrictEqual(actual, expected);
    tally.agree++;
    return undefined;
  } catch {
    return `${JSON.stringify(input)} on ${JSON.stringify(labels)}:\n  go: ${JSON.stringify(expected)}\n  ts: ${JSON.stringify(actual)}`;
  }
}

const HARD_STRINGS = ['a\bb\fc\u0001\u007f', '<b>&amp;\u2028', 'x\ud800y\udcffz', 'a😀b', '\udfff'];

const labelSets: Record<string, string>[] = [
  Object.fromEntries(HARD_STRINGS.map((h, i) => [`h${i}`, h])),
  {},
  { a: 'x' },
  { a: 'y', b: '' },
  { a: 'x', b: 'c', 'example.com/k': 'v', n: '5' },
  { in: 'in', notin: 'x', n: '-3', m: '+7', big: '9223372036854775808' },
];

async function checkAll(inputs: Input[]): Promise<void> {
  const failures: string[] = [];
  for (const input of inputs) {
    for (const labels of labelSets) {
      const f = await check(input, labels);
      if (f !== undefined) failures.push(f);
    }
  }
  assert.deepEqual(failures, []);
}

const grammar = [
  '', ' ', 'a', '!a', 'a=x', 'a==x', 'a!=x', 'a=', 'a==', 'a!=', 'a in (x)', 'a in (x,y)', 'a notin (x)', 'a notin (x,y)',
  'a in ()', 'a in (,)', 'a in (x,)', 'a in (,x)', 'a in (x,,y)', 'a in (,,)', 'x in (foo,,baz),y,z notin ()', 'a,b', 'a , b',
  'a=x,b!=c', ' a = x ', '\ta\tin\t(\tx\t)\n', 'a in(x)', 'a in (x y)', 'a in (x', 'a in x', 'a in', 'a notin', 'in in (in)',
  'notin notin (notin)', 'in=x', 'a=in', 'a=notin', 'a in (in,notin)', 'n>4', 'n<6', 'n>-4', 'n>x', 'n>', 'n<', 'm<8', 'big>1',
  'a>=1', 'a<=1', 'a=>1', 'a=b=c', 'a==b==c', 'a!==b', 'a!!', '!!a', '!a=x', '!a,b', '!', ',', 'a,', ',a', 'a,,b', 'a=(x)',
  'a in ((x))', 'a in (x))', 'a)', '(a)', 'a b', 'a=x y', 'a=x,', 'example.com/k=v', 'example.com/k', 'Example.com/k=v', '/k=v',
  'example.com/=v', 'a/b/c=v', 'k_1.x-y=v', '-k=v', 'k-=v', '_k=v', 'k=_v', 'k=v_', 'k=-v', 'k=v.x', 'k=' + 'v'.repeat(63),
  'k=' + 'v'.repeat(64), 'k'.repeat(63) + '=v', 'k'.repeat(64) + '=v', 'p'.repeat(254) + '/k=v', 'p'.repeat(253) + '/k=v',
  'é=x', 'a=é', 'a\u0000b', 'a=x\u0000,b', 'a in (x)\u0000 garbage', 'b=c,a=x', 'b,a,b', 'a=x,a=y', 'a in (y,x,y)',
  'a notin (b,a)', 'a=x,!b,c in (d),e notin (f),g,n>1',
  // Strings Go and JavaScript hold differently: control characters, HTML, lone surrogates, astral runes.
  ...HARD_STRINGS.flatMap((h) => [`a=${h}`, `${h}=x`, `a in (x,${h})`, `a!=${h}`, h]),
];

const labelSelectors: (LabelSelector | null)[] = [
  null, {}, { matchLabels: {} }, { matchExpressions: [] }, { matchLabels: null, matchExpressions: null },
  { matchLabels: { a: 'x' } }, { matchLabels: { a: 'x', b: 'c' } }, { matchLabels: { a: '' } },
  { matchExpressions: [{ key: 'a', operator: 'In', values: ['x', 'y'] }] },
  { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['x'] }] },
  { matchExpressions: [{ key: 'a', operator: 'Exists' }] },
  { matchExpressions: [{ key: 'b', operator: 'DoesNotExist' }] },
  { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] },
  { matchExpressions: [{ key: 'a', operator: 'In' }] },
  { matchExpressions: [{ key: 'a', operator: 'NotIn', values: null }] },
  { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] },
  { matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x', 'y'] }] },
  { matchExpressions: [{ key: 'a', operator: 'in', values: ['x'] }] },
  { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
  { matchExpressions: [{ key: 'a', operator: '', values: ['1'] }] },
  { matchExpressions: [{ key: 'a', operator: 'Bad"Op\n', values: ['1'] }] },
  { matchExpressions: [{ key: 'bad key', operator: 'In', values: ['x'] }] },
  { matchExpressions: [{ key: 'bad key', operator: 'In', values: ['bad value', 'ok', '-x'] }] },
  { matchExpressions: [{ key: 'a', operator: 'In', values: ['y', 'x', 'y'] }] },
  { matchLabels: { 'bad key': 'x' } }, { matchLabels: { a: 'bad value' } }, { matchLabels: { a: 'é\u0007"' } },
  { matchLabels: { a: 'x' }, matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['x'] }] },
  { matchLabels: { b: 'c' }, matchExpressions: [{ key: 'a', operator: 'Exists' }, { key: 'n', operator: 'DoesNotExist' }] },
  { matchExpressions: [{ key: 'example.com/k', operator: 'In', values: ['v'] }, { key: 'a', operator: 'Exists' }] },
  ...HARD_STRINGS.flatMap((h, i): LabelSelector[] => [
    { matchLabels: { [`h${i}`]: h } },
    { matchLabels: { [h]: 'x' } },
    { matchExpressions: [{ key: `h${i}`, operator: 'In', values: [h, 'x'] }] },
    { matchExpressions: [{ key: h, operator: 'Exists' }] },
  ]),
];

describe('selector differential', () => {
  it('string grammar edge cases and invalid inputs', () => checkAll(grammar.map((selector) => ({ selector }))));

  it('LabelSelector objects, nil and empty', () => checkAll(labelSelectors.map((labelSelector) => ({ labelSelector }))));

  const key = fc.constantFrom('a', 'b', 'n', 'in', 'example.com/k', 'bad key', '-k', 'A', 'a.b_c-d', 'x/y/z', '');
  const value = fc.constantFrom('x', 'y', '', 'c', '5', '-3', 'bad value', 'v.1', '_v', 'in');
  const labels = fc.dictionary(fc.constantFrom('a', 'b', 'n', 'in', 'example.com/k'), value, { maxKeys: 4 });
  const op = fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'in');
  const labelSelector = fc.record(
    {
      matchLabels: fc.dictionary(key, value, { maxKeys: 3 }),
      matchExpressions: fc.array(fc.record({ key, operator: op, values: fc.array(value, { maxLength: 3 }) }, { requiredKeys: ['key', 'operator'] }), { maxLength: 3 }),
    },
    { requiredKeys: [] },
  );
  const token = fc.constantFrom('a', 'b', 'n', 'x', 'y', '5', 'in', 'notin', '=', '==', '!=', '!', '(', ')', ',', '>', '<', ' ', 'example.com/k', '-', '.', '/');
  const selectorString = fc.array(token, { maxLength: 10 }).map((ts) => ts.join(''));

  it('generated selectors', async () => {
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.oneof(selectorString.map((selector): Input => ({ selector })), labelSelector.map((ls): Input => ({ labelSelector: ls }))), labels, async (input, ls) => {
        const f = await check(input, ls);
        if (f !== undefined) failures.push(f);
        return f === undefined;
      }),
      { numRuns: runs },
    );
    assert.deepEqual(failures, []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { everything, labelSelectorToSelector, nothing, parseSelector, SelectorError } from './index.ts';

describe('parseSelector', () => {
  it('matches the string grammar', () => {
    const sel = parseSelector('env in (prod,staging), tier!=db, !legacy, app');
    assert.equal(sel.matches({ env: 'prod', tier: 'web', app: 'x' }), true);
    assert.equal(sel.matches({ env: 'prod', tier: 'db', app: 'x' }), false);
    assert.equal(sel.matches({ env: 'prod', app: 'x', legacy: '' }), false);
    assert.equal(sel.matches({ env: 'dev', app: 'x' }), false);
    assert.equal(parseSelector('a=b').matches({ a: 'b' }), true);
    assert.equal(parseSelector('a==b').matches({ a: 'c' }), false);
    assert.equal(parseSelector('a notin (x)').matches({}), true);
    assert.equal(parseSelector('n>4').matches({ n: '5' }), true);
    assert.equal(parseSelector('n<4').matches({ n: 'x' }), false);
  });

  it('prints requirements sorted by key, values sorted, like String()', () => {
    assert.equal(parseSelector('z, b in (y,x,x), a=1').toString(), 'a=1,b in (x,y),z');
    assert.equal(parseSelector('x in (foo,,baz),y,z notin ()').toString(), 'x in (,baz,foo),y,z notin ()');
    assert.equal(parseSelector('').toString(), '');
  });

  it('treats in/notin as identifiers where values are expected', () => {
    assert.equal(parseSelector('in in (in)').matches({ in: 'in' }), true);
  });

  it('rejects bad input with apimachinery messages', () => {
    assert.throws(() => parseSelector('a in (x'), { name: 'SelectorError', message: "unable to parse requirement: found '', expected: ',' or ')'" });
    assert.throws(() => parseSelector('a,'), { message: "found '', expected: identifier after ','" });
    assert.throws(() => parseSelector('a=-b'), (e: unknown) => e instanceof SelectorError && e.message.startsWith('unable to parse requirement: values[0][a]: Invalid value: "-b"'));
    assert.throws(() => parseSelector('Bad/k'), /<nil>: Invalid value: "Bad\/k": prefix part a lowercase RFC 1123 subdomain/);
    assert.throws(() => parseSelector('k=' + 'v'.repeat(64)), /must be no more than 63 characters/);
  });

  it('prints what it parsed back to the same selector', () => {
    const token = fc.constantFrom('a', 'b', 'c.d/e', 'in', 'x', '1', '=', '!=', '==', '!', ' in ', ' notin ', '(', ')', ',', '>', '<');
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }).map((t) => t.join('')), (s) => {
        let printed: string;
        try {
          printed = parseSelector(s).toString();
        } catch (e) {
          return e instanceof SelectorError;
        }
        return parseSelector(printed).toString() === printed;
      }),
    );
  });
});

describe('labelSelectorToSelector', () => {
  it('nil matches nothing, empty matches everything', () => {
    assert.equal(labelSelectorToSelector(null), nothing);
    assert.equal(labelSelectorToSelector(undefined).matches({}), false);
    assert.equal(labelSelectorToSelector({}), everything);
    assert.equal(labelSelectorToSelector({ matchLabels: {}, matchExpressions: [] }).matches({ any: 'x' }), true);
  });

  it('combines matchLabels and matchExpressions', () => {
    const sel = labelSelectorToSelector({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'tier', operator: 'Exists' },
        { key: 'zone', operator: 'NotIn', values: ['a'] },
      ],
    });
    assert.equal(sel.toString(), 'app=web,env in (prod),!legacy,tier,zone notin (a)');
    assert.equal(sel.matches({ app: 'web', env: 'prod', tier: '' }), true);
    assert.equal(sel.matches({ app: 'web', env: 'prod', tier: '', zone: 'a' }), false);
  });

  it('validates operators and values like metav1', () => {
    assert.throws(() => labelSelectorToSelector({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }), { message: '"Gt" is not a valid pod selector operator' });
    assert.throws(() => labelSelectorToSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }), {
      message: "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    });
    assert.throws(() => labelSelectorToSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }), {
      message: 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
    });
    assert.throws(() => labelSelectorToSelector({ matchExpressions: [{ key: 'bad key', operator: 'In', values: ['bad value'] }] }), {
      message: /^\[key: Invalid value: "bad key": .*, values\[0\]\[bad key\]: Invalid value: "bad value": .*\]$/,
    });
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatFloat, goQuote, sprint, sprintf } from './gofmt.ts';
import { anySlice, float64, fromJSON, int, int64, ptrTo, sliceOf, str, T } from './values.ts';

describe('gofmt', () => {
  it('formats floats like strconv (shortest, exact rounding half to even)', () => {
    assert.equal(formatFloat(1e8, 'g', -1), '1e+08');
    assert.equal(formatFloat(123456.0, 'g', -1), '123456');
    assert.equal(formatFloat(2.5, 'f', 0), '2');
    assert.equal(formatFloat(0.125, 'f', 2), '0.12');
    assert.equal(formatFloat(1.5, 'e', 3), '1.500e+00');
    assert.equal(formatFloat(1.5, 'x', -1), '0x1.8p+00');
  });

  it('implements printf verbs, flags and errors', () => {
    assert.equal(sprintf('%05d|%-4s|%x|%q|%.2f', [int(42), str('ab'), str('hi'), str('a"b'), float64(3.14159)]), '00042|ab  |6869|"a\\"b"|3.14');
    assert.equal(sprintf('%d %d', [int(1)]), '1 %!d(MISSING)');
    assert.equal(sprintf('%d', [int(1), str('x')]), '1%!(EXTRA string=x)');
    assert.equal(sprintf('%s', [int64(5)]), '%!s(int64=5)');
  });

  it('prints maps sorted and slices space separated', () => {
    assert.equal(sprint([fromJSON({ b: 1, a: [1, 'x', null] })]), 'map[a:[1 x <nil>] b:1]');
    assert.equal(sprint([str('a'), int(1), int(2), str('b')]), 'a1 2b');
    assert.equal(sprint([anySlice([])]), '[]');
  });

  it('quotes like strconv.Quote', () => {
    assert.equal(goQuote('a\tb\u0001é'), '"a\\tb\\x01é"');
    assert.equal(goQuote('é', true), '"\\u00e9"');
  });

  it('prints Go syntax with %#v', () => {
    assert.equal(sprintf('%#v', [fromJSON({ b: [1, 'x', null], a: {} })]), 'map[string]interface {}{"a":map[string]interface {}{}, "b":[]interface {}{1, "x", interface {}(nil)}}');
    assert.equal(sprintf('%#v|%#v|%#v', [str('q"'), float64(1), { t: sliceOf(T.uint8), v: null }]), '"q\\""|1|[]byte(nil)');
    assert.equal(sprintf('%#v', [{ t: ptrTo(T.int64), v: null }]), '(*int64)(nil)');
  });
});

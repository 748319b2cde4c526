import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate } from './index.ts';

const r = (t: string, d: unknown = {}): string => renderTemplate(t, d);

describe('sprig v2.22 subset', () => {
  it('trunc is byte based and panics on negative counts (v2.22 has no suffix form)', () => {
    assert.equal(r('{{ trunc 3 "abcdef" }}'), 'abc');
    assert.throws(() => r('{{ trunc -1 "abc" }}'), /slice bounds out of range \[:-1\]/);
  });

  it('integer math returns int64, float math float64', () => {
    assert.equal(r('{{ add 1 2.9 }} {{ typeOf (add 1 2) }} {{ floor 2.7 }} {{ typeOf (floor 1) }}'), '3 int64 2 float64');
    assert.throws(() => r('{{ div 1 0 }}'), /integer divide by zero/);
  });

  it('default and empty treat zero values as empty', () => {
    assert.equal(r('{{ default "d" .a }} {{ default "d" .b }} {{ empty .c }}', { a: 0, b: '', c: [] }), 'd d true');
  });

  it('toJson escapes HTML and sorts keys', () => {
    assert.equal(r('{{ toJson . }}', { b: '<x>', a: 1.5 }), '{"a":1.5,"b":"\\u003cx\\u003e"}');
  });

  it('refuses wrong argument types like Go', () => {
    assert.throws(() => r('{{ repeat .n "x" }}', { n: 2 }), /wrong type for value; expected int; got int64/);
  });

  it('string helpers match goutils/xstrings', () => {
    assert.equal(r('{{ snakecase "HTTPServer" }} {{ camelcase "foo_bar" }} {{ kebabcase "fooBar" }} {{ initials "a big cat" }}'), 'http_server FooBar foo-bar abc');
    assert.equal(r('{{ abbrev 5 "hello world" }} {{ wrap 5 "aa bb cc" }}'), 'he... aa bb\ncc');
  });
});

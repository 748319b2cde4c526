import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoRegexp, RegexSyntaxError } from './re2.ts';

describe('RE2 on JS RegExp', () => {
  it('rejects lookaround and backreferences, as RE2 does', () => {
    for (const re of ['a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b', '(a)\\1']) {
      assert.throws(() => new GoRegexp(re), RegexSyntaxError, re);
    }
  });

  it('keeps Go meanings of ., \\s, $ and braces', () => {
    assert.equal(new GoRegexp('a.b').matchString('a\rb'), true); // Go's . only excludes \n
    assert.equal(new GoRegexp('\\s').matchString('\u00a0'), false); // \s is ASCII in Go
    assert.equal(new GoRegexp('a{,2}').findString('a{,2}'), 'a{,2}'); // not a repeat in Go
    assert.equal(new GoRegexp('[[:digit:]]+').findString('ab123'), '123');
    assert.equal(new GoRegexp('(?i)héllo').matchString('HÉLLO'), true);
  });

  it("follows Go's empty-match rules", () => {
    assert.deepEqual(new GoRegexp('a*').findAllString('baaab', -1), ['', 'aaa', '']);
    assert.equal(new GoRegexp('a*').replaceAllString('baaac', '-'), '-b-c-');
    assert.deepEqual(new GoRegexp('').split('abc', -1), ['a', 'b', 'c']);
  });

  it("expands $name like Go's Expand", () => {
    const re = new GoRegexp('(?P<w>\\w+) (\\w+)');
    assert.equal(re.replaceAllString('hello world', '$2 ${w} $1x $$'), 'world hello  $');
  });
});

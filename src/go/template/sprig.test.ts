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

  it('trims trailing runs in linear time (base32 padding, path base)', () => {
    // A long run not at the very end took quadratic time through /=+$/ and /\/+$/.
    const fastest = (t: string): number => {
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const start = performance.now();
        r(t);
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    const n = 200_000;
    for (const [adversarial, baseline] of [
      [`{{ b32dec (printf "%sx" (repeat ${n - 1} "=")) }}`, `{{ b32dec (printf "%sx" (repeat ${n - 1} "A")) }}`],
      [`{{ base (printf "%sx" (repeat ${n} "/")) }}`, `{{ base (printf "%sx" (repeat ${n} "a")) }}`],
    ]) {
      const base = fastest(baseline!);
      const adv = fastest(adversarial!);
      assert.ok(adv <= 5 * base + 1, `${adversarial}: ${adv.toFixed(1)} ms, baseline ${base.toFixed(1)} ms`);
    }
    assert.equal(r('{{ base "a/b//" }} {{ b32dec "MFRGG===" }}'), 'b abc');
  });

  it('keeps what Go keeps: a leading U+FEFF through bytes, a list deep-equal to itself even holding NaN', () => {
    assert.equal(r('{{ trunc 10 "\ufeffabc" }}|{{ b64dec "77u/YQ==" }}'), '\ufeffabc|\ufeffa');
    assert.equal(r('{{ $l := list (float64 "NaN") }}{{ deepEqual $l $l }} {{ deepEqual $l (list (float64 "NaN")) }}'), 'true false');
  });

  it('string helpers match goutils/xstrings', () => {
    assert.equal(r('{{ snakecase "HTTPServer" }} {{ camelcase "foo_bar" }} {{ kebabcase "fooBar" }} {{ initials "a big cat" }}'), 'http_server FooBar foo-bar abc');
    assert.equal(r('{{ abbrev 5 "hello world" }} {{ wrap 5 "aa bb cc" }}'), 'he... aa bb\ncc');
  });

  it('semver and semverCompare follow Masterminds/semver v1.5.0', () => {
    assert.equal(r('{{ semver "v1.2.3-rc.1+b" }} {{ (semver "1.2").Minor }} {{ (semver "1.2.3").IncMinor }}'), '1.2.3-rc.1+b 2 {1 3 0   1.3.0}');
    assert.throws(() => r('{{ (semver "1.2.3").IncMinor.Original }}'), /can't evaluate field Original in type semver\.Version$/, 'a returned Version is not addressable');
    assert.equal(r('{{ semverCompare ">=1.2.3, <2" "1.9.0" }} {{ semverCompare "^1.2" "2.0.0" }} {{ semverCompare "~1.2.x" "1.2.9" }} {{ semverCompare ">1.0" "1.2.0-beta" }}'), 'true false true false');
    assert.throws(() => r('{{ semverCompare ">=1.2.3 <2" "1.5.0" }}'), /error calling semverCompare: improper constraint: >=1\.2\.3 <2$/);
    assert.throws(() => r('{{ semver "1.2.3.4" }}'), /error calling semver: Invalid Semantic Version$/);
  });

  it('urlParse and urlJoin follow net/url', () => {
    assert.equal(r('{{ $u := urlParse "https://u:p@Host.example:8443/a%2Fb?q=1#f" }}{{ $u.scheme }} {{ $u.hostname }} {{ $u.path }} {{ $u.userinfo }} {{ urlJoin $u }}'), 'https Host.example /a/b u:p https://u:p@Host.example:8443/a/b?q=1#f');
    assert.throws(() => r('{{ urlParse "http://[::1" }}'), /error calling urlParse: unable to parse url: parse "http:\/\/\[::1": missing '\]' in host$/);
    assert.throws(() => r('{{ urlJoin (dict "host" 5) }}'), /unable to parse host key, must be of type string, but int found$/);
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoRegexp, MAX_PATTERN_LENGTH, RegexSyntaxError } from './re2.ts';
import { renderTemplate, TemplateError } from './index.ts';
import { noSlowerThan } from '../../../test/support/timing.ts';

/** Renders and expects the template error whose text matches `tail`; returns how long it took. */
function refusal(template: string, tail: RegExp, data: unknown = {}): () => void {
  return () =>
    assert.throws(
      () => renderTemplate(template, data),
      (e: unknown) => e instanceof TemplateError && tail.test(e.message),
    );
}

const STEPS = /execution exceeds 1000000 steps$/;

/** A template that runs until it is out of steps: the most any template may take. */
const outOfSteps = refusal('{{ range 2000000 }}{{ end }}', STEPS);

describe('Go regexp on re2js', () => {
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
    // no leading zeros in numbers; several groups may share a name, the first that matched counts
    assert.equal(new GoRegexp('(a)').replaceAllString('a', '$01|${1}'), '|a');
    assert.equal(new GoRegexp('(?P<n>a)|(?P<n>b)').replaceAllString('ab', '<$n>'), '<a><b>');
  });

  it('reads invalid UTF-8 (lone surrogates here) as U+FFFD, keeping the bytes', () => {
    assert.deepEqual(new GoRegexp('\\x{FFFD}').findAllString('a\udcffb', -1), ['\udcff']);
    assert.throws(() => new GoRegexp('a\udcff'), /invalid UTF-8/);
  });

  it('matches catastrophic-backtracking patterns in linear time', () => {
    // Each took minutes on a backtracking engine at a few dozen characters.
    const input = 'a'.repeat(50_000) + '!';
    noSlowerThan(() => new GoRegexp('^(a+)+$').matchString(input), () => new GoRegexp('^a+$').matchString(input), 10);
    noSlowerThan(() => new GoRegexp('^(a|a)*$').findString(input), () => new GoRegexp('^(a)*$').findString(input), 10);
    noSlowerThan(() => new GoRegexp('(x+x+)+y').findString(input), () => new GoRegexp('x+y').findString(input), 10);
    noSlowerThan(() => new GoRegexp('(.*a){12}$').findString(input.slice(0, 2000)), () => new GoRegexp('(.*a)$').findString(input.slice(0, 2000)), 20);
  });

  it('refuses patterns longer than the parser handles in good time', () => {
    const long = 'a'.repeat(MAX_PATTERN_LENGTH + 1);
    assert.throws(() => new GoRegexp(long), /regular expression exceeds 8192 characters/);
    refusal(`{{ regexMatch (repeat ${MAX_PATTERN_LENGTH + 1} "a") "a" }}`, /error calling regexMatch: regular expression exceeds 8192 characters$/)();
  });
});

describe('regex work counts against the execution steps', () => {
  it('leaves ordinary use alone', () => {
    const csv = Array.from({ length: 2000 }, (_, i) => `item-${i}`).join(',');
    assert.equal(renderTemplate('{{ len (regexSplit "," .csv -1) }} {{ len (regexFindAll "[0-9]+" .csv -1) }}', { csv }), '2000 2000');
    assert.equal(
      renderTemplate('{{ range .names }}{{ if regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" . }}.{{ end }}{{ end }}', {
        names: Array.from({ length: 500 }, (_, i) => `name-${i}`),
      }),
      '.'.repeat(500),
    );
  });

  it('refuses compiles that expand or case-fold too much, before doing them', () => {
    // 600,000 instructions, and 60 case-folded classes over all of Unicode
    const expanding = '(?:\\pL){1000}'.repeat(600);
    const folding = '(?i:[\\x{42}-\\x{1e943}])'.repeat(60);
    const plain = (p: string): string => `{{ regexMatch (repeat ${p.length} "a") "a" }}`;
    noSlowerThan(refusal(`{{ regexMatch ${JSON.stringify(expanding)} "a" }}`, STEPS), () => renderTemplate(plain(expanding), {}), 5);
    noSlowerThan(refusal(`{{ regexMatch ${JSON.stringify(folding)} "a" }}`, STEPS), () => renderTemplate(plain(folding), {}), 5);
  });

  it('stops a search that reads more than the steps left', () => {
    // Linear in the input, but for every instruction: 3 million reads × 106 instructions.
    const s = 'a'.repeat(1_000_000);
    noSlowerThan(refusal('{{ regexFind "((?:\\\\pL|\\\\pN){100})[^a]$" .s }}', STEPS, { s }), outOfSteps, 3);
  });

  it('bounds iterations whose every search reads to the end (quadratic in the input)', () => {
    // Each match "a" is found only after ruling out a longer "a…z" up to the end.
    const s = 'a'.repeat(200_000);
    for (const f of ['regexFindAll "a(.*z)?" .s -1', 'regexReplaceAll "(a)(.*z)?" .s "$1"', 'regexSplit "a(?:.*z)?" .s -1']) {
      noSlowerThan(refusal(`{{ ${f} }}`, STEPS, { s }), outOfSteps, 3);
    }
  });

  it('charges expanding a replacement template for every match', () => {
    // 100,001 empty matches, each expanding 100,000 empty references
    const s = 'a'.repeat(100_000);
    noSlowerThan(refusal('{{ regexReplaceAll "x*" .s (repeat 100000 "$0") }}', STEPS, { s }), outOfSteps, 3);
  });
});

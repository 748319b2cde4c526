// Every function a template can call, at its worst input, under the default budget: each must
// finish or fail with a budget error within the time the budget implies. Rules (and so templates)
// come from peers and run on every member's one event loop, so a function whose work is not
// charged as it happens (a quadratic list function, a deep comparison of shared structure, a
// format width) would let one template hold every member's controller.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fastest } from '../../../test/support/timing.ts';
import { BUILTINS } from './builtins.ts';
import { renderTemplate, TemplateError } from './index.ts';
import { SPRIG } from './sprig.ts';

/**
 * Inputs the worst cases draw on, each built within the budget. `$dag` and `$dag2` are lists of
 * 2^30 paths over 31 shared lists, `$mdag` and `$mdag2` the same as maps: printing, copying,
 * comparing or merging them walks every path unless it is charged as it goes.
 */
const GIVEN: Readonly<Record<string, string>> = {
  // 1 MB of one-byte characters; $s2 equal to it but another string, $s3 differing at the end
  s: '{{ $s := repeat 1000000 "x" }}',
  s2: '{{ $s2 := repeat 1000000 "x" }}',
  s3: '{{ $s3 := printf "%sy" (repeat 999999 "x") }}',
  // words
  w: '{{ $w := repeat 500000 "a " }}',
  // two-byte runes that are letters in title case: every per-rune Unicode test is taken
  u: '{{ $u := repeat 500000 "ǅ" }}',
  // words of every class the case converters tell apart
  m: '{{ $m := repeat 140000 "aB1_ǅ." }}',
  // runes that quote as six characters each
  q: '{{ $q := repeat 500000 "\u0378" }}',
  // a string of invalid UTF-8: one byte in two is a lone continuation byte
  e: '{{ $e := b64dec (repeat 87000 "eIB4gHiA") }}',
  e2: '{{ $e2 := b64dec (repeat 87000 "eIB4gHiA") }}',
  digits: '{{ $digits := repeat 1000000 "1" }}',
  octal: '{{ $octal := repeat 1000000 "7" }}',
  slashes: '{{ $slashes := repeat 1000000 "/" }}',
  commas: '{{ $commas := repeat 1000000 "," }}',
  newlines: '{{ $newlines := repeat 1000000 "\\n" }}',
  // a needle that matches the haystack up to its last character everywhere
  hay: '{{ $hay := repeat 1000000 "a" }}',
  needle: '{{ $needle := printf "%sb" (repeat 500000 "a") }}',
  l: '{{ $l := until 100000 }}',
  // 65536 references to two equal strings of 1 MB
  big: '{{ $big := list (repeat 1000000 "x") (repeat 1000000 "x") }}{{ range 15 }}{{ $big = concat $big $big }}{{ end }}',
  dag: '{{ $dag := list "" }}{{ range 30 }}{{ $dag = list $dag $dag }}{{ end }}',
  dag2: '{{ $dag2 := list "" }}{{ range 30 }}{{ $dag2 = list $dag2 $dag2 }}{{ end }}',
  mdag: '{{ $mdag := dict }}{{ range 30 }}{{ $mdag = dict "a" $mdag "b" $mdag }}{{ end }}',
  mdag2: '{{ $mdag2 := dict }}{{ range 30 }}{{ $mdag2 = dict "a" $mdag2 "b" $mdag2 }}{{ end }}',
  // a map that holds itself
  cyc: '{{ $cyc := dict }}{{ $_ := set $cyc "a" $cyc }}',
  // lists nested 3000 deep
  deep: '{{ $deep := list }}{{ range 3000 }}{{ $deep = list $deep }}{{ end }}',
  // 100 keys that differ only at their end, 16383 characters long: the longest V8 hashes
  keys: '{{ $keys := dict }}{{ $kp := repeat 16379 "k" }}{{ range $i := until 100 }}{{ $_ := set $keys (printf "%s%04d" $kp $i) $i }}{{ end }}',
  // the same with a lone surrogate (an invalid byte) before the end: compared unit by unit
  skeys: '{{ $skeys := dict }}{{ $sp := printf "%s%s" (repeat 16378 "k") (b64dec "gA==") }}{{ range $i := until 100 }}{{ $_ := set $skeys (printf "%s%04d" $sp $i) $i }}{{ end }}',
  // 60 keys one character longer, which V8 tells apart only by comparing them, and one more
  long: '{{ $long := dict }}{{ $lp := repeat 16380 "k" }}{{ range $i := until 60 }}{{ $_ := set $long (printf "%s%04d" $lp $i) $i }}{{ end }}',
  // one string of 1 MB that starts with an invalid byte among 512 short ones: compared with each as its first byte
  mixed: '{{ $mixed := list (printf "%s%s" (b64dec "gA==") (repeat 999999 "x")) }}{{ range $i := until 512 }}{{ $mixed = append $mixed (printf "%d😀" $i) }}{{ end }}',
  amixed: '{{ $amixed := list (printf "😀%s" (repeat 999999 "x")) }}{{ range $i := until 512 }}{{ $amixed = append $amixed (printf "%d😀" $i) }}{{ end }}',
  probe: '{{ $probe := repeat 16384 "k" }}',
  // semver structs with a 1 MB prerelease
  v: '{{ $v := (semver "1.0.0").SetPrerelease (repeat 1000000 "a") }}',
  v2: '{{ $v2 := (semver "1.0.0").SetPrerelease (repeat 1000000 "a") }}',
  // a version that fails to parse only at its end, and a valid one as long
  badVersion: '{{ $badVersion := printf "1.0.0-%s!" (repeat 499999 "a.") }}',
  version: '{{ $version := printf "1.0.0-%sa" (repeat 499999 "a.") }}',
  url: '{{ $url := printf "http://h/%s#%s" (repeat 170000 "%41") (repeat 170000 "ǅ") }}',
  parts: '{{ $parts := dict "path" (repeat 170000 "ǅ") "fragment" (repeat 170000 "ǅ") "userinfo" (repeat 300000 "%41") }}',
};

const LOOP = '{{ range 1000000 }}';

/** Calls `call` until the budget runs out; the inputs it names are built first. */
function loop(call: string): string {
  const given = [...new Set(call.match(/\$[A-Za-z]\w*/g) ?? [])].map((v) => {
    const g = GIVEN[v.slice(1)];
    if (g === undefined) throw new Error(`no input ${v}`);
    return g;
  });
  return `${given.join('')}${LOOP}{{ $x := ${call} }}{{ end }}`;
}

/** What a worst case builds before its loop. */
const inputsOf = (template: string): string => template.slice(0, template.lastIndexOf(LOOP));

/** `arg` as many times as a call can take in a template (which holds up to 64 KiB). */
const many = (arg: string): string => Array<string>(5000).fill(arg).join(' ');

/** A function's worst inputs; a function absent from here fails the test below. */
const WORST: Readonly<Record<string, readonly string[]>> = {
  and: [loop('and 1 1 1 1 1 1 1 1 1 $dag'), loop(`and ${many('1')}`)],
  or: [loop('or 0 0 0 0 0 0 0 0 0 $dag'), loop(`or ${many('0')}`)],
  call: [loop('call $dag')],
  not: [loop('not $dag')],
  len: [loop('len $e'), loop('len $s')],
  index: [loop('index $e 521999'), loop('index $l 99999'), loop(`index $cyc ${many('"a"')}`), loop('index $long $probe')],
  print: [loop('print $dag'), loop('print $s'), loop('print $v'), loop(`print ${many('1')}`)],
  println: [loop('println $dag'), loop('println $s')],
  printf: [
    loop('printf "%v" $dag'),
    loop('printf "%9999999d" 1'),
    loop('printf "%999999d" 1'),
    loop('printf "%.9999999d" 1'),
    loop('printf "%.999999f" 1.0'),
    loop('printf "%.9999999f" 1.0'),
    loop('printf "%.999999e" 1.0'),
    loop('printf "%.999999x" 1.0'),
    loop('printf "%#.999999g" 1.0'),
    loop('printf "%.999999U" 1'),
    loop('printf "%9999999s" "x"'),
    loop('printf "%1s" $s'),
    loop('printf "%.999999s" $s'),
    loop('printf "% #x" $s'),
    loop('printf "%x" $e'),
    loop('printf "%q" $q'),
    loop('printf "%+q" $u'),
    loop('printf "%#v" $dag'),
    loop('printf "%v" $mdag'),
  ],
  html: [loop('html $e'), loop('html (repeat 200000 "\\"")')],
  js: [loop('js $q'), loop('js (repeat 170000 "<")'), loop('js $e')],
  urlquery: [loop('urlquery $u'), loop('urlquery $s'), loop('urlquery $e')],
  eq: [loop('eq $v $v2'), loop('eq $s $s2'), loop(`eq 1 ${many('2')}`)],
  ne: [loop('ne $v $v2'), loop('ne $s $s2')],
  lt: [loop('lt $e $e2'), loop('lt $s $s2')],
  le: [loop('le $e $e2'), loop('le $s $s2')],
  gt: [loop('gt $e $e2'), loop('gt $s $s2')],
  ge: [loop('ge $e $e2'), loop('ge $s $s2')],
  hello: [loop('hello')],
  abbrev: [loop('abbrev 999990 $e'), loop('abbrev 999990 $u')],
  abbrevboth: [loop('abbrevboth 10 999990 $e'), loop('abbrevboth 10 999990 $u')],
  trunc: [loop('trunc 999999 $e'), loop('trunc 999999 $u')],
  trim: [loop('trim $s'), loop('trim $u')],
  upper: [loop('upper $u'), loop('upper $s')],
  lower: [loop('lower $u'), loop('lower $s')],
  title: [loop('title $w'), loop('title $u')],
  untitle: [loop('untitle $w'), loop('untitle $u')],
  substr: [loop('substr 1 999999 $e'), loop('substr 1 999999 $u')],
  repeat: [loop('repeat 1000000 "x"'), loop('repeat 9223372036854775807 "x"'), loop('repeat 9223372036854775807 ""')],
  trimall: [loop('trimall $u $u'), loop('trimall "y" $s')],
  trimAll: [loop('trimAll $u $u'), loop('trimAll "y" $s')],
  trimSuffix: [loop('trimSuffix $s3 $s')],
  trimPrefix: [loop('trimPrefix $s3 $s')],
  nospace: [loop('nospace $w'), loop('nospace $u')],
  initials: [loop('initials $w'), loop('initials $u')],
  swapcase: [loop('swapcase $u'), loop('swapcase $m')],
  snakecase: [loop('snakecase $m'), loop('snakecase $u')],
  camelcase: [loop('camelcase $m'), loop('camelcase $w')],
  kebabcase: [loop('kebabcase $m'), loop('kebabcase $u')],
  wrap: [loop('wrap 1 $w'), loop('wrap 500000 $w'), loop('wrap 1 $s')],
  wrapWith: [loop('wrapWith 1 "-" $w'), loop('wrapWith 1 $s $w')],
  contains: [loop('contains $needle $hay')],
  hasPrefix: [loop('hasPrefix $s3 $s')],
  hasSuffix: [loop('hasSuffix $s3 $s')],
  quote: [loop('quote $q $q $q $q $q $q $q $q'), loop('quote $dag')],
  squote: [loop('squote $s $s $s $s $s $s $s $s'), loop('squote $dag')],
  cat: [loop('cat $dag'), loop('cat $s $s $s $s'), loop(`cat ${many('nil')}`)],
  indent: [loop('indent 1 $newlines'), loop('indent 0 $newlines'), loop('indent 9223372036854775807 "x"')],
  nindent: [loop('nindent 1 $newlines'), loop('nindent 1048575 "x"')],
  replace: [loop('replace "" "x" $s'), loop('replace "" "" $s'), loop('replace "x" "" $s')],
  plural: [loop('plural "a" "b" 1')],
  sha1sum: [loop('sha1sum $e'), loop('sha1sum $s')],
  sha256sum: [loop('sha256sum $e'), loop('sha256sum $s')],
  adler32sum: [loop('adler32sum $e'), loop('adler32sum $s')],
  toString: [loop('toString $dag'), loop('toString $mdag')],
  atoi: [loop('atoi $digits')],
  int64: [loop('int64 $digits')],
  int: [loop('int $digits')],
  float64: [loop('float64 $digits')],
  toDecimal: [loop('toDecimal $octal'), loop('toDecimal $dag')],
  split: [loop('split "" $s'), loop('split "," $commas')],
  splitList: [loop('splitList "" $s'), loop('splitList "," $commas')],
  splitn: [loop('splitn "," 100000 $commas'), loop('splitn "" 100000 $s')],
  toStrings: [loop('toStrings $dag'), loop('toStrings $big')],
  until: [loop('until 100000'), loop('until 9223372036854775807')],
  untilStep: [loop('untilStep 0 100000 1'), loop('untilStep -9223372036854775807 9223372036854775807 1')],
  add1: [loop('add1 $digits')],
  add: [loop('add $digits $digits $digits $digits'), loop(`add ${many('1')}`)],
  sub: [loop('sub $digits $digits')],
  div: [loop('div $digits 1')],
  mod: [loop('mod $digits 1')],
  mul: [loop('mul $digits $digits $digits $digits'), loop(`mul ${many('1')}`)],
  biggest: [loop('biggest $digits $digits $digits $digits'), loop(`biggest ${many('1')}`)],
  max: [loop('max $digits $digits $digits $digits'), loop(`max ${many('1')}`)],
  min: [loop('min $digits $digits $digits $digits'), loop(`min ${many('1')}`)],
  ceil: [loop('ceil $digits')],
  floor: [loop('floor $digits')],
  round: [loop('round $digits 1000')],
  join: [loop('join "," $big'), loop('join "," $dag')],
  sortAlpha: [loop('sortAlpha $big'), loop('sortAlpha (keys $keys)'), loop('sortAlpha (keys $long)'), loop('sortAlpha (keys $skeys)'), loop('sortAlpha $mixed'), loop('sortAlpha $amixed'), loop('sortAlpha $dag')],
  default: [loop('default $dag $dag'), loop(`default ${many('0')}`)],
  empty: [loop('empty $dag')],
  coalesce: [loop('coalesce $dag $dag $dag'), loop(`coalesce ${many('0')}`)],
  deepCopy: [loop('deepCopy $dag'), loop('deepCopy $mdag'), loop('deepCopy $long')],
  toJson: [loop('toJson $dag'), loop('toJson $mdag'), loop('toJson $q')],
  toPrettyJson: [loop('toPrettyJson $dag'), loop('toPrettyJson $mdag'), loop('toPrettyJson $deep')],
  ternary: [loop('ternary $dag $dag true')],
  typeOf: [loop('typeOf $dag')],
  typeIs: [loop('typeIs "x" $dag')],
  typeIsLike: [loop('typeIsLike "x" $dag')],
  kindOf: [loop('kindOf $dag')],
  kindIs: [loop('kindIs "x" $dag')],
  deepEqual: [loop('deepEqual $dag $dag2'), loop('deepEqual $mdag $mdag2'), loop('deepEqual $s $s2'), loop('deepEqual $big $big')],
  base: [loop('base $slashes'), loop('base $s')],
  dir: [loop('dir $slashes'), loop('dir $w')],
  clean: [loop('clean $slashes'), loop('clean (repeat 333333 "../")'), loop('clean (repeat 500000 "a/")')],
  ext: [loop('ext $s')],
  isAbs: [loop('isAbs $s')],
  b64enc: [loop('b64enc $e'), loop('b64enc (repeat 700000 "x")')],
  b64dec: [loop('b64dec (repeat 1000000 "!")'), loop('b64dec (repeat 1000000 "A")')],
  b32enc: [loop('b32enc $e'), loop('b32enc (repeat 600000 "x")')],
  b32dec: [loop('b32dec (repeat 1000000 "A")'), loop('b32dec (repeat 1000000 "!")')],
  tuple: [loop('tuple $dag $dag $dag $dag'), loop(`tuple ${many('1')}`)],
  list: [loop('list $dag $dag $dag $dag'), loop(`list ${many('1')}`)],
  dict: [loop('dict $dag 1 $mdag 2'), loop(`dict ${many('"a"')}`), loop(`dict ${many('$probe')}`)],
  set: [loop('set $keys "k" 1'), loop('set $long $probe 1')],
  unset: [loop('unset $keys "k"'), loop('unset $long $probe')],
  hasKey: [loop('hasKey $keys "k"'), loop('hasKey $long $probe')],
  pluck: [loop('pluck "a" $mdag $mdag $mdag $mdag'), loop(`pluck "a" ${many('$mdag')}`), loop('pluck $probe $long $long $long')],
  keys: [loop('keys $keys'), loop('keys $keys $keys $keys $keys'), loop('keys $skeys'), loop('keys $long'), loop(`keys ${many('(dict)')}`)],
  values: [loop('values $keys'), loop('values $skeys'), loop('values $long')],
  pick: [loop('pick $keys "a" "b" "c"'), loop(`pick (dict) ${many('"a"')}`), loop('pick $long $probe $probe $probe')],
  omit: [loop('omit $keys "a" "b" "c"'), loop(`omit (dict) ${many('"a"')}`), loop('omit $long $probe')],
  merge: [loop('merge $mdag $mdag2'), loop('merge (dict) $mdag'), loop(`merge (dict) ${many('$mdag')}`), loop('merge (dict) $long')],
  mergeOverwrite: [loop('mergeOverwrite $mdag $mdag2'), loop('mergeOverwrite (dict) $mdag'), loop(`mergeOverwrite (dict) ${many('$mdag')}`), loop('mergeOverwrite (dict) $long')],
  append: [loop('append $l 1')],
  push: [loop('push $l 1')],
  prepend: [loop('prepend $l 1')],
  first: [loop('first $l')],
  last: [loop('last $l')],
  rest: [loop('rest $l')],
  initial: [loop('initial $l')],
  reverse: [loop('reverse $l')],
  compact: [loop('compact $l'), loop('compact $big')],
  uniq: [loop('uniq $l'), loop('uniq $big'), loop('uniq $dag')],
  without: [loop('without $l -1 -2 -3 -4'), loop('without $big $s3'), loop('without (list $dag) $dag2'), loop(`without $l ${many('-1')}`)],
  has: [loop('has -1 $l'), loop('has $s3 $big'), loop('has $dag2 (list $dag)')],
  slice: [loop('slice $l 0 100000')],
  concat: [loop('concat $l $l'), loop('concat $l (list)'), loop(`concat ${many('(list)')}`)],
  fail: [loop('fail $s')],
  regexMatch: [loop('regexMatch "(x+x+)+y" $s'), loop('regexMatch "\\\\pL{1000}" $u')],
  regexFindAll: [loop('regexFindAll "x" $s -1'), loop('regexFindAll "(a|b)*c" $hay -1')],
  regexFind: [loop('regexFind "(x+x+)+y" $s')],
  regexReplaceAll: [loop('regexReplaceAll "" $s "$0"'), loop('regexReplaceAll "(x)" $s "${1}${1}"')],
  regexReplaceAllLiteral: [loop('regexReplaceAllLiteral "" $s "y"')],
  regexSplit: [loop('regexSplit "" $s -1'), loop('regexSplit "x" $s 100000')],
  semver: [loop('semver $badVersion'), loop('semver $version')],
  semverCompare: [loop('semverCompare ">= 1.0.0 || < 2.0.0-a" $badVersion'), loop('semverCompare ">= 1.0.0 || < 2.0.0-a" $version')],
  urlParse: [loop('urlParse $url'), loop('urlParse $s')],
  urlJoin: [loop('urlJoin $parts')],
};

/** What a template that runs out of a budget fails with. */
const BUDGET = /: (execution exceeds \d+ steps|error calling \w+: (execution exceeds \d+ steps|result exceeds (1 MiB|\d+ items)|the execution's calls return more than 16 MiB together)|output exceeds 1 MiB)$/;
/** Functions whose worst inputs may fail with their own error instead. */
const OWN_ERROR: Readonly<Record<string, RegExp>> = {
  call: /error calling call: non-function \$dag of type \[\]interface \{\}$/,
  fail: /error calling fail: x+$/,
  semver: /error calling semver: Invalid Semantic Version$/,
  semverCompare: /error calling semverCompare: Invalid Semantic Version$/,
};

/** Renders `template`, which must finish or fail with `expected`. */
function render(template: string, expected: RegExp): void {
  try {
    renderTemplate(template, {});
  } catch (e) {
    if (!(e instanceof TemplateError) || !expected.test(e.message)) throw e;
  }
}

/**
 * What the default budget costs when spent on ordinary template work: calls in a loop, printing,
 * nested ranges. A function's worst case may take a few times that, no more.
 */
const ORDINARY = ['{{ range 1000000 }}{{ $x := add1 1 }}{{ end }}', '{{ range 1000000 }}{{ 1 }}{{ end }}', '{{ $l := until 100000 }}{{ range $l }}{{ range $l }}{{ end }}{{ end }}'];
const FACTOR = 4;

describe('what functions cost', () => {
  const budgetTime = Math.max(...ORDINARY.map((t) => fastest(() => render(t, BUDGET))));
  const bound = FACTOR * budgetTime;

  /**
   * `template` finishes or fails with `expected` within the bound. A slow run counts only when
   * the fastest of a few is slow too: the machine is shared, another process may have had it.
   */
  function withinBound(template: string, expected: RegExp): void {
    let took = fastest(() => render(template, expected), 1);
    if (took > bound) took = fastest(() => render(template, expected));
    assert.ok(took <= bound, `${template.slice(-120)} took ${took.toFixed(0)} ms; the default budget costs ${budgetTime.toFixed(0)} ms of ordinary work`);
  }

  it('has a worst case for every function a template can call', () => {
    const functions = [...new Set([...BUILTINS.keys(), ...SPRIG.keys()])].sort();
    assert.deepEqual(Object.keys(WORST).sort(), functions);
  });

  it('builds the inputs of every worst case within the budget, so that the loop is what runs out', () => {
    for (const given of new Set(Object.values(WORST).flat().map(inputsOf))) assert.doesNotThrow(() => renderTemplate(given, {}), given);
  });

  for (const [name, templates] of Object.entries(WORST)) {
    it(`${name} at its worst input stays within the budget's time`, () => {
      const own = OWN_ERROR[name];
      for (const template of templates) withinBound(template, own ? new RegExp(`${BUDGET.source}|${own.source}`) : BUDGET);
    });
  }

  it("charges the language's own work as it goes: fields of a chain, variables looked past", () => {
    withinBound(`${GIVEN['cyc']}${LOOP}{{ $x := $cyc${'.a'.repeat(5000)} }}{{ end }}`, BUDGET);
    const declared = Array.from({ length: 3000 }, (_, i) => `{{ $v${i} := 0 }}`).join('');
    withinBound(`${declared}${LOOP}{{ $x := list ${many('$')} }}{{ end }}`, BUDGET);
  });

  it('stops a quadratic uniq over 100000 items with the budget error', () => {
    withinBound('{{ until 100000 | uniq }}', /^template: :1:18: executing "" at <uniq>: error calling uniq: execution exceeds 1000000 steps$/);
  });
});

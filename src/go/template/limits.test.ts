import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTemplate, TemplateError } from './index.ts';

/** Renders and expects a template error whose text ends with `tail`. */
function refuses(template: string, tail: RegExp, data: unknown = {}): void {
  assert.throws(
    () => renderTemplate(template, data),
    (e: unknown) => e instanceof TemplateError && tail.test(e.message),
  );
}

const KIB_LINE = 'x'.repeat(1024);

describe('template resource limits', () => {
  it('caps the rendered output at 1 MiB', () => {
    assert.equal(renderTemplate('{{ range until 1000 }}{{ $.s }}{{ end }}', { s: KIB_LINE }).length, 1000 * 1024);
    refuses('{{ range until 1100 }}{{ $.s }}{{ end }}', /^template: :1:25: executing "" at <{{\$\.s}}>: output exceeds 1 MiB$/, { s: KIB_LINE });
    refuses(`{{ range until 1100 }}${KIB_LINE}{{ end }}`, /output exceeds 1 MiB$/);
  });

  it('counts output bytes, not UTF-16 units', () => {
    // 200000 characters of 3 bytes each, twice
    refuses('{{ $s := repeat 200000 "€" }}{{ $s }}{{ $s }}', /output exceeds 1 MiB$/);
    refuses('{{ repeat 400000 "€" }}', /error calling repeat: result exceeds 1 MiB$/);
  });

  it('caps what the calls of one execution return together, however many of them it keeps', () => {
    assert.equal(renderTemplate('{{ range until 15 }}{{ $x := repeat 1000000 "a" }}{{ end }}ok', {}), 'ok');
    refuses('{{ range until 20 }}{{ $x := repeat 1000000 "a" }}{{ end }}', /at <repeat 1000000 "a">: error calling repeat: the execution's calls return more than 16 MiB together$/);
    refuses('{{ $s := repeat 900000 "a" }}{{ $l := list }}{{ range until 30 }}{{ $l = append $l (printf "%s" $s) }}{{ end }}', /error calling printf: the execution's calls return more than 16 MiB together$/);
  });

  it('caps strings a function builds', () => {
    refuses('{{ $x := repeat 2000000 "x" }}', /at <repeat 2000000 "x">: error calling repeat: result exceeds 1 MiB$/);
    refuses('{{ $x := repeat 9000000000000000000 "x" }}', /error calling repeat: result exceeds 1 MiB$/);
    refuses('{{ $x := indent 600000 "a\\nb" }}', /error calling indent: result exceeds 1 MiB$/);
    refuses('{{ $x := nindent 1048576 "a" }}', /error calling nindent: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := cat $s $s }}', /error calling cat: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := printf "%s%s" $s $s }}', /error calling printf: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := print $s $s }}', /error calling print: result exceeds 1 MiB$/);
    refuses('{{ $x := printf "%1000000d%1000000d" 1 2 }}', /error calling printf: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 1000 "x" }}{{ $x := replace "x" (repeat 2000 "y") $s }}', /error calling replace: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 1000 "x" }}{{ $x := regexReplaceAll "x" $s (repeat 2000 "y") }}', /error calling regexReplaceAll: result exceeds 1 MiB$/);
    refuses('{{ $x := wrapWith 1 (repeat 2000 "-") (repeat 1000 "a ") }}', /error calling wrapWith: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := join "," (list $s $s) }}', /error calling join: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := quote $s $s }}', /error calling quote: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := toJson (list $s $s) }}', /error calling toJson: result exceeds 1 MiB$/);
    refuses('{{ $s := repeat 600000 "x" }}{{ $x := toString (list $s $s) }}', /error calling toString: result exceeds 1 MiB$/);
  });

  it('caps lists a function builds', () => {
    assert.equal(renderTemplate('{{ len (until 100000) }}', {}), '100000');
    refuses('{{ $x := until 100001 }}', /error calling until: result exceeds 100000 items$/);
    refuses('{{ $x := untilStep 0 1000000000 1 }}', /error calling untilStep: result exceeds 100000 items$/);
    refuses('{{ $l := until 60000 }}{{ $x := concat $l $l }}', /error calling concat: result exceeds 100000 items$/);
  });

  it('caps execution steps, including the work functions do', () => {
    refuses('{{ range until 100000 }}{{ range until 100 }}{{ end }}{{ end }}', /: execution exceeds 1000000 steps$/);
    refuses('{{ range 2000000 }}{{ end }}', /: execution exceeds 1000000 steps$/);
    // appending in a loop copies the list every time
    refuses('{{ $l := list }}{{ range until 5000 }}{{ $l = append $l 1 }}{{ end }}', /execution exceeds 1000000 steps$/);
    // each comparison walks the whole list
    refuses('{{ $l := until 50000 }}{{ range until 100 }}{{ $x := has -1 $l }}{{ end }}', /execution exceeds 1000000 steps$/);
    refuses('{{ $s := repeat 1000000 "x" }}{{ range until 1000 }}{{ $x := sha256sum $s }}{{ end }}', /execution exceeds 1000000 steps$/);
  });

  it('caps template recursion before the JavaScript stack runs out', () => {
    refuses('{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}', /exceeded maximum template depth \(1000\)$/);
  });

  it('refuses nesting deeper than the JavaScript stack holds with a template error, in parsing and in execution', () => {
    // Each parses or runs fine at a thousand levels; Go takes these too, on stacks that grow.
    const ifs = (n: number): string => `${'{{ if true }}'.repeat(n)}x${'{{ end }}'.repeat(n)}`;
    assert.equal(renderTemplate(ifs(1000), {}), 'x');
    // Where the stack runs out (parsing or running) depends on the nodes and the stack left.
    refuses(ifs(3_000), /^template: : nested too deeply to (parse|execute)$/);
    refuses(`${'{{ with . }}'.repeat(20_000)}x${'{{ end }}'.repeat(20_000)}`, /^template: : nested too deeply to parse$/);
    refuses(`{{ ${'('.repeat(9_000)}1${')'.repeat(9_000)} }}`, /^template: : nested too deeply to parse$/);
    // Template calls each nesting a little: the depth limit alone does not keep the stack.
    refuses(`{{ define "a" }}${'{{ if true }}'.repeat(50)}{{ template "a" . }}${'{{ end }}'.repeat(50)}{{ end }}{{ template "a" . }}`, /^template: : nested too deeply to execute$/);
    // And the engine works on afterwards.
    assert.equal(renderTemplate('{{ printf "%s-%d" "ok" 1 }}', {}), 'ok-1');
  });

  it('leaves ordinary templates alone', () => {
    assert.equal(renderTemplate('{{ range $i, $v := .l }}{{ $i }}={{ $v | upper }};{{ end }}{{ repeat 3 "ab" }}', { l: ['a', 'b'] }), '0=A;1=B;ababab');
  });
});

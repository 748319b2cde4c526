import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTemplate, TemplateError } from './index.ts';
import { MAX_CONSTRAINT_BYTES, semverCompare } from './semver.ts';
import { noSlowerThan } from '../../../test/support/timing.ts';

const fails = (template: string, tail: RegExp) => (): void =>
  assert.throws(
    () => renderTemplate(template, {}),
    (e: unknown) => e instanceof TemplateError && tail.test(e.message),
  );

// Shapes that took quadratic time through backtracking regexes (seconds at 20 KB); the first
// three are valid constraints, which a template can check again and again.
const VALID = [' '.repeat(255) + 'x', '>=' + ' '.repeat(253) + '1', '1' + ' '.repeat(126) + '-' + ' '.repeat(126) + '2'];
const ADVERSARIAL = [...VALID, '>' + ' '.repeat(254) + '!', '1'.repeat(255) + '!', '1|'.repeat(128), '1||'.repeat(85), '1 - '.repeat(64)];

function check(c: string): void {
  try {
    semverCompare(c, '1.0.0');
  } catch {
    // improper constraints cost the same to find out
  }
}

describe('semver constraints from peers', () => {
  it('refuses constraints past the limit before parsing them', () => {
    assert.throws(() => semverCompare('1'.repeat(MAX_CONSTRAINT_BYTES + 1), '1.0.0'), /semver constraint exceeds 256 bytes/);
    // a megabyte of spaces costs what building it does
    noSlowerThan(
      fails('{{ semverCompare (repeat 1000000 " ") "1.0.0" }}', /error calling semverCompare: semver constraint exceeds 256 bytes$/),
      () => renderTemplate('{{ len (repeat 1000000 " ") }}', {}),
      3,
    );
  });

  it('parses the worst shapes under the limit in linear time', () => {
    const benign = '>=1.2.3, <2.0.0 || '.repeat(13).slice(0, 255);
    for (const c of ADVERSARIAL) {
      assert.ok(Buffer.byteLength(c) <= MAX_CONSTRAINT_BYTES);
      noSlowerThan(
        () => {
          for (let i = 0; i < 200; i++) check(c);
        },
        () => {
          for (let i = 0; i < 200; i++) check(benign);
        },
        5,
      );
    }
  });

  it('charges parsing to the execution steps, so loops cannot repeat it without bound', () => {
    const outOfSteps = fails('{{ range 2000000 }}{{ end }}', /execution exceeds 1000000 steps$/);
    for (const c of VALID) {
      noSlowerThan(fails(`{{ range 10000 }}{{ $_ := semverCompare ${JSON.stringify(c)} "1.0.0" }}{{ end }}`, /execution exceeds 1000000 steps$/), outOfSteps, 3);
    }
  });

  it('still answers ordinary constraints', () => {
    assert.equal(semverCompare(' >= 1.2,\t< 2 || 3.x ', '3.1.0'), true);
    assert.equal(semverCompare('1.2 - 1.4', '1.4.1'), false);
    assert.throws(() => semverCompare('\v1.2', '1.2.0'), /improper constraint/); // \s excludes \v in Go
  });
});

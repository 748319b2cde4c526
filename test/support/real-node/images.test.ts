import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildContextFiles, globToRegExp } from './images.ts';

describe('the image cache key', () => {
  it('reads .dockerignore patterns as Docker does: ** spans directories, * and ? stay within a name', () => {
    const cases: [string, string, boolean][] = [
      ['src/**/*.test.ts', 'src/a.test.ts', true],
      ['src/**/*.test.ts', 'src/sync/deep/a.test.ts', true],
      ['src/**/*.test.ts', 'src/sync/a.ts', false],
      ['src/*.ts', 'src/sync/a.ts', false],
      ['a?.json', 'ab.json', true],
      ['a?.json', 'a/.json', false],
      ['tsconfig.json', 'tsconfigXjson', false],
    ];
    for (const [glob, path, matches] of cases) assert.equal(globToRegExp(glob).test(path), matches, `${glob} ~ ${path}`);
  });

  it('hashes exactly the build context: what the Dockerfile may copy, without any test', () => {
    const files = buildContextFiles();
    assert.ok(files.includes('Dockerfile') && files.includes('package-lock.json') && files.includes('src/cli/main.ts') && files.includes('bin/cluster-registry.js'));
    assert.deepEqual(files.filter((f) => f.endsWith('.test.ts')), []);
    assert.deepEqual(files.filter((f) => !/^(Dockerfile|\.dockerignore|package(-lock)?\.json|tsconfig(\.build)?\.json|src\/|bin\/)/.test(f)), []);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineDiff } from './line-diff.ts';

describe('lineDiff', () => {
  it('is empty for equal texts', () => {
    assert.equal(lineDiff('a\nb', 'a\nb'), '');
  });

  it('marks removed and added lines, keeping the common ones', () => {
    assert.equal(lineDiff('a\nb\nc', 'a\nx\nc'), '  a\n- b\n+ x\n  c');
    assert.equal(lineDiff('', 'a'), '- \n+ a');
  });

  it('summarises texts too large to compare line by line', () => {
    const big = (x: string) => Array.from({ length: 3000 }, (_, i) => `${x}${i}`).join('\n');
    assert.equal(lineDiff(big('a'), big('b')), '(too large to show: 3000 lines before, 3000 after)');
  });

  it('keeps only the context around changes, eliding the rest once per gap', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7', '8', '9'].join('\n');
    const after = ['1', '2', '3', '4', 'five', '6', '7', '8', '9'].join('\n');
    assert.equal(lineDiff(before, after, 1), '...\n  4\n- 5\n+ five\n  6\n...');
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable } from './table.ts';

test('aligns columns as kubectl does, the last one unpadded', () => {
  assert.equal(formatTable(['NAME', 'STATE'], [['a', 'Ready'], ['longer', 'Failed']]), 'NAME     STATE\na        Ready\nlonger   Failed\n');
});

test("control characters from a peer's texts never reach the terminal", () => {
  const out = formatTable(['NAME', 'VERSION'], [['evil', 'v1\u001b[2J\u0007\u009b31m\r']]);
  assert.equal(out, 'NAME   VERSION\nevil   v1?[2J??31m?\n');
  assert.equal(formatTable(['V'], [['a\u202eb\u2066c']]), 'V\na?b?c\n', 'bidirectional overrides too');
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalQuantity, parseQuantity } from './quantity.ts';

describe('resource.Quantity', () => {
  // [input, int64Amount (value scale) or "dec" for the inf.Dec path, canonical form], from Go
  const table: [string, string, string][] = [
    ['0', '0 0', '0'],
    ['1000m', '1000 -3', '1'],
    ['0.5', '5 -1', '500m'],
    ['1.5Gi', 'dec', '1536Mi'],
    ['100M', '100 6', '100M'],
    ['1e3', '1 3', '1e3'],
    ['1024Mi', '1073741824 0', '1Gi'],
    ['0.1Ki', 'dec', '102400m'],
    ['1Ki', '1024 0', '1Ki'],
    ['1.5', '15 -1', '1500m'],
    ['12345678901234567890', 'dec', '12345678901234567890'],
    ['0.000000001', '1 -9', '1n'],
    ['0.0000000001', 'dec', '1n'],
    ['-1.5Gi', 'dec', '-1536Mi'],
    ['9Ei', 'dec', '9223372036854775807'],
    ['100e-3', '100 -3', '100e-3'],
    ['1E', '1 18', '1E'],
    ['5e1', '5 1', '50'],
    ['.5', '5 -1', '500m'],
    ['0.001Ki', 'dec', '1024m'],
    ['123456789012345678', '123456789012345678 0', '123456789012345678'],
    ['1.234567890123456789', 'dec', '1234567891n'],
    ['3Pi', 'dec', '3Pi'],
    ['Ki', '0 0', '0'],
  ];
  for (const [input, amount, canonical] of table) {
    it(`${input} -> ${canonical}`, () => {
      const q = parseQuantity(input);
      assert.ok(q);
      assert.equal(q.d === null ? `${q.i.value} ${q.i.scale}` : 'dec', amount);
      assert.equal(canonicalQuantity(q), canonical);
    });
  }

  it('keeps an already canonical input as its string', () => {
    assert.equal(parseQuantity('1.')?.s, '1.');
    assert.equal(parseQuantity('+2k')?.s, '+2k');
    assert.equal(parseQuantity('1000m')?.s, '');
  });

  it('refuses what Go refuses', () => {
    for (const bad of ['1x', '', '1e', '1.2.3']) assert.equal(parseQuantity(bad), null, bad);
  });
});

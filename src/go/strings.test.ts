import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareGo, fromGoBytes, fromJSON, goByteLength, goBytes, goJSONString, goQuote, runesRewritten } from './strings.ts';

// An escape: the byte 0xFF, which is no UTF-8.
const FF = '\udcff';

describe('Go strings', () => {
  it('counts bytes: UTF-8 for well-formed text, one per escape, three for any other lone surrogate (U+FFFD)', () => {
    const rows: [string, number][] = [
      ['', 0],
      ['abc', 3],
      ['é', 2],
      ['日', 3],
      ['😀', 4],
      [`x${FF}y`, 3],
      ['x\ud800y', 5],
      ['x\udfffy', 5],
    ];
    for (const [s, n] of rows) assert.equal(goByteLength(s), n, JSON.stringify(s));
  });

  it('turns bytes into a string and back unchanged, valid or not', () => {
    for (const bytes of [[], [0x61], [0xc3, 0xa9], [0x80], [0xff, 0x00, 0xfe], [0xe6, 0x97], [0xf0, 0x9f, 0x98, 0x80], [0xed, 0xa0, 0x80]]) {
      const b = Uint8Array.from(bytes);
      assert.deepEqual([...goBytes(fromGoBytes(b))], bytes);
    }
    assert.equal(fromGoBytes(Uint8Array.from([0x78, 0xff])), `x${FF}`);
  });

  it('orders strings by their bytes', () => {
    const sorted = ['', 'A', 'a', 'é', '\uffff', '😀', `${FF}`].sort(compareGo);
    // U+FFFF is EF BF BF, the emoji F0 9F…, the escape the byte FF.
    assert.deepEqual(sorted, ['', 'A', 'a', 'é', '\uffff', '😀', FF]);
    assert.ok(compareGo('a\ud800', 'a\uffff') < 0, 'a lone surrogate is U+FFFD, below U+FFFF');
  });

  it('orders strings that share a prefix by the bytes after it, where they differ inside a surrogate pair too', () => {
    const pairs: [string, string, number][] = [
      ['x😀', 'x😁', -1],
      ['x😁', 'x\uffff', 1],
      [`k${FF}1`, `k${FF}0`, 1],
      ['😀a', '😀', 1],
      ['x\ud83d', 'x😀', -1], // the lone surrogate is U+FFFD, EF BF BD, below F0 9F 98 80
      ['', 'x😀', -1],
    ];
    for (const [a, b, want] of pairs) {
      assert.equal(Math.sign(compareGo(a, b)), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      assert.equal(Math.sign(compareGo(b, a)), -want);
    }
  });

  it('quotes as strconv.Quote does', () => {
    const rows: [string, string][] = [
      ['plain', '"plain"'],
      ['a"b\\c', '"a\\"b\\\\c"'],
      ['\x07\b\f\n\r\t\v\x00\x7f', '"\\a\\b\\f\\n\\r\\t\\v\\x00\\x7f"'],
      ['é😀', '"é😀"'],
      ['\u2028', '"\\u2028"'],
      [`x${FF}`, '"x\\xff"'],
      ['x\ud800', '"x\ufffd"'],
    ];
    for (const [s, q] of rows) assert.equal(goQuote(s), q, JSON.stringify(s));
    assert.equal(goQuote('é😀', true), '"\\u00e9\\U0001f600"');
  });

  it('writes JSON strings as Go 1.26 does: \\b and \\f short, HTML escaped, an invalid byte as \\ufffd', () => {
    const rows: [string, string][] = [
      ['a\bb\fc', '"a\\bb\\fc"'],
      ['\x00\x1f', '"\\u0000\\u001f"'],
      ['<a>&', '"\\u003ca\\u003e\\u0026"'],
      ['\u2028\u2029', '"\\u2028\\u2029"'],
      [`x${FF}`, '"x\\ufffd"'],
      ['x\ud800', '"x\ufffd"'],
      ['\x7f😀', '"\x7f😀"'],
    ];
    for (const [s, j] of rows) assert.equal(goJSONString(s), j, JSON.stringify(s));
    assert.equal(goJSONString('<&>', false), '"<&>"');
  });

  it('takes strings from JSON as Go decodes them, and rewrites runes as Go writes them back', () => {
    assert.equal(fromJSON(`a\ud800b${FF}`), 'a\ufffdb\ufffd');
    assert.equal(fromJSON('😀'), '😀');
    assert.equal(runesRewritten(`a${FF}😀`), 'a\ufffd😀');
  });
});

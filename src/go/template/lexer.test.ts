import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Lexer, type Item } from './lexer.ts';

function items(src: string): string[] {
  const l = new Lexer('t', src);
  const out: string[] = [];
  for (;;) {
    const i: Item = l.nextItem();
    out.push(`${i.typ}:${i.val}`);
    if (i.typ === 'EOF' || i.typ === 'error') return out;
  }
}

describe('lexer', () => {
  it('tokenises actions, fields, numbers and strings', () => {
    assert.deepEqual(items('a{{ .X.Y | printf "%d" 0x1F }}'), [
      'text:a',
      'leftDelim:{{',
      'space: ',
      'field:.X',
      'field:.Y',
      'space: ',
      'pipe:|',
      'space: ',
      'identifier:printf',
      'space: ',
      'string:"%d"',
      'space: ',
      'number:0x1F',
      'space: ',
      'rightDelim:}}',
      'EOF:',
    ]);
  });

  it('applies trim markers and drops comments', () => {
    assert.deepEqual(items('a  {{- /* c */ -}}  b'), ['text:a', 'text:b', 'EOF:']);
  });

  it('reports Go lexer errors', () => {
    assert.deepEqual(items('{{ "abc }}').at(-1), 'error:unterminated quoted string');
    assert.deepEqual(items('{{ 3k }}').at(-1), 'error:bad number syntax: "3k"');
  });
});

// go-patch v0.2.0 pointers (patch.NewPointerFromString and Pointer.String), RFC 6901 style with
// go-patch's extensions: optional `?` keys, `name=value` array item matching, index modifiers.
import { fromJSON } from '../strings.ts';
import { GoPatchError } from './errors.ts';

export type Modifier = 'prev' | 'next' | 'before' | 'after';

export type Token =
  | { kind: 'root' }
  /** An int64 index; negative counts from the end. */
  | { kind: 'index'; index: bigint; modifiers: Modifier[] }
  | { kind: 'afterLast' }
  | { kind: 'matching'; key: string; value: string; optional: boolean; modifiers: Modifier[] }
  | { kind: 'key'; key: string; optional: boolean };

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** strconv.Atoi on a 64-bit platform, or undefined where Go returns an error. */
function atoi(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < int64Min || n > int64Max ? undefined : n;
}

const decodeTable: Record<string, string> = { '~0': '~', '~1': '/', '~7': ':' };
const decode = (s: string): string => s.replace(/~[017]/g, (m) => decodeTable[m] ?? m);
const encode = (s: string): string => s.replace(/[~/:]/g, (c) => (c === '~' ? '~0' : c === '/' ? '~1' : '~7'));

const modifierNames: readonly string[] = ['prev', 'next', 'before', 'after'];

export class Pointer {
  readonly tokens: readonly Token[];

  constructor(tokens: readonly Token[]) {
    this.tokens = tokens;
  }

  /** The pointer made of the first n tokens (go-patch names sub-paths this way in errors). */
  prefix(n: number): Pointer {
    return new Pointer(this.tokens.slice(0, n));
  }

  toString(): string {
    let optionalShown = false;
    // Only the first optional token carries the `?`: optionality carries to the right anyway.
    const mark = (optional: boolean): string => {
      if (!optional || optionalShown) return '';
      optionalShown = true;
      return '?';
    };
    const mods = (ms: Modifier[]): string => ms.map((m) => ':' + m).join('');
    return this.tokens
      .map((t) => {
        switch (t.kind) {
          case 'root': return '';
          case 'index': return `${t.index}${mods(t.modifiers)}`;
          case 'afterLast': return '-';
          case 'matching': return `${encode(t.key)}=${encode(t.value)}${mark(t.optional)}${mods(t.modifiers)}`;
          case 'key': return encode(t.key) + mark(t.optional);
        }
      })
      .join('/');
  }
}

/** patch.NewPointerFromString. Throws GoPatchError with go-patch's message. */
export function parsePointer(path: string): Pointer {
  // The path arrives from JSON (a rule): lone surrogates are U+FFFD, as Go's decoder leaves them.
  const str = fromJSON(path);
  const tokens: Token[] = [{ kind: 'root' }];
  if (str.length === 0) return new Pointer(tokens);
  if (!str.startsWith('/')) throw new GoPatchError("Expected to start with '/'");
  const pieces = str.split('/').slice(1);
  let optional = false;
  pieces.forEach((piece, i) => {
    const isLast = i === pieces.length - 1;
    const [first = '', ...modifierStrs] = piece.split(':');
    const modifiers: Modifier[] = modifierStrs.map((m) => {
      if (!modifierNames.includes(m)) {
        // go-patch names the first modifier in this message, whichever one is unknown.
        throw new GoPatchError(
          `Expected to find one of the following modifiers: 'prev', 'next', 'before', or 'after' but found '${modifierStrs[0]}'`,
        );
      }
      return m as Modifier;
    });
    const tok = decode(first);
    if (isLast && tok === '-') {
      if (modifiers.length > 0) throw new GoPatchError('Expected not to find any modifiers with after last index token');
      tokens.push({ kind: 'afterLast' });
      return;
    }
    const index = atoi(tok);
    if (index !== undefined) {
      tokens.push({ kind: 'index', index, modifiers });
      return;
    }
    if (tok.endsWith('?')) optional = true;
    const eq = tok.indexOf('=');
    if (eq >= 0) {
      tokens.push({ kind: 'matching', key: tok.slice(0, eq), value: trimQuestion(tok.slice(eq + 1)), optional, modifiers });
      return;
    }
    if (modifiers.length > 0) throw new GoPatchError('Expected not to find any modifiers with key token');
    tokens.push({ kind: 'key', key: trimQuestion(tok), optional });
  });
  return new Pointer(tokens);
}

function trimQuestion(s: string): string {
  return s.endsWith('?') ? s.slice(0, -1) : s;
}

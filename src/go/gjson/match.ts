// tidwall/match v1.1.1 MatchLimit, as gjson's matchLimit uses it: '*' and '?' wildcards over
// runes, '\' escapes. Go's matcher recurses at every position a '*' could stop at, which takes
// exponential time on some patterns, and so gives up (no match) on the call after 10000 per byte
// of the subject. That limit never changes an answer: when a match exists, the earliest position for
// each stretch between stars leads to one (whatever follows a stretch starts with a star, so any
// later position leaves it only less to match), and Go's search tries earliest positions first,
// reaching a match within a few calls per rune. So the answer is plain wildcard matching, which
// this finds directly: each stretch at its earliest position, as offsets into the subject.
// What it keeps from Go is the rest of its behaviour: the literal prefix is matched forwards and
// the literal suffix backwards (matchTrimSuffix, whose reading of escapes differs at a trailing
// backslash), the rest forwards.

const STAR = 0x2a;
const QUESTION = 0x3f;
const BACKSLASH = 0x5c;
// pattern tokens besides literal runes
const ANY = -1;
const WILD = -2;
const BAD = -3; // a trailing backslash, which matches nothing

/**
 * Rune comparisons that all the matches of one gjson.Get may make together (one Get matches
 * every key or element of a document, each search up to subject × stretch comparisons); past it
 * a match fails, as Go's does at its limit. A few tens of milliseconds of work.
 */
export const MATCH_COMPARISONS = 1 << 24;
let comparisonsLeft = MATCH_COMPARISONS;

/** Starts the comparison budget of one gjson.Get. */
export function resetMatchBudget(): void {
  comparisonsLeft = MATCH_COMPARISONS;
}

const runes = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0) ?? 0);
// The subject is read in place (converting a long one to runes costs more than matching it):
// offsets are UTF-16 units, always at the start of a rune.
const width = (c: number): number => (c > 0xffff ? 2 : 1);

/** The rune that ends at offset `end` of s (not before `from`), with its width. */
function runeBefore(s: string, from: number, end: number): [number, number] {
  const lo = s.charCodeAt(end - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && end - 2 >= from) {
    const hi = s.charCodeAt(end - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return [s.codePointAt(end - 2)!, 2];
  }
  return [lo, 1];
}

/** match.MatchLimit(str, pattern, 10000) reduced to its boolean, as gjson's matchLimit does. */
export function matchLimit(str: string, pattern: string): boolean {
  if (pattern === '*') return true;
  const p = runes(pattern);
  // up to the first star
  let t = 0;
  let i = 0;
  for (; i < p.length && p[i] !== STAR; i++) {
    if (t >= str.length) return false;
    const c = str.codePointAt(t)!;
    t += width(c);
    let pc = p[i];
    if (pc === QUESTION) continue;
    if (pc === BACKSLASH) pc = p[++i];
    if (pc !== c) return false;
  }
  if (i === p.length) return t === str.length;
  while (p[i + 1] === STAR) i++;
  if (i === p.length - 1) return true;
  const trimmed = trimSuffix(str, t, p, i);
  if (!trimmed) return false;
  const [end, pEnd] = trimmed;
  // the stretches between the stars that are left, each at its earliest position; the pattern
  // now ends with a star unless the suffix used up the subject, leaving nothing to match
  const tokens = tokenize(p, i + 1, pEnd);
  for (let a = 0; a < tokens.length; ) {
    const star = tokens.indexOf(WILD, a);
    if (star < 0) return false;
    const after = find(str, t, end, tokens, a, star);
    if (after < 0) return false;
    t = after;
    a = star + 1;
  }
  return true;
}

/** Where tokens[a, b) first occurs in str[from, end), as the offset after it, or -1. */
function find(str: string, from: number, end: number, tokens: number[], a: number, b: number): number {
  for (let at = from; at < end; at += width(str.codePointAt(at)!)) {
    const after = matchAt(str, at, end, tokens, a, b);
    if (after >= 0) return after;
    if (comparisonsLeft < 0) return -1;
  }
  return -1;
}

/** The offset after tokens[a, b) if they match str at `at` (within `end`), else -1. */
function matchAt(str: string, at: number, end: number, tokens: number[], a: number, b: number): number {
  let q = at;
  let k = a;
  for (; k < b && q < end; k++) {
    const tk = tokens[k]!;
    const c = str.codePointAt(q)!;
    if (tk === BAD || (tk !== ANY && tk !== c)) break;
    q += width(c);
  }
  comparisonsLeft -= k - a + 1;
  return k === b && comparisonsLeft >= 0 ? q : -1;
}

/** The pattern after a star as Go walks it: escapes resolved, '?' any rune, stars collapsed. */
function tokenize(p: number[], from: number, to: number): number[] {
  const tokens: number[] = [];
  for (let k = from; k < to; k++) {
    const c = p[k]!;
    if (c === STAR) {
      if (tokens.at(-1) !== WILD) tokens.push(WILD);
    } else if (c === QUESTION) tokens.push(ANY);
    else if (c === BACKSLASH) tokens.push(k + 1 < to ? p[++k]! : BAD);
    else tokens.push(c);
  }
  return tokens;
}

/**
 * match.matchTrimSuffix: matches the pattern's literal tail against the subject's tail, from the
 * end, until an unescaped star; the pattern (from p0) starts with a star. Returns where the
 * subject and the pattern now end, or undefined if the tails differ.
 */
function trimSuffix(str: string, s0: number, p: number[], p0: number): [number, number] | undefined {
  let sEnd = str.length;
  let pEnd = p.length;
  while (sEnd > s0 && pEnd - p0 > 1) {
    const pc = p[pEnd - 1]!;
    let backslashes = 0;
    while (p[pEnd - 2 - backslashes] === BACKSLASH) backslashes++;
    const escaped = backslashes % 2 === 1;
    if (pc === STAR && !escaped) break;
    const [sc, w] = runeBefore(str, s0, sEnd);
    if (!((pc === QUESTION && !escaped) || pc === sc)) return undefined;
    sEnd -= w;
    pEnd -= escaped ? 2 : 1;
  }
  return [sEnd, pEnd];
}

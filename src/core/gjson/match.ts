// tidwall/match v1.1.1 MatchLimit: '*' and '?' wildcards over runes, '\' escapes, with gjson's
// complexity limit (10000 steps per byte of the subject) against pathological patterns.
import { utf8Length } from './gostring.ts';

type Outcome = 'match' | 'nomatch' | 'stop';

const STAR = 0x2a;
const QUESTION = 0x3f;
const BACKSLASH = 0x5c;

const runes = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0) ?? 0);

/** match.MatchLimit(str, pattern, maxcomp) reduced to its boolean, as gjson's matchLimit does. */
export function matchLimit(str: string, pattern: string, maxcomp = 10000): boolean {
  if (pattern === '*') return true;
  const counter = { n: 0 };
  const limit = utf8Length(str) * maxcomp;
  return match(runes(str), 0, runes(pattern), 0, counter, limit) === 'match';
}

// Subjects and patterns are rune arrays; s/p are start offsets, and suffix trimming shortens
// them by slicing (rare: only after a '*').
function match(str: number[], s: number, pat: number[], p: number, counter: { n: number }, limit: number): Outcome {
  if (counter.n > limit) return 'stop';
  counter.n++;
  while (p < pat.length) {
    let wild = false;
    let pc = pat[p] ?? 0;
    const hasChar = s < str.length;
    const sc = str[s] ?? 0;
    if (pc === QUESTION) {
      if (!hasChar) return 'nomatch';
    } else if (pc === STAR) {
      while (p + 1 < pat.length && pat[p + 1] === STAR) p++;
      if (p === pat.length - 1) return 'match';
      const trimmed = trimSuffix(str.slice(s), pat.slice(p));
      if (!trimmed) return 'nomatch';
      [str, pat] = trimmed;
      s = 0;
      p = 0;
      if (pat.length === 1) return 'match';
      const r = match(str, s, pat, p + 1, counter, limit);
      if (r !== 'nomatch') return r;
      if (s >= str.length) return 'nomatch';
      wild = true;
    } else {
      if (!hasChar) return 'nomatch';
      if (pc === BACKSLASH) {
        p++;
        if (p >= pat.length) return 'nomatch';
        pc = pat[p] ?? 0;
      }
      if (sc !== pc) return 'nomatch';
    }
    s++;
    if (!wild) p++;
  }
  return s >= str.length ? 'match' : 'nomatch';
}

// match.matchTrimSuffix: matches the pattern's literal tail against the subject's tail, from
// the end, until an unescaped '*'. The pattern starts with '*'.
function trimSuffix(str: number[], pat: number[]): [number[], number[]] | undefined {
  let sEnd = str.length;
  let pEnd = pat.length;
  while (sEnd > 0 && pEnd > 1) {
    const pc = pat[pEnd - 1] ?? 0;
    let width = 1;
    let backslashes = 0;
    while (pat[pEnd - 2 - backslashes] === BACKSLASH) backslashes++;
    const escaped = backslashes % 2 === 1;
    if (escaped) width++;
    if (pc === STAR && !escaped) break;
    if (!((pc === QUESTION && !escaped) || pc === str[sEnd - 1])) return undefined;
    sEnd--;
    pEnd -= width;
  }
  return [str.slice(0, sEnd), pat.slice(0, pEnd)];
}

// A line diff for showing a change to a person (`explain`): the lines each side keeps in common
// are the longest common subsequence; the rest are marked removed (-) or added (+), with a few
// unchanged lines around each change and "..." for what is left out.

/** Longest-common-subsequence table of two line lists (small inputs: objects, not files). */
function lcs(a: readonly string[], b: readonly string[]): number[][] {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) t[i]![j] = a[i] === b[j] ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
  }
  return t;
}

/** Beyond this many line pairs the table would cost too much memory: the diff is summarised. */
const MAX_PAIRS = 4_000_000;

/** The diff of `before` and `after` (texts), `context` unchanged lines around each change; '' when equal. */
export function lineDiff(before: string, after: string, context = 3): string {
  if (before === after) return '';
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length * b.length > MAX_PAIRS) return `(too large to show: ${a.length} lines before, ${b.length} after)`;
  const t = lcs(a, b);
  const ops: { mark: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push({ mark: ' ', line: a[i++]! });
      j++;
    }
    // Removals before additions, as a reader expects a replaced line.
    else if (i < a.length && (j >= b.length || t[i + 1]![j]! >= t[i]![j + 1]!)) ops.push({ mark: '-', line: a[i++]! });
    else ops.push({ mark: '+', line: b[j++]! });
  }
  if (!ops.some((o) => o.mark !== ' ')) return '';
  const near = ops.map((_, k) => ops.slice(Math.max(0, k - context), k + context + 1).some((o) => o.mark !== ' '));
  const out: string[] = [];
  ops.forEach((o, k) => {
    if (near[k]) out.push(`${o.mark} ${o.line}`);
    else if (k === 0 || near[k - 1]) out.push('...');
  });
  return out.join('\n');
}

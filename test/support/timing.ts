// Complexity checks for pure code: an adversarial input against a baseline of the same size, both
// timed in the same run, so the ratio holds on a noisy machine where absolute times do not.
import assert from 'node:assert/strict';

/** The fastest of a few runs of `f`, in milliseconds. */
export function fastest(f: () => unknown, runs = 3): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    f();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/** `adversarial` takes at most `factor` times what `baseline` takes (plus a millisecond of noise). */
export function noSlowerThan(adversarial: () => unknown, baseline: () => unknown, factor: number): void {
  const base = fastest(baseline);
  const adv = fastest(adversarial);
  assert.ok(adv <= factor * base + 1, `took ${adv.toFixed(1)} ms, baseline ${base.toFixed(1)} ms`);
}

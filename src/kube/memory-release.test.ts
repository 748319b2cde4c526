import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from './log.ts';
import { lastingBytes, releaseIdleMemory, ReleaseTrigger } from './memory-release.ts';
import { registry } from './metrics.ts';

const MiB = 2 ** 20;

describe('ReleaseTrigger', () => {
  const policy = { growthBytes: 32 * MiB, maxBusy: 0.05 };
  /** Each step: a look (MiB, busy) and whether it calls for a release, or what a release left (MiB). */
  type Step = { look: [number, number]; due: boolean } | { released: number };
  const cases: [string, Step[]][] = [
    ['the first release: once idle twice and grown by the growth from nothing', [{ look: [100, 0.5], due: false }, { look: [100, 0.01], due: false }, { look: [100, 0.01], due: true }]],
    ['idle means two looks in a row', [{ look: [100, 0], due: false }, { look: [100, 0.2], due: false }, { look: [100, 0], due: false }, { look: [100, 0], due: true }]],
    ['at the busy bound counts as idle', [{ look: [100, 0.05], due: false }, { look: [100, 0.05], due: true }]],
    [
      'after a release, only growth by as much again calls for another',
      [{ look: [100, 0], due: false }, { look: [100, 0], due: true }, { released: 60 }, { look: [91, 0], due: false }, { look: [92, 0], due: true }],
    ],
    [
      'a release that gave back nothing is not repeated until the process grows again',
      [{ look: [100, 0], due: false }, { look: [100, 0], due: true }, { released: 100 }, { look: [100, 0], due: false }, { look: [120, 0], due: false }, { look: [132, 0], due: true }],
    ],
    [
      'the baseline follows the process down',
      [{ look: [100, 0], due: false }, { look: [100, 0], due: true }, { released: 80 }, { look: [50, 0], due: false }, { look: [81, 0], due: false }, { look: [82, 0], due: true }],
    ],
    ['busy while grown: nothing', [{ look: [400, 0.06], due: false }, { look: [400, 0.9], due: false }]],
  ];
  for (const [name, steps] of cases) {
    it(name, () => {
      const t = new ReleaseTrigger(policy);
      steps.forEach((s, i) => {
        if ('released' in s) t.released(s.released * MiB);
        else assert.equal(t.look({ bytes: s.look[0] * MiB, busy: s.look[1] }), s.due, `step ${i}`);
      });
    });
  }
  it('never with a growth of 0 (off)', () => {
    const t = new ReleaseTrigger({ growthBytes: 0, maxBusy: 1 });
    assert.equal(t.look({ bytes: 10_000 * MiB, busy: 0 }), false);
    assert.equal(t.look({ bytes: 10_000 * MiB, busy: 0 }), false);
  });
});

describe('releaseIdleMemory', () => {
  it('gives back, once idle, the pages a burst left in the old generation, which an ordinary full collection keeps', async () => {
    const releases = async (): Promise<number> => (await registry.getSingleMetric('cluster_registry_memory_releases_total')?.get())?.values[0]?.value ?? 0;
    const before = await releases();
    const start = await lastingBytes();
    const stop = new AbortController();
    const running = releaseIdleMemory({ growthBytes: 16 * MiB, intervalMs: 50, log: silentLogger }, stop.signal);
    try {
      // A burst of many small objects, kept past a few collections (so into the old generation),
      // then all garbage: what a relist or a convergence leaves.
      let burst: unknown[] | undefined = [];
      for (let i = 0; i < 2_000_000; i++) burst.push({ i, s: `x${i}` });
      await new Promise((r) => setTimeout(r, 10));
      assert.equal(burst.length, 2_000_000);
      burst = undefined;
      const peak = await lastingBytes();
      assert.ok(peak - start >= 48 * MiB, `the burst held ${Math.round((peak - start) / MiB)} MiB`);
      // Back near where it started: waits on that, not on the first release, which may have come before the burst ended.
      const deadline = Date.now() + 30_000;
      for (let now = await lastingBytes(); now - start >= 16 * MiB || (await releases()) === before; now = await lastingBytes()) {
        assert.ok(Date.now() < deadline, `30 s after a burst of ${Math.round((peak - start) / MiB)} MiB, ${Math.round((now - start) / MiB)} MiB of it still held`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      stop.abort();
      await running;
    }
  });

  it('does nothing when turned off: returns at once, never waiting for its signal', { timeout: 5000 }, async () => {
    const releases = async (): Promise<number> => (await registry.getSingleMetric('cluster_registry_memory_releases_total')?.get())?.values[0]?.value ?? 0;
    const before = await releases();
    await releaseIdleMemory({ growthBytes: 0, intervalMs: 1, log: silentLogger }, new AbortController().signal);
    assert.equal(await releases(), before);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from './log.ts';
import { releaseDue, releaseIdleMemory, nextBaseline, type MemoryReading } from './memory-release.ts';
import { registry } from './metrics.ts';

const MiB = 2 ** 20;

describe('releaseDue', () => {
  const policy = { growthBytes: 32 * MiB, maxBusy: 0.05 };
  const cases: [string, number, MemoryReading, boolean][] = [
    ['idle and grown by the growth', 100 * MiB, { anonBytes: 132 * MiB, busy: 0.01 }, true],
    ['idle and grown by more', 100 * MiB, { anonBytes: 400 * MiB, busy: 0 }, true],
    ['idle, grown by less', 100 * MiB, { anonBytes: 131 * MiB, busy: 0 }, false],
    ['grown, but busy', 100 * MiB, { anonBytes: 200 * MiB, busy: 0.06 }, false],
    ['at the busy bound', 100 * MiB, { anonBytes: 200 * MiB, busy: 0.05 }, true],
    ['shrunk below the baseline', 100 * MiB, { anonBytes: 60 * MiB, busy: 0 }, false],
  ];
  for (const [name, baseline, reading, due] of cases) {
    it(name, () => assert.equal(releaseDue(baseline, reading, policy), due));
  }
  it('never with a growth of 0 (off)', () => assert.equal(releaseDue(0, { anonBytes: 10_000 * MiB, busy: 0 }, { growthBytes: 0, maxBusy: 1 }), false));
});

describe('nextBaseline', () => {
  it('follows the process down, never up: a release that gave back nothing waits for the growth again', () => {
    assert.equal(nextBaseline(100 * MiB, 80 * MiB), 80 * MiB);
    assert.equal(nextBaseline(100 * MiB, 180 * MiB), 100 * MiB);
  });
});

describe('releaseIdleMemory', () => {
  it('gives back, once idle, the memory a burst freed, and counts it', async () => {
    const count = async (name: string): Promise<number> => (await registry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
    const before = await count('cluster_registry_memory_releases_total');
    const stop = new AbortController();
    const running = releaseIdleMemory({ growthBytes: 16 * MiB, intervalMs: 50, log: silentLogger }, stop.signal);
    try {
      // A burst: about 80 MiB of short-lived objects, all garbage once it ends.
      let burst: unknown[] | undefined = Array.from({ length: 100 }, (_, i) => new Array(100_000).fill({ i }));
      assert.equal(burst.length, 100);
      burst = undefined;
      const deadline = Date.now() + 30_000;
      while ((await count('cluster_registry_memory_releases_total')) === before) {
        assert.ok(Date.now() < deadline, 'no release within 30 s of an idle process holding a burst');
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok((await count('cluster_registry_memory_released_bytes_total')) >= 16 * MiB, 'the collection gave back at least the growth that called for it');
    } finally {
      stop.abort();
      await running;
    }
  });

  it('does nothing when turned off', async () => {
    const stop = new AbortController();
    // Off returns at once, without waiting for the signal.
    await releaseIdleMemory({ growthBytes: 0, intervalMs: 50, log: silentLogger }, stop.signal);
    assert.equal(stop.signal.aborted, false);
  });
});

// Gives back the memory a burst of work left behind. After a group forms, a peer relists or many
// objects converge, V8 keeps the pages it freed (its memory reducer waits for signals Node never
// sends) and the process stays at its peak: in a full mesh, every member that joined left a few
// MiB behind in each controller. Once the process is idle and its anonymous memory has grown well
// past where the last release left it, one full collection that returns free pages to the system
// brings it back to what it holds.
import { readFile } from 'node:fs/promises';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sleep } from './backoff.ts';
import type { Logger } from './log.ts';
import { counter, exponentialBuckets, histogram } from './metrics.ts';

/** One look at the process: its anonymous memory, and how busy its event loop was since the last look (0 to 1). */
export interface MemoryReading {
  readonly anonBytes: number;
  readonly busy: number;
}

export interface MemoryReleasePolicy {
  /** Growth over the baseline that calls for a release; 0 turns releasing off. */
  readonly growthBytes: number;
  /** The most the event loop may have been busy for the process to count as idle. */
  readonly maxBusy: number;
}

/**
 * Whether to release now: idle, and grown by the policy's growth over the baseline (anonymous
 * memory after the last release, or its lowest since; none before the first). Busy periods are left alone: a full
 * collection there pauses work for what the next burst takes back anyway.
 */
export function releaseDue(baselineBytes: number, r: MemoryReading, p: MemoryReleasePolicy): boolean {
  return p.growthBytes > 0 && r.busy <= p.maxBusy && r.anonBytes - baselineBytes >= p.growthBytes;
}

/**
 * The baseline after a reading: never above what the process holds now, so that a release that
 * gave back nothing (the growth is live memory, or native memory a collection cannot return) is
 * not repeated until the process grows by the policy's growth again.
 */
export function nextBaseline(baselineBytes: number, anonBytes: number): number {
  return Math.min(baselineBytes, anonBytes);
}

export interface MemoryReleaseOptions {
  readonly growthBytes: number;
  readonly intervalMs: number;
  readonly log: Logger;
}

const releases = counter({ name: 'cluster_registry_memory_releases_total', help: 'Full collections run to give back memory left by a burst of work, once idle' });
const released = counter({ name: 'cluster_registry_memory_released_bytes_total', help: 'Anonymous memory the process gave back by those collections' });
const pauses = histogram({ name: 'cluster_registry_memory_release_pause_seconds', help: 'How long each of those collections paused the process', buckets: exponentialBuckets(0.005, 2, 10) });

/** Idle is below 5% of the time in callbacks: an idle controller's health checks and renewals take about 1%. */
const MAX_BUSY = 0.05;

/** Releases memory as the policy says, looking every intervalMs, until the signal ends it. */
export async function releaseIdleMemory(o: MemoryReleaseOptions, signal: AbortSignal): Promise<void> {
  if (o.growthBytes <= 0) return;
  const collect = fullCollection();
  const policy: MemoryReleasePolicy = { growthBytes: o.growthBytes, maxBusy: MAX_BUSY };
  // From nothing: the first idle look releases what start-up left, and sets the baseline.
  let baseline = 0;
  let since: EventLoopUtilization = performance.eventLoopUtilization();
  while (!signal.aborted) {
    await sleep(o.intervalMs, signal);
    if (signal.aborted) return;
    const now = performance.eventLoopUtilization();
    const reading = { anonBytes: await anonymousBytes(), busy: performance.eventLoopUtilization(now, since).utilization };
    since = now;
    baseline = nextBaseline(baseline, reading.anonBytes);
    if (!releaseDue(baseline, reading, policy)) continue;
    const started = performance.now();
    collect();
    const seconds = (performance.now() - started) / 1000;
    baseline = await anonymousBytes();
    const gave = Math.max(0, reading.anonBytes - baseline);
    releases.inc();
    released.inc(gave);
    pauses.observe(seconds);
    o.log.debug({ beforeMiB: mib(reading.anonBytes), afterMiB: mib(baseline), pauseMs: Math.round(seconds * 1000) }, 'gave back memory left by a burst of work');
  }
}

const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

/**
 * V8's collection of everything it can, which also returns its free pages. V8 hands it only to
 * code compiled while its gc extension is on, so it is taken from a context made in that window
 * and the flag is put back: nothing else in the process sees a `gc` global.
 */
function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  try {
    const gc = runInNewContext('gc') as (o: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
    return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** Anonymous resident memory (the heaps, not mapped files), where Linux says it; else all of it. */
async function anonymousBytes(): Promise<number> {
  try {
    const m = /^RssAnon:\s+(\d+) kB$/m.exec(await readFile('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // Not Linux: the resident set is the nearest figure.
  }
  return process.memoryUsage.rss();
}

// Gives back the memory a burst of work left behind. After a group forms, a peer relists or many
// objects converge, V8 keeps the pages it freed (its memory reducer waits for signals Node never
// sends) and the process stays at its peak: in a full mesh, every member that joined left a few
// MiB behind in each controller. Once the process has been idle for a while and its memory has
// grown well past where the last release left it, one full collection that returns free pages to
// the system brings it back to what it holds.
import { readFile } from 'node:fs/promises';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sleep } from './backoff.ts';
import type { Logger } from './log.ts';
import { counter, exponentialBuckets, histogram } from './metrics.ts';

/** One look at the process. */
export interface MemoryReading {
  /**
   * Anonymous memory less V8's young generation: that one grows back to its size within seconds
   * of any work, so releasing it would give back nothing that lasts (and would be done again).
   */
  readonly bytes: number;
  /** How busy the event loop was since the last look, 0 to 1. */
  readonly busy: number;
}

export interface MemoryReleasePolicy {
  /** Growth over the baseline that calls for a release; 0 turns releasing off. */
  readonly growthBytes: number;
  /** The most the event loop may have been busy, over each of the last two looks, for the process to count as idle. */
  readonly maxBusy: number;
}

/**
 * When to release. The baseline is what the last release left (none before the first), or the
 * lowest reading since: a release that gave back little (the growth is live memory, or native
 * memory a collection cannot return) is not repeated until the process grows by as much again.
 * Idle means two looks in a row: a release at the first quiet look would often land at the start
 * of the next burst, pausing its work for what that burst takes back anyway.
 */
export class ReleaseTrigger {
  private readonly policy: MemoryReleasePolicy;
  private baseline = 0;
  private wasIdle = false;

  constructor(policy: MemoryReleasePolicy) {
    this.policy = policy;
  }

  /** Takes a look; true when a release is due now. */
  look(r: MemoryReading): boolean {
    this.baseline = Math.min(this.baseline, r.bytes);
    const idle = r.busy <= this.policy.maxBusy;
    const due = this.policy.growthBytes > 0 && idle && this.wasIdle && r.bytes - this.baseline >= this.policy.growthBytes;
    this.wasIdle = idle;
    return due;
  }

  /** A release ran and left the process at `bytes`. */
  released(bytes: number): void {
    this.baseline = bytes;
  }
}

export interface MemoryReleaseOptions {
  readonly growthBytes: number;
  readonly intervalMs: number;
  readonly log: Logger;
}

/** The least growth that may call for a release: each pauses the process for tens to hundreds of milliseconds. */
export const MIN_RELEASE_GROWTH = 8 * 2 ** 20;

const releases = counter({ name: 'cluster_registry_memory_releases_total', help: 'Full collections run to give back memory left by a burst of work, once idle' });
const released = counter({ name: 'cluster_registry_memory_released_bytes_total', help: 'Memory (anonymous, less the young generation) the process gave back by those collections' });
const pauses = histogram({ name: 'cluster_registry_memory_release_pause_seconds', help: 'How long each of those collections paused the process', buckets: exponentialBuckets(0.005, 2, 10) });

/** Idle is at most 5% of the time in callbacks: an idle controller's health checks and renewals take about 1%. */
const MAX_BUSY = 0.05;

/** Releases memory as the policy says, looking every intervalMs, until the signal ends it. */
export async function releaseIdleMemory(o: MemoryReleaseOptions, signal: AbortSignal): Promise<void> {
  if (o.growthBytes <= 0) return;
  const collect = fullCollection();
  const trigger = new ReleaseTrigger({ growthBytes: o.growthBytes, maxBusy: MAX_BUSY });
  let since: EventLoopUtilization = performance.eventLoopUtilization();
  while (!signal.aborted) {
    await sleep(o.intervalMs, signal);
    if (signal.aborted) return;
    const now = performance.eventLoopUtilization();
    const reading = { bytes: await lastingBytes(), busy: performance.eventLoopUtilization(now, since).utilization };
    since = now;
    if (!trigger.look(reading)) continue;
    const started = performance.now();
    collect();
    const seconds = (performance.now() - started) / 1000;
    const after = await lastingBytes();
    trigger.released(after);
    releases.inc();
    released.inc(Math.max(0, reading.bytes - after));
    pauses.observe(seconds);
    o.log.debug({ beforeMiB: mib(reading.bytes), afterMiB: mib(after), pauseMs: Math.round(seconds * 1000) }, 'gave back memory left by a burst of work');
  }
}

const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

type Collect = (o: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's collection of everything it can, which also returns its free pages. V8 hands it only to
 * code compiled while its gc extension is on, so it is taken from a context made in that window
 * and the flag is put back: nothing else in the process sees a `gc` global. A process started
 * with `--expose-gc` has one already, and keeps its flag.
 */
function fullCollection(): () => void {
  const given = (globalThis as { gc?: unknown }).gc;
  let gc: Collect;
  if (typeof given === 'function') {
    gc = given as Collect;
  } else {
    setFlagsFromString('--expose-gc');
    try {
      gc = runInNewContext('gc') as Collect;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/** Anonymous resident memory (the heaps, not mapped files) where Linux says it, else all of it; less the young generation. */
export async function lastingBytes(): Promise<number> {
  let anon = process.memoryUsage.rss();
  try {
    const m = /^RssAnon:\s+(\d+) kB$/m.exec(await readFile('/proc/self/status', 'utf8'));
    if (m) anon = Number(m[1]) * 1024;
  } catch {
    // Not Linux: the resident set is the nearest figure.
  }
  const young = getHeapSpaceStatistics()
    .filter((s) => s.space_name.startsWith('new_'))
    .reduce((sum, s) => sum + s.space_size, 0);
  return Math.max(0, anon - young);
}

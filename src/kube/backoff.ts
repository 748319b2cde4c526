// Jittered exponential backoff like client-go's wait.Backoff: each step doubles the base delay,
// jitter adds up to `jitter` times the base on top, and the result never exceeds `maxMs`.

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  factor?: number;
  /** Extra random fraction of the delay, 0..jitter. client-go's reflector uses 1.0. */
  jitter?: number;
  random?: () => number;
}

export class Backoff {
  private readonly opts: Required<BackoffOptions>;
  private step = 0;

  constructor(opts: BackoffOptions) {
    this.opts = { factor: 2, jitter: 1, random: Math.random, ...opts };
  }

  /** The delay before the next attempt; advances the step. */
  next(): number {
    const { initialMs, maxMs, factor, jitter, random } = this.opts;
    const base = Math.min(maxMs, initialMs * factor ** this.step);
    if (base < maxMs) this.step++;
    return Math.min(maxMs, base * (1 + random() * jitter));
  }

  reset(): void {
    this.step = 0;
  }
}

/** Waits `ms`, or less if the signal aborts first; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

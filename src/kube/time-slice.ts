// Long synchronous work shares the event loop: it hands the loop back (one turn, so timers,
// sockets and probes are served) whenever it has held it for a slice. Lease renewals, health
// probes and watches then wait a slice and the one step that ends it, not the whole of the work.

/** How long work holds the event loop before it hands it back. */
const SLICE_MS = 20;

/** One run of work, timed from its start or from its last pause. */
export class TimeSlice {
  private start = performance.now();
  private readonly ms: number;

  constructor(ms = SLICE_MS) {
    this.ms = ms;
  }

  /** Resolves at once within the slice; past it, on the loop's next turn, starting a new slice. */
  async pause(): Promise<void> {
    if (performance.now() - this.start < this.ms) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.start = performance.now();
  }
}

/**
 * What the computations past their first step may hold together (the sync's: the object their
 * templates read, which they copy and decode): beyond it they wait for room, one at a time when
 * a single one is larger.
 */
const MAX_HELD_BYTES = 32 * 2 ** 20;

/** A computation that yields between its steps, and what waits for its result. */
interface Job {
  steps: Generator<void, unknown, void>;
  settle: (outcome: { value: unknown } | { error: Error }) => void;
  /** What it holds once past its first step, charged to the driver's room while it runs. */
  bytes: number;
  admitted: boolean;
}

/**
 * Runs computations that yield between their steps, taking turns on the event loop: a
 * computation's first step runs at once (it should be cheap: the sync's pause before anything
 * costly), the others in the driver's turns, each of which takes steps for a slice. A computation
 * new to the queue goes first, so a cheap one is done within a turn or two however many costly
 * ones wait; the others take one step each in turn. Were each to pause on its own, every
 * computation paused in one turn would resume in the next, and many workers would hold that turn
 * for many steps together. Those that hold much wait for room before their second step.
 */
export class SliceDriver {
  private readonly queue: Job[] = [];
  /** Past their first step, waiting for room. */
  private readonly waiting: Job[] = [];
  private readonly ms: number;
  private readonly maxBytes: number;
  private held = 0;
  private scheduled = false;

  constructor(ms = SLICE_MS, maxBytes = MAX_HELD_BYTES) {
    this.ms = ms;
    this.maxBytes = maxBytes;
  }

  /**
   * The computation's result. `holds` says what it holds once past its first step (asked only
   * then); an abort drops it where it stands and rejects with the signal's reason.
   */
  run<T>(steps: Generator<void, T, void>, signal?: AbortSignal, holds?: () => number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      let abort: (() => void) | undefined;
      let settled = false;
      const job: Job = {
        steps,
        bytes: 0,
        admitted: false,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          if (abort) signal?.removeEventListener('abort', abort);
          this.release(job);
          if ('error' in outcome) reject(outcome.error);
          else resolve(outcome.value as T);
        },
      };
      if (this.step(job)) return;
      const bytes = holds?.() ?? 0;
      job.bytes = Number.isFinite(bytes) && bytes > 0 ? bytes : 0;
      if (signal) {
        abort = (): void => {
          for (const list of [this.queue, this.waiting]) {
            const at = list.indexOf(job);
            if (at >= 0) list.splice(at, 1);
          }
          try {
            steps.return(undefined as T);
          } finally {
            job.settle({ error: signal.reason as Error });
          }
        };
        signal.addEventListener('abort', abort, { once: true });
      }
      if (this.waiting.length > 0 || !this.fits(job)) this.waiting.push(job);
      else this.admit(job);
    });
  }

  /** Takes one step of a computation: whether it is over (answered or failed). */
  private step(job: Job): boolean {
    try {
      const r = job.steps.next();
      if (r.done) job.settle({ value: r.value });
      return r.done === true;
    } catch (err) {
      job.settle({ error: err as Error });
      return true;
    }
  }

  /** Whether what a computation holds has room beside the others' (always, when nothing is held). */
  private fits(job: Job): boolean {
    return this.held === 0 || this.held + job.bytes <= this.maxBytes;
  }

  private admit(job: Job): void {
    this.held += job.bytes;
    job.admitted = true;
    this.queue.unshift(job);
    this.schedule();
  }

  /** A computation is over: its room goes to those waiting for it, first come first. */
  private release(job: Job): void {
    if (job.admitted) {
      job.admitted = false;
      this.held -= job.bytes;
    }
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!)) this.admit(this.waiting.shift()!);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.turn());
  }

  private turn(): void {
    this.scheduled = false;
    const start = performance.now();
    // At least one step a turn, however long the last one took.
    do {
      const job = this.queue.shift();
      if (!job) return;
      if (!this.step(job)) this.queue.push(job);
    } while (performance.now() - start < this.ms);
    if (this.queue.length > 0) this.schedule();
  }
}

const shared = new SliceDriver();

/** Runs a computation that yields between its steps on the process's one driver (see SliceDriver.run). */
export function inSlices<T>(steps: Generator<void, T, void>, signal?: AbortSignal, holds?: () => number): Promise<T> {
  return shared.run(steps, signal, holds);
}

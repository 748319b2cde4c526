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

/** A computation that yields between its steps, and what waits for its result. */
interface Job {
  steps: Generator<void, unknown, void>;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/**
 * Runs computations that yield between their steps, taking turns on the event loop: a
 * computation's first step runs at once (it should be cheap: the sync's pause before anything
 * costly), the others in the driver's turns, each of which takes steps for a slice. A computation
 * new to the queue goes first, so a cheap one is done within a turn or two however many costly
 * ones wait; the others take one step each in turn. Were each to pause on its own, every
 * computation paused in one turn would resume in the next, and many workers would hold that turn
 * for many steps together.
 */
export class SliceDriver {
  private readonly queue: Job[] = [];
  private readonly ms: number;
  private scheduled = false;

  constructor(ms = SLICE_MS) {
    this.ms = ms;
  }

  /** The computation's result; an abort drops it where it stands and rejects with the signal's reason. */
  run<T>(steps: Generator<void, T, void>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const job: Job = { steps, resolve: resolve as (value: unknown) => void, reject };
      if (this.step(job)) return;
      if (signal) {
        const abort = (): void => {
          const at = this.queue.indexOf(job);
          if (at >= 0) this.queue.splice(at, 1);
          steps.return(undefined as T);
          reject(signal.reason as Error);
        };
        signal.addEventListener('abort', abort, { once: true });
        job.resolve = (value) => {
          signal.removeEventListener('abort', abort);
          resolve(value as T);
        };
        job.reject = (err) => {
          signal.removeEventListener('abort', abort);
          reject(err);
        };
      }
      this.queue.unshift(job);
      this.schedule();
    });
  }

  /** Takes one step of a computation: whether it is over (answered or failed). */
  private step(job: Job): boolean {
    try {
      const r = job.steps.next();
      if (r.done) job.resolve(r.value);
      return r.done === true;
    } catch (err) {
      job.reject(err as Error);
      return true;
    }
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

/** Runs a computation that yields between its steps on the process's one driver, until `signal` aborts. */
export function inSlices<T>(steps: Generator<void, T, void>, signal?: AbortSignal): Promise<T> {
  return shared.run(steps, signal);
}

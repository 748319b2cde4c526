// Long synchronous work shares the event loop: it hands the loop back (one turn, so timers,
// sockets and probes are served) whenever it has held it for a slice. Lease renewals, health
// probes and watches then wait about a slice, not the whole of the work.

/** How long work holds the event loop before it hands it back. */
export const SLICE_MS = 20;

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
  reject: (err: unknown) => void;
}

/**
 * Runs computations that yield between their steps, all on one turn of the event loop at a
 * time: a computation's first step runs at once, the others in the driver's turns, each of which
 * takes steps of the computations in turn for a slice. Were each to pause on its own, every
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

  run<T>(steps: Generator<void, T, void>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job: Job = { steps, resolve: resolve as (value: unknown) => void, reject };
      if (this.step(job)) return;
      this.queue.push(job);
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
      job.reject(err);
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

/** Runs a computation that yields between its steps on the process's one driver (or `driver`). */
export function inSlices<T>(steps: Generator<void, T, void>, driver: SliceDriver = shared): Promise<T> {
  return driver.run(steps);
}

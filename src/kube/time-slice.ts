// Long synchronous work shares the event loop: it hands the loop back (one turn, so timers,
// sockets and probes are served) whenever it has held it for a slice. Lease renewals, health
// probes and watches then wait a slice and the one step that ends it, not the whole of the work.

/** How long work holds the event loop before it hands it back. */
const SLICE_MS = 20;

/** Resolves on the event loop's next turn, once timers and sockets have had theirs. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

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
    await nextTurn();
    this.start = performance.now();
  }
}

/**
 * What the computations past their first step may say they hold together (a render's: the size
 * as JSON of the object its templates read, which they copy and decode): beyond it they wait for
 * room, one at a time when a single one is larger.
 */
const MAX_HELD_BYTES = 32 * 2 ** 20;

/**
 * The steps of a computation the driver runs: it yields between them, and a number it yields
 * says how many bytes it holds from there on (see holding).
 */
export type Steps<T> = Generator<number | void, T, void>;

/**
 * `steps`, saying at their first pause that from there on they hold `bytes()` (asked only then:
 * a computation done in its first step holds nothing past it).
 */
export function* holding<T>(bytes: () => number, steps: Generator<void, T, void>): Steps<T> {
  try {
    let r = steps.next();
    if (r.done) return r.value;
    yield bytes();
    for (;;) {
      r = steps.next();
      if (r.done) return r.value;
      yield;
    }
  } finally {
    // Dropped (aborted) where it stands: the inner computation is closed too.
    steps.return(undefined as T);
  }
}

/** Where computations that yield between their steps are run (a SliceDriver; one per engine). */
export interface Renders {
  run<T>(steps: Steps<T>, signal?: AbortSignal): Promise<T>;
}

/** A computation that yields between its steps, and what waits for its result. */
interface Job {
  steps: Steps<unknown>;
  settle: (outcome: { value: unknown } | { error: Error }) => void;
  /** What it says it holds, charged to the driver's room while it runs. */
  bytes: number;
  admitted: boolean;
  /** Answered, failed or dropped: nothing it says after that is charged. */
  settled: boolean;
}

/**
 * Runs computations that yield between their steps, taking turns on the event loop: a
 * computation's first step runs at once (it should be cheap: a render pauses before anything
 * costly), the others in the driver's turns, each of which takes steps for a slice. A computation
 * new to the queue goes first, so a cheap one is done within a turn or two however many costly
 * ones wait; the others take one step each in turn. Were each to pause on its own, every
 * computation paused in one turn would resume in the next, and many workers would hold that turn
 * for many steps together. Those that hold much wait for room before their second step.
 */
export class SliceDriver implements Renders {
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

  /** The computation's result; an abort drops it where it stands and rejects with the signal's reason. */
  run<T>(steps: Steps<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      let abort: (() => void) | undefined;
      const job: Job = {
        steps,
        bytes: 0,
        admitted: false,
        settled: false,
        settle: (outcome) => {
          if (job.settled) return;
          job.settled = true;
          if (abort) signal?.removeEventListener('abort', abort);
          this.release(job);
          if ('error' in outcome) reject(outcome.error);
          else resolve(outcome.value as T);
        },
      };
      const first = this.step(job);
      if (first.done) return;
      if (signal) {
        abort = (): void => {
          for (const list of [this.queue, this.waiting]) {
            const at = list.indexOf(job);
            if (at >= 0) list.splice(at, 1);
          }
          job.settle({ error: signal.reason as Error });
          this.close(job);
        };
        // Aborted during its first step, before anything listened.
        if (signal.aborted) {
          abort();
          return;
        }
        signal.addEventListener('abort', abort, { once: true });
      }
      this.enter(job, first.holds ?? 0, true);
    });
  }

  /** Takes one step of a computation: whether it is over (answered or failed), and what it says it holds. */
  private step(job: Job): { done: boolean; holds?: number } {
    try {
      const r = job.steps.next();
      if (r.done) job.settle({ value: r.value });
      else if (job.settled) {
        // Dropped during this very step (its signal aborted from within): closed now that it paused.
        this.close(job);
        return { done: true };
      }
      return typeof r.value === 'number' && !r.done ? { done: false, holds: r.value } : { done: r.done === true };
    } catch (err) {
      job.settle({ error: err as Error });
      return { done: true };
    }
  }

  /** Closes a dropped computation where it stands (one still running is closed after its step). */
  private close(job: Job): void {
    try {
      job.steps.return(undefined);
    } catch {
      // Running: step() closes it once it pauses.
    }
  }

  /**
   * A computation says what it holds (a size that is not a positive number is none): it
   * takes its steps once that has room, first come first. One taking steps already goes on if it
   * holds no more than it did; one that holds more waits for room again.
   */
  private enter(job: Job, said: number, fresh: boolean): void {
    const bytes = said > 0 ? Math.min(said, Number.MAX_SAFE_INTEGER) : 0;
    if (job.admitted && bytes <= job.bytes) {
      this.held -= job.bytes - bytes;
      job.bytes = bytes;
      this.queue.push(job);
    } else {
      if (job.admitted) {
        job.admitted = false;
        this.held -= job.bytes;
      }
      job.bytes = bytes;
      if (this.waiting.length > 0 || !this.fits(job)) this.waiting.push(job);
      else this.admit(job, fresh);
    }
    // What it gave back may have room for those waiting.
    this.admitWaiting();
  }

  /** Whether what a computation holds has room beside the others' (always, when nothing is held). */
  private fits(job: Job): boolean {
    return this.held === 0 || this.held + job.bytes <= this.maxBytes;
  }

  /** Lets a computation take steps: one new to the queue goes first. */
  private admit(job: Job, fresh: boolean): void {
    this.held += job.bytes;
    job.admitted = true;
    if (fresh) this.queue.unshift(job);
    else this.queue.push(job);
    this.schedule();
  }

  /** A computation is over: its room goes to those waiting for it. */
  private release(job: Job): void {
    if (job.admitted) {
      job.admitted = false;
      this.held -= job.bytes;
    }
    this.admitWaiting();
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!)) this.admit(this.waiting.shift()!, true);
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
      const { done, holds } = this.step(job);
      if (done) continue;
      if (holds === undefined) this.queue.push(job);
      else this.enter(job, holds, false);
    } while (performance.now() - start < this.ms);
    if (this.queue.length > 0) this.schedule();
  }
}

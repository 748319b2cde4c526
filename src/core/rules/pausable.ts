// A computation that may stop between its steps: a generator that yields wherever whoever drives
// it may let others run. The core does no I/O and so cannot hand the event loop back itself, yet
// what a peer's rule makes it compute (one object's templates) may take a large share of a second.

/** Yields between steps; returns the result. */
export type Pausable<T> = Generator<void, T, void>;

/** Runs a pausable computation through without pausing, for callers that have no loop to share (whatever its pauses say). */
export function runThrough<T>(steps: Generator<unknown, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

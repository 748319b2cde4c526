// The event loop's turns, counted by a chain of immediates: what a test reads to tell whether work
// handed the loop back.

export interface LoopTurns {
  /** Turns counted so far. */
  readonly count: () => number;
  readonly stop: () => void;
}

/** Counts the loop's turns until stopped. */
export function countTurns(): LoopTurns {
  let n = 0;
  let running = true;
  const tick = (): void => {
    if (!running) return;
    n++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return { count: () => n, stop: () => (running = false) };
}

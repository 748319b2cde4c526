// A loop's pause that something can cut short: `wait` resolves after the delay, on `kick`, or when
// the signal aborts, whichever comes first. A kick with no one waiting is remembered once.
export class Wakeup {
  private pending = false;
  private readonly waiting = new Set<() => void>();

  kick(): void {
    if (this.waiting.size === 0) this.pending = true;
    for (const done of [...this.waiting]) done();
  }

  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.waiting.add(done);
    });
  }
}

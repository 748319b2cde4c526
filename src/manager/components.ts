// Components of the controller process and the terms they run in (controller-runtime's Runnables
// and their manager). A term is one stretch of leadership (or the whole process without leader
// election): every leader component starts with it and all stop together. A component that
// fails ends its term, after its reason was logged and recorded, and a new term starts afresh
// (after a backoff), so one broken part never leaves the others running half a controller.
import { Backoff, sleep, type Logger } from '../kube/index.ts';

export interface Component {
  readonly name: string;
  /** Runs until the signal aborts; a rejection (or an early return) is a failure. */
  run(signal: AbortSignal): Promise<void>;
}

export class ComponentError extends Error {
  override readonly name = 'ComponentError';
}

/**
 * Runs the components of one term until the signal aborts or one of them fails; returns after
 * all of them stopped. Rejects with the first failure.
 */
export async function runTerm(components: readonly Component[], signal: AbortSignal, log: Logger): Promise<void> {
  const term = new AbortController();
  const termSignal = AbortSignal.any([signal, term.signal]);
  let failure: ComponentError | undefined;
  await Promise.all(
    components.map(async (c) => {
      try {
        await c.run(termSignal);
        if (!termSignal.aborted) throw new Error('stopped on its own');
      } catch (err) {
        if (termSignal.aborted && !failure) return;
        failure ??= new ComponentError(`${c.name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        log.error({ component: c.name, err }, 'component failed; ending the term');
      } finally {
        term.abort();
      }
    }),
  );
  if (failure && !signal.aborted) throw failure;
}

/**
 * Runs terms back to back until the signal aborts: a failed term is reported through
 * `onFailure` and followed by a new one after a growing pause.
 */
export async function runTerms(term: (signal: AbortSignal) => Promise<void>, signal: AbortSignal, log: Logger, onFailure: (err: Error) => void): Promise<void> {
  const backoff = new Backoff({ initialMs: 1000, maxMs: 60_000 });
  while (!signal.aborted) {
    const started = performance.now();
    try {
      await term(signal);
      return;
    } catch (err) {
      if (signal.aborted) return;
      const e = err instanceof Error ? err : new Error(String(err));
      onFailure(e);
      // A term that ran a good while before failing starts the backoff over.
      if (performance.now() - started > 300_000) backoff.reset();
      const delay = backoff.next();
      log.warn({ retryInMs: Math.round(delay) }, 'starting a new term after a failure');
      await sleep(delay, signal);
    }
  }
}

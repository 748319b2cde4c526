// A raw watch for tests, the chaos harness and benchmarks that goes on from the last version it saw
// whenever the API server ends it: at its timeout, when a watch moves off a connection told to go
// away, or when a loaded server closes a watcher it finds slow. A reader that counts or waits on
// events must never stop hearing them silently, so anything else ends it with the error, unless
// the caller says how to ride it out.
import { ApiError, Backoff, isGone, sleep, watchWasHealthy, type KubeObject, type ResourceRef, type RestClient, type Status, type WatchStream } from '../../src/kube/index.ts';

export interface ResumingWatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly timeoutSeconds?: number;
  /** Where the first watch starts (a list's version); each next one goes on from the last version seen. */
  readonly resourceVersion: string;
  /**
   * Lists again after a version too old to go on from (410) and returns the version to go on from;
   * `signal` aborts when the watch is closed. A listing that fails ends the watch. Without it a 410
   * ends the watch: what was missed meanwhile cannot be told.
   */
  readonly relist?: (signal: AbortSignal) => Promise<string>;
  /**
   * Opens the watch again this long after it failed to open or to read, or sent an ERROR event
   * other than a 410 (its API server down, paused or erring). Without it such a failure ends the
   * watch. An error thrown by the caller's own `onEvent` always ends it.
   */
  readonly retryMs?: number;
}

export type WatchedEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ResumingWatch {
  close(): void;
  /** Settles when the watch ends: undefined once closed, otherwise the error that ended it. Never rejects. */
  readonly ended: Promise<unknown>;
}

/** What the caller's `onEvent` threw: never ridden out, since the event it failed on would be lost. */
class CallerError extends Error {}

/** A quick end with nothing in it is opened again after a pause, not in a spin. */
const QUICK_END_BACKOFF = { initialMs: 200, maxMs: 5_000 };

/** Opens the watch (an error opening it is thrown here) and keeps it going until closed or failed. */
export async function resumingWatch<T extends KubeObject = KubeObject>(rest: RestClient, ref: ResourceRef, opts: ResumingWatchOptions, onEvent: (type: WatchedEventType, obj: T) => void): Promise<ResumingWatch> {
  const stop = new AbortController();
  let resourceVersion = opts.resourceVersion;
  // Bookmarks keep the version to go on from recent while nothing changes.
  const open = (): Promise<WatchStream<T>> =>
    rest.watch<T>(ref, { namespace: opts.namespace, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, timeoutSeconds: opts.timeoutSeconds, resourceVersion, allowWatchBookmarks: true, signal: stop.signal });
  let stream: WatchStream<T> | undefined = await open();

  /** Reads one watch to its end; returns how many events it had. */
  const read = async (current: WatchStream<T>): Promise<number> => {
    let events = 0;
    for await (const ev of current) {
      // As the informer takes it: a 410 in the stream is told apart from any other failure by isGone.
      if (ev.type === 'ERROR') throw ApiError.fromStatus(ev.object as unknown as Status, 500, 'WATCH', ref.resource);
      events++;
      if (ev.type !== 'BOOKMARK') {
        try {
          onEvent(ev.type, ev.object);
        } catch (err) {
          throw new CallerError('onEvent threw', { cause: err });
        }
      }
      // The version to go on from passes an event only once the event was taken.
      resourceVersion = ev.object.metadata.resourceVersion ?? resourceVersion;
    }
    return events;
  };

  const run = async (): Promise<void> => {
    const backoff = new Backoff(QUICK_END_BACKOFF);
    for (;;) {
      try {
        if (!stream) stream = await open();
        const opened = performance.now();
        const events = await read(stream);
        if (stop.signal.aborted) return;
        if (watchWasHealthy(events, performance.now() - opened)) backoff.reset();
        else await sleep(backoff.next(), stop.signal);
      } catch (err) {
        if (stop.signal.aborted) return;
        if (err instanceof CallerError) throw err;
        const gone = isGone(err);
        if (gone && opts.relist) resourceVersion = await opts.relist(stop.signal);
        else if (!gone && opts.retryMs !== undefined) await sleep(opts.retryMs, stop.signal);
        else throw err;
      }
      stream = undefined;
      if (stop.signal.aborted) return;
    }
  };

  const ended = run().then(
    () => undefined,
    // What fails once it is closed (a pause or a reopening cut short) is its end, not a failure.
    // The caller's own error is told as it threw it (itself when it threw nothing).
    (err: unknown) => (stop.signal.aborted ? undefined : err instanceof CallerError ? (err.cause ?? err) : err),
  );
  return {
    close: () => {
      stop.abort();
      stream?.close();
    },
    ended,
  };
}

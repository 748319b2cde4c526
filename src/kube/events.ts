// core/v1 Events, best effort, like client-go's recorder: an EventCorrelator folds repeats into one
// Event (count and lastTimestamp bumped with a PATCH), folds floods of similar messages into a
// "combined" Event, and rate-limits per object and reason. client-go's budget is per object only;
// here a rule's flood of Normal events (one per object it syncs) would then hide its first Warning.
// Reasons are a fixed set per kind (a dozen at most), so an object's Events stay bounded.
// Recording never throws and never blocks the caller; writes happen in the background and
// failures are only logged.
import { hostname } from 'node:os';
import { clip, isAlreadyExists, isNotFound } from './errors.ts';
import type { Logger } from './log.ts';
import { Lru } from './lru.ts';
import { silentLogger } from './log.ts';
import type { ObjectWriter } from './rest.ts';
import type { KubeObject, ResourceRef } from './types.ts';

export const EVENTS: ResourceRef = { group: '', version: 'v1', resource: 'events' };

export type EventType = 'Normal' | 'Warning';

/** Events on one object for one reason before the spam filter drops more (client-go's burst). */
export const EVENT_BURST = 25;
/** How often the spam filter then allows one more (client-go's refill). */
export const EVENT_REFILL_MS = 300_000;

// events.k8s.io/v1 refuses a longer reason or message; core/v1 takes any, but messages quote
// other clusters' words (errors, names), and an Event needs only the gist. A message leaves room
// for the prefix of a combined Event.
const MAX_REASON = 128;
/** How a combined Event's message starts. */
export const COMBINED_EVENT_PREFIX = '(combined from similar events): ';
const MAX_MESSAGE = 1024 - COMBINED_EVENT_PREFIX.length;

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface CoreEvent extends KubeObject {
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: EventType;
  source: { component: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
}

export type CorrelationResult =
  | { action: 'create'; event: CoreEvent }
  | { action: 'patch'; event: CoreEvent; patch: { count: number; lastTimestamp: string; message: string } }
  | { action: 'drop' };

export interface CorrelatorOptions {
  /** Distinct messages per similar-event group before they are combined (client-go: 10). */
  maxSimilar?: number;
  /** Window for similar events (client-go: 10 min). */
  similarWindowMs?: number;
  /** Token bucket per object and reason (client-go's figures: EVENT_BURST, EVENT_REFILL_MS). */
  burst?: number;
  refillMs?: number;
  /** Keys remembered, least recently used first out. */
  maxKeys?: number;
  now?: () => number;
}

export class EventCorrelator {
  private readonly opts: Required<CorrelatorOptions>;
  private readonly similar: Lru<{ messages: Set<string>; since: number }>;
  private readonly observed: Lru<{ name: string; namespace: string; count: number; firstTimestamp: string }>;
  /** Per involved object, a token bucket per reason. */
  private readonly buckets: Lru<Map<string, { tokens: number; at: number }>>;

  constructor(opts: CorrelatorOptions = {}) {
    this.opts = { maxSimilar: 10, similarWindowMs: 600_000, burst: EVENT_BURST, refillMs: EVENT_REFILL_MS, maxKeys: 4096, now: Date.now, ...opts };
    this.similar = new Lru(this.opts.maxKeys);
    this.observed = new Lru(this.opts.maxKeys);
    this.buckets = new Lru(this.opts.maxKeys);
  }

  /** Decides what to write for a new event (which is not modified). */
  observe(input: CoreEvent): CorrelationResult {
    const now = this.opts.now();
    let event = input;
    const base = JSON.stringify([event.source.component, event.source.host, refKey(event.involvedObject), event.type, event.reason, event.reportingComponent, event.reportingInstance]);
    let key = JSON.stringify([base, event.message]);

    // Similar events (same everything but the message): past maxSimilar distinct messages, they all
    // become one combined Event. A full group takes no more messages: a rule that reports every
    // object it syncs would otherwise remember each message for the whole window.
    let group = this.similar.get(base);
    if (!group || now - group.since > this.opts.similarWindowMs) group = { messages: new Set(), since: now };
    if (group.messages.size < this.opts.maxSimilar) group.messages.add(event.message);
    this.similar.set(base, group);
    if (group.messages.size >= this.opts.maxSimilar) {
      event = { ...event, message: `${COMBINED_EVENT_PREFIX}${event.message}` };
      key = base;
    }

    // Spam filter per involved object and reason.
    const objKey = spamKey(event.source.component, event.source.host, event.involvedObject);
    const reasons = this.buckets.get(objKey) ?? new Map<string, { tokens: number; at: number }>();
    this.buckets.set(objKey, reasons);
    const bucket = reasons.get(event.reason) ?? { tokens: this.opts.burst, at: now };
    bucket.tokens = this.tokensAt(bucket, now);
    bucket.at = now;
    reasons.set(event.reason, bucket);
    if (bucket.tokens < 1) return { action: 'drop' };
    bucket.tokens -= 1;

    const seen = this.observed.get(key);
    if (seen) {
      const count = seen.count + 1;
      this.observed.set(key, { ...seen, count });
      const patched: CoreEvent = { ...event, metadata: { ...event.metadata, name: seen.name, namespace: seen.namespace }, count, firstTimestamp: seen.firstTimestamp };
      return { action: 'patch', event: patched, patch: { count, lastTimestamp: event.lastTimestamp, message: event.message } };
    }
    this.observed.set(key, { name: event.metadata.name!, namespace: event.metadata.namespace!, count: event.count, firstTimestamp: event.firstTimestamp });
    return { action: 'create', event };
  }

  /**
   * Whether the spam filter drops an event on `involved` for `reason` now, whatever its message:
   * a rule that reports every object it syncs builds nothing for most of them. Unlike client-go's,
   * such an event then adds no message to its similar events either; at most one of them a refill
   * period passes the filter, and it may stand as an Event of its own rather than the combined one.
   */
  wouldDrop(component: string, host: string | undefined, involved: ObjectReference, reason: string): boolean {
    const bucket = this.buckets.get(spamKey(component, host, involved))?.get(clip(reason, MAX_REASON));
    return bucket !== undefined && this.tokensAt(bucket, this.opts.now()) < 1;
  }

  private tokensAt(bucket: { tokens: number; at: number }, now: number): number {
    return Math.min(this.opts.burst, bucket.tokens + (now - bucket.at) / this.opts.refillMs);
  }
}

/** The reference an Event on `obj` holds, by which the spam filter also knows it. */
function involvedObjectOf(obj: KubeObject): ObjectReference & { name: string } {
  const { name = '', namespace, uid, resourceVersion } = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace, name, uid, resourceVersion };
}

function spamKey(component: string, host: string | undefined, involved: ObjectReference): string {
  return JSON.stringify([component, host, refKey(involved)]);
}

function refKey(r: ObjectReference): string {
  return [r.apiVersion, r.kind, r.namespace, r.name, r.uid].join('/');
}

export interface EventRecorderOptions {
  rest: ObjectWriter;
  /** source.component and reportingComponent, e.g. `cluster-controller`. */
  component: string;
  host?: string;
  reportingInstance?: string;
  correlator?: EventCorrelator;
  /** Events waiting to be written; beyond this the oldest are dropped. Default 1000. */
  maxPending?: number;
  logger?: Logger;
}

type Write = Exclude<CorrelationResult, { action: 'drop' }>;

let sequence = 0;

export class EventRecorder {
  private readonly opts: EventRecorderOptions;
  private readonly correlator: EventCorrelator;
  private readonly log: Logger;
  /** The system's host name, asked once: every event names it. */
  private readonly hostname = hostname();
  private readonly pending: Write[] = [];
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(opts: EventRecorderOptions) {
    this.opts = opts;
    this.correlator = opts.correlator ?? new EventCorrelator();
    this.log = (opts.logger ?? silentLogger).child({ recorder: opts.component });
  }

  /** The host events name as their source. */
  private get host(): string {
    return this.opts.host ?? this.hostname;
  }

  /** Records an event about `obj`. Never throws; written when the recorder runs. */
  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    try {
      if (this.stopped) return;
      const dropped = this.correlator.wouldDrop(this.opts.component, this.host, involvedObjectOf(obj), reason);
      const result = dropped ? ({ action: 'drop' } as const) : this.correlator.observe(this.build(obj, type, reason, message));
      if (result.action === 'drop') {
        this.log.debug({ reason }, 'event rate-limited');
        return;
      }
      this.pending.push(result);
      if (this.pending.length > (this.opts.maxPending ?? 1000)) this.pending.shift();
      this.wake?.();
    } catch (err) {
      this.log.warn({ err, reason }, 'could not record event');
    }
  }

  /** Writes events until the signal aborts; events still pending then are dropped. */
  async start(signal: AbortSignal): Promise<void> {
    const onAbort = (): void => this.wake?.();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        const next = this.pending.shift();
        if (next) await this.write(next, signal);
        else await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      this.stopped = true;
      signal.removeEventListener('abort', onAbort);
    }
  }

  private build(obj: KubeObject, type: EventType, reason: string, message: string): CoreEvent {
    const now = new Date().toISOString();
    const involvedObject = involvedObjectOf(obj);
    const { name, namespace } = involvedObject;
    const ns = namespace || 'default';
    // client-go names events <object>.<unix nanos in hex>; the sequence keeps same-ms names apart.
    const nanos = BigInt(Date.now()) * 1_000_000n + BigInt(sequence++ % 1_000_000);
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${name}.${nanos.toString(16)}`, namespace: ns },
      involvedObject,
      reason: clip(reason, MAX_REASON),
      message: clip(message, MAX_MESSAGE),
      type,
      source: { component: this.opts.component, host: this.host },
      reportingComponent: this.opts.component,
      reportingInstance: this.opts.reportingInstance ?? this.hostname,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
  }

  private async write(result: Write, signal: AbortSignal): Promise<void> {
    const { rest } = this.opts;
    try {
      switch (result.action) {
        case 'create':
          await rest.create(EVENTS, result.event.metadata.namespace, result.event, { signal });
          return;
        case 'patch':
          try {
            await rest.patch(EVENTS, result.event.metadata.namespace, result.event.metadata.name!, 'strategic', result.patch, { signal });
          } catch (err) {
            // The event expired (events have a TTL): write it again as a new one.
            if (!isNotFound(err)) throw err;
            await rest.create(EVENTS, result.event.metadata.namespace, result.event, { signal });
          }
          return;
      }
    } catch (err) {
      if (isAlreadyExists(err) || signal.aborted) return;
      this.log.warn({ err, reason: result.event.reason }, 'could not write event');
    }
  }
}

// Leader election on a coordination.k8s.io/v1 Lease with client-go's algorithm: a candidate takes
// the lease when it is free or its holder has not renewed it within leaseDuration (measured on our
// own clock from when we last saw the record change, so clock skew between nodes does not matter),
// writes go through resourceVersion preconditions, and a leader that cannot renew within
// renewDeadline steps down.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Backoff, sleep } from './backoff.ts';
import { isAlreadyExists, isConflict, isNotFound } from './errors.ts';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
import { gauge } from './metrics.ts';
import type { RestClient } from './rest.ts';
import type { KubeObject, ResourceRef } from './types.ts';

export const LEASES: ResourceRef = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderCallbacks {
  /** Leadership starts; the signal aborts when it ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  onStoppedLeading?(): void;
  /** Someone (maybe us) became leader. */
  onNewLeader?(identity: string): void;
}

/** What the elector needs of a RestClient. */
export type LeaseClient = Pick<RestClient, 'get' | 'create' | 'update'>;

export interface LeaderElectionOptions {
  rest: LeaseClient;
  namespace: string;
  name: string;
  identity?: string;
  /** Default 15 s (client-go); upstream configures 5 s. */
  leaseDurationMs?: number;
  /** Default 10 s; must be less than leaseDuration. */
  renewDeadlineMs?: number;
  /** Default 2 s. */
  retryPeriodMs?: number;
  /** Give the lease up (holder cleared) when the signal aborts. Default true. */
  releaseOnCancel?: boolean;
  callbacks: LeaderCallbacks;
  logger?: Logger;
}

const isLeader = gauge({
  name: 'leader_election_master_status',
  help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
  labelNames: ['name'],
});

/** Candidates wait 1 to 1.2 retry periods between attempts, so they do not move in lockstep. */
const JITTER = 1.2;

/** `metav1.MicroTime` wants exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Milliseconds from now until a `performance.now()` time; 0 once it has passed. */
function msUntil(at: number): number {
  return Math.max(0, at - performance.now());
}

export function defaultIdentity(): string {
  return `${hostname()}_${randomBytes(8).toString('hex')}`;
}

export class LeaderElector {
  readonly identity: string;
  private readonly opts: Required<Omit<LeaderElectionOptions, 'logger' | 'identity'>>;
  private readonly log: Logger;
  private observed: Lease | undefined;
  // Our clock when the record last changed; expiry is judged against it, not the holder's times.
  private observedAt = 0;
  private leading = false;
  private reportedLeader = '';

  constructor(opts: LeaderElectionOptions) {
    this.identity = opts.identity ?? defaultIdentity();
    this.opts = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, releaseOnCancel: true, ...opts };
    if (this.opts.renewDeadlineMs >= this.opts.leaseDurationMs) throw new Error('renewDeadline must be less than leaseDuration');
    if (this.opts.retryPeriodMs * JITTER >= this.opts.renewDeadlineMs) throw new Error('retryPeriod*1.2 must be less than renewDeadline');
    this.log = (opts.logger ?? silentLogger).child({ lease: `${opts.namespace}/${opts.name}`, identity: this.identity });
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder we last observed. */
  leader(): string {
    return this.observed?.spec?.holderIdentity ?? '';
  }

  /**
   * Campaigns until leading, leads until the lease is lost or the signal aborts, then returns once
   * the leader work has stopped. Like client-go, it does not campaign again after losing: the
   * caller decides (a new elector for a new term).
   */
  async start(signal: AbortSignal): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs, leaseDurationMs, callbacks } = this.opts;
    // A success counts from the start of its attempt: others time the lease from our write, which
    // lands somewhere inside the attempt. An attempt that cannot finish within renewDeadline is
    // useless (it would end the term as soon as it began), so it is cut there.
    let renewedAt: number;
    for (;;) {
      if (signal.aborted) return;
      renewedAt = performance.now();
      if (await this.tryAcquireOrRenew(AbortSignal.any([signal, AbortSignal.timeout(renewDeadlineMs)]))) break;
      await sleep(retryPeriodMs * (1 + Math.random() * (JITTER - 1)), signal);
    }
    if (signal.aborted) return;

    this.leading = true;
    isLeader.set({ name: this.opts.name }, 1);
    this.log.info('became leader');
    const term = new AbortController();
    const stepDown = (why: string): void => {
      if (term.signal.aborted) return;
      this.log.info(why);
      term.abort();
    };
    const cancel = (): void => stepDown('stepping down: the elector was stopped');
    signal.addEventListener('abort', cancel, { once: true });
    // The term ends renewDeadline after the last successful renewal started, whatever the renewal
    // loop is doing then: a timer, not a check between attempts. Its abort also cuts the attempt
    // in flight.
    let deadline: NodeJS.Timeout | undefined;
    const renewed = (attemptStart: number): void => {
      renewedAt = attemptStart;
      clearTimeout(deadline);
      deadline = setTimeout(() => stepDown('lost leadership: not renewed within the renew deadline'), msUntil(attemptStart + renewDeadlineMs));
    };
    renewed(renewedAt);
    const leadingDone = Promise.resolve()
      .then(() => callbacks.onStartedLeading(term.signal))
      .catch((err: unknown) => this.log.error({ err }, 'onStartedLeading failed'));
    try {
      // Renewals start every retryPeriod; a failed one is retried after a short backoff until
      // the deadline ends the term.
      const retry = new Backoff({ initialMs: retryPeriodMs / 20, maxMs: retryPeriodMs, jitter: JITTER - 1 });
      let next = renewedAt + retryPeriodMs;
      while (!term.signal.aborted) {
        await sleep(msUntil(next), term.signal);
        if (term.signal.aborted) break;
        const attemptStart = performance.now();
        if (await this.tryAcquireOrRenew(term.signal)) {
          renewed(attemptStart);
          retry.reset();
          next = attemptStart + retryPeriodMs;
        } else if (this.leader() !== this.identity) {
          stepDown('lost leadership: the lease has another holder');
        } else {
          next = performance.now() + retry.next();
        }
      }
    } finally {
      clearTimeout(deadline);
      this.leading = false;
      isLeader.set({ name: this.opts.name }, 0);
      signal.removeEventListener('abort', cancel);
      term.abort();
      // The work gets the rest of the lease to stop; past that a successor may be at work too.
      // It is still waited for: a term is over only when its work is.
      const overrun = setTimeout(() => this.log.error('leader work is still stopping after the lease expired: a successor may already be leading'), msUntil(renewedAt + leaseDurationMs));
      await leadingDone;
      clearTimeout(overrun);
      // Releasing lets a successor in at once, so only now.
      if (signal.aborted && this.opts.releaseOnCancel) await this.release();
      try {
        callbacks.onStoppedLeading?.();
      } catch (err) {
        this.log.error({ err }, 'onStoppedLeading failed');
      }
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { rest, namespace, name, leaseDurationMs } = this.opts;
    const nowMs = Date.now();
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      acquireTime: microTime(nowMs),
      renewTime: microTime(nowMs),
      leaseTransitions: 0,
    };
    try {
      let current: Lease;
      try {
        current = await rest.get<Lease>(LEASES, namespace, name, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        const created = await rest.create<Lease>(LEASES, namespace, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec }, { signal });
        this.observe(created);
        return true;
      }
      this.observe(current);
      const held = current.spec ?? {};
      const holder = held.holderIdentity ?? '';
      const expired = performance.now() - this.observedAt > (held.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== this.identity && !expired) return false;
      if (holder === this.identity) {
        spec.acquireTime = held.acquireTime ?? spec.acquireTime;
        spec.leaseTransitions = held.leaseTransitions ?? 0;
      } else {
        spec.leaseTransitions = (held.leaseTransitions ?? 0) + 1;
      }
      const updated = await rest.update<Lease>(LEASES, namespace, { ...current, spec }, { signal });
      this.observe(updated);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (isConflict(err) || isAlreadyExists(err)) this.log.debug('lost a race for the lease');
      else this.log.warn({ err }, 'lease acquire/renew failed');
      return false;
    }
  }

  private observe(lease: Lease): void {
    const prev = this.observed?.spec;
    const next = lease.spec ?? {};
    if (!prev || prev.holderIdentity !== next.holderIdentity || prev.renewTime !== next.renewTime || prev.acquireTime !== next.acquireTime || prev.leaseTransitions !== next.leaseTransitions) {
      this.observedAt = performance.now();
    }
    this.observed = lease;
    const holder = next.holderIdentity ?? '';
    if (holder && holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      try {
        this.opts.callbacks.onNewLeader?.(holder);
      } catch (err) {
        this.log.error({ err }, 'onNewLeader failed');
      }
    }
  }

  // client-go's release: clear the holder and shorten the lease so a successor need not wait.
  private async release(): Promise<void> {
    const lease = this.observed;
    if (!lease || lease.spec?.holderIdentity !== this.identity) return;
    const now = microTime(Date.now());
    try {
      await this.opts.rest.update<Lease>(
        LEASES,
        this.opts.namespace,
        { ...lease, spec: { leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: lease.spec.leaseTransitions ?? 0 } },
        { timeoutMs: this.opts.renewDeadlineMs },
      );
      this.log.info('released the lease');
    } catch (err) {
      this.log.warn({ err }, 'releasing the lease failed');
    }
  }
}

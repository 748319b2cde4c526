// Where one sync reconcile spends its time, so that what the controller adds to a change's way
// from a peer to here can be told apart: deciding (cache reads, mutation, ownership and trust,
// the body built), writing (the calls to this cluster's API server, serialisation included), and
// recording the outcome. The wait in the work queue before it is the queue's own histogram.
import { exponentialBuckets, histogram } from '../kube/index.ts';

export type SyncStage = 'decide' | 'write' | 'record';

const stageSeconds = histogram({
  name: 'cluster_registry_sync_stage_seconds',
  help: 'Time one sync reconcile spends deciding, writing the copy and recording the outcome.',
  labelNames: ['stage'],
  // 50 µs to about 1.6 s: a stage of a fast reconcile is well under a millisecond.
  buckets: exponentialBuckets(0.00005, 2, 16),
});

/** The stages of one reconcile, in order: each `enter` ends the stage before it. */
export class StageClock {
  private stage: SyncStage = 'decide';
  private readonly now: () => number;
  private since: number;

  constructor(now: () => number = () => performance.now()) {
    this.now = now;
    this.since = now();
  }

  enter(stage: SyncStage): void {
    if (stage === this.stage) return;
    this.end();
    this.stage = stage;
  }

  /** Ends the current stage (the reconcile returned or threw). */
  end(): void {
    const now = this.now();
    stageSeconds.observe({ stage: this.stage }, (now - this.since) / 1000);
    this.since = now;
  }
}

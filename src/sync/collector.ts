// Garbage collection of copies that outlived their source (see decideCopyFate for when that is).
// Every sweep looks at every copy we made: an orphan is remembered with the time it was first
// seen, and deleted once it has been one for the whole grace period, with preconditions so that
// a copy changed meanwhile is looked at again instead. What keeps a copy alive is only ever
// positive knowledge, so a partition or an unknown never deletes anything; and nothing is swept
// before the rules and the registry have been listed. A copy whose source moved to another peer
// or rule is handed over (the new source is reconciled) rather than deleted.
import { gvkKey, sameGVK, sourceIdentityOf, SYNC_EVENT_REASONS, type FullGVK, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { type CopyFate, copyPlace, type CopySpot, type CopyTargets, decideCopyFate, KEEP_REASONS, ORPHAN_REASONS, ownerOf, type RecordedSource, type RuleState, standsAt } from '../core/rules/index.ts';
import { credentialsInUse } from '../core/trust/index.ts';
import { counter, gauge, holding, TimeSlice, type Discovery, type Renders, type Steps, type EventRecorder, type Logger } from '../kube/index.ts';
import { liveSource } from './binding.ts';
import { syncKey, type SyncKey } from './keys.ts';
import { Wakeup } from './wakeup.ts';
import type { BoundPeer, CopiesView, CopyWrites, SyncView } from './view.ts';

/** What a sweep saw of the copies: where those recording a rule lie (each spot once), and the kinds not all known yet. */
export interface SweptCopies {
  readonly recorded: readonly CopySpot[];
  readonly unknownKinds: readonly FullGVK[];
}

export interface CollectorOptions {
  readonly view: SyncView;
  readonly copies: CopiesView;
  readonly targets: CopyTargets;
  /** Where a peer's templates are rendered, taking turns with the rest of the process. */
  readonly renders: Renders;
  readonly writer: CopyWrites;
  readonly localDiscovery: Pick<Discovery, 'resourceFor'>;
  readonly graceMs: number;
  readonly enqueue: (key: SyncKey) => void;
  /** After each sweep: where copies recording a rule lie (the old watches they keep). */
  readonly swept: (copies: SweptCopies) => void;
  readonly events: Pick<EventRecorder, 'event'>;
  readonly log: Logger;
  readonly now?: () => number;
}

const sweeps = counter({ name: 'cluster_registry_orphan_sweeps_total', help: 'Completed passes of the orphan collector over all copies.' });
const copiesByFate = gauge({ name: 'cluster_registry_copies', help: 'Copies made by this controller at the last orphan sweep, by why they are kept or that they are orphans.', labelNames: ['fate', 'reason'] });
const collected = counter({ name: 'cluster_registry_orphans_collected_total', help: 'Orphaned copies deleted after the grace period, by reason.', labelNames: ['reason'] });

/** The group as one sweep sees it, read once for all its copies. */
interface SweepView {
  readonly clusters: readonly Cluster[];
  readonly registered: ReadonlySet<string>;
  readonly alive: ReadonlySet<string>;
  /** Peers that did not say, when asked directly, whether they still have an object: not asked again this sweep. */
  readonly unanswered: Set<string>;
}

export class Collector {
  private readonly o: CollectorOptions;
  private readonly wake = new Wakeup();
  private readonly now: () => number;
  /** uid -> when the copy was first seen orphaned. */
  private readonly orphanSince = new Map<string, number>();

  constructor(opts: CollectorOptions) {
    this.o = opts;
    this.now = opts.now ?? (() => Date.now());
  }

  /** Look again soon: something a copy's fate depends on changed. */
  kick(): void {
    this.wake.kick();
  }

  async run(intervalMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.wake.wait(intervalMs, signal);
      if (signal.aborted) break;
      if (!this.o.view.listed()) continue;
      try {
        await this.sweep(signal);
      } catch (err) {
        if (!signal.aborted) this.o.log.warn({ err }, 'orphan sweep failed; trying again at the next one');
      }
    }
  }

  /** One pass over every copy of every kind the rules write (or wrote). */
  async sweep(signal: AbortSignal): Promise<void> {
    const clusters = this.o.view.clusters();
    const view: SweepView = { clusters, registered: new Set(clusters.map((c) => c.spec?.clusterID ?? '')), alive: this.o.view.aliveIDs(), unanswered: new Set() };
    const seen = new Set<string>();
    const recorded = new Map<string, CopySpot>();
    const unknownKinds: FullGVK[] = [];
    const tally = new Map<string, number>();
    /** Where a copy recording a rule lies: what keeps the watch that sees it (never a reason to delete). */
    const spotted = (copy: KubeObject, gvk: FullGVK, rule: string | undefined): void => {
      if (!rule) return;
      const namespace = copy.metadata.namespace ?? '';
      recorded.set(`${gvkKey(gvk)}|${namespace}`, { gvk, namespace });
    };
    // A large sweep hands the event loop back now and then, so it never starves the rest.
    const slice = new TimeSlice();
    for (const gvk of this.o.copies.kinds()) {
      if (!this.o.copies.synced(gvk)) {
        // Copies of that kind are not all known: none of them may be forgotten as orphans yet,
        // and those known keep the watches that see them.
        for (const copy of this.o.copies.all(gvk)) {
          seen.add(copy.metadata.uid ?? '');
          spotted(copy, gvk, sourceIdentityOf(copy)?.rule);
        }
        // A watch of a kind not served, or refused, shows no copy however long it is kept.
        if (this.o.copies.listing(gvk)) unknownKinds.push(gvk);
        continue;
      }
      for (const copy of this.o.copies.all(gvk)) {
        if (signal.aborted) return;
        await slice.pause();
        const id = sourceIdentityOf(copy);
        if (!id) continue;
        seen.add(copy.metadata.uid ?? '');
        spotted(copy, gvk, id.rule);
        try {
          const fate = await this.judge(copy, gvk, id, view, signal);
          const label = `${fate.orphan ? 'orphan' : 'kept'}|${fate.reason}`;
          tally.set(label, (tally.get(label) ?? 0) + 1);
        } catch (err) {
          // One copy that cannot be deleted (a webhook refusing, a permission gone) holds up no other.
          if (signal.aborted) return;
          this.o.log.warn({ err, copy: copyPlace(copy) }, 'could not collect an orphaned copy; trying again at the next sweep');
        }
      }
    }
    for (const uid of [...this.orphanSince.keys()]) if (!seen.has(uid)) this.orphanSince.delete(uid);
    copiesByFate.reset();
    for (const [label, n] of tally) {
      const [fate = '', reason = ''] = label.split('|');
      copiesByFate.set({ fate, reason }, n);
    }
    sweeps.inc();
    this.o.swept({ recorded: [...recorded.values()], unknownKinds });
  }

  private async judge(copy: KubeObject, gvk: FullGVK, id: SourceIdentity, view: SweepView, signal: AbortSignal): Promise<CopyFate> {
    const uid = copy.metadata.uid ?? '';
    const owner = ownerOf(copy);
    const rule = this.ruleOf(id, gvk);
    const recordedBinding = rule ? this.o.view.bindingsOf(rule.name).find((x) => x.peer.id === id.clusterID) : undefined;
    // Where a source's copy goes may take its rule's templates to say: they take turns with the
    // rest of the process, and read the registry as it is when they render (what they find is
    // remembered with that registry).
    const recorded = await this.o.renders.run(this.describe(copy, rule, recordedBinding, id), signal);
    const alternative = recorded && !(await this.o.renders.run(this.o.view.recordedSourceLive(id, copy), signal)) ? await this.o.renders.run(this.alternative(copy, gvk, id, view), signal) : undefined;
    const fate = decideCopyFate(copy, {
      localClusterID: this.o.view.localClusterID,
      registeredClusterIDs: view.registered,
      alivePeerIDs: view.alive,
      recorded,
      alternativeSource: alternative !== undefined,
      recordedPeerReachesOwner: recordedBinding ? recordedBinding.reaches(owner) : true,
      // The credentials our Cluster of their owner reads (another Cluster naming them does not count).
      inUse: credentialsInUse(copy, view.clusters),
    });
    if (!fate.orphan) {
      this.orphanSince.delete(uid);
      if (alternative) this.o.enqueue(alternative);
      return fate;
    }
    const since = this.orphanSince.get(uid) ?? this.now();
    this.orphanSince.set(uid, since);
    if (this.now() - since < this.o.graceMs) return fate;
    // A source that only seems gone, not shown by the recorded peer's filtered watches, is kept.
    if (fate.reason === ORPHAN_REASONS.sourceDeleted && recordedBinding && !(await this.goneFromPeer(recordedBinding, id, view, signal))) {
      this.orphanSince.delete(uid);
      return { orphan: false, reason: KEEP_REASONS.notYetKnown };
    }
    const resource = await this.o.localDiscovery.resourceFor(gvk);
    // A copy changed since this sweep read it is looked at again on the next sweep.
    // A namespace whose source or owner went takes that owner's copies with it; one a rule merely stopped taking, nothing.
    const ownersCopiesGo = fate.reason === ORPHAN_REASONS.sourceDeleted || fate.reason === ORPHAN_REASONS.ownerLeftGroup || fate.reason === ORPHAN_REASONS.peerLeftGroup;
    const outcome = await this.o.writer.delete(resource, copy, signal, { exactVersion: true, ownersCopiesGo });
    const ruleObject = id.rule ? this.o.view.rule(id.rule)?.object : undefined;
    if (outcome === 'deleted') {
      this.orphanSince.delete(uid);
      this.o.log.info({ copy: copyPlace(copy), reason: fate.reason, rule: id.rule }, 'collected an orphaned copy');
      collected.inc({ reason: fate.reason });
      if (ruleObject) this.o.events.event(ruleObject, 'Normal', 'OrphanCollected', `deleted ${gvk.kind} ${copyPlace(copy)}: ${fate.reason}`);
    } else if (typeof outcome === 'object') {
      this.orphanSince.delete(uid);
      const message = `kept namespace ${copy.metadata.name ?? ''}, no longer a copy, though it is an orphan (${fate.reason}): ${outcome.kept}`;
      this.o.log.warn({ copy: copyPlace(copy), rule: id.rule }, message);
      if (ruleObject) this.o.events.event(ruleObject, 'Warning', SYNC_EVENT_REASONS.namespaceKept, message);
    }
    return fate;
  }

  /** Whether the peer, asked, no longer has the source; one that does not answer is not asked again this sweep. */
  private async goneFromPeer(b: BoundPeer, id: SourceIdentity, view: SweepView, signal: AbortSignal): Promise<boolean> {
    if (view.unanswered.has(b.peer.id)) return false;
    try {
      return await b.goneFromPeer(id.namespace, id.name, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      view.unanswered.add(b.peer.id);
      return false;
    }
  }

  /** The rule that made the copy: the one it records, or for older records one that could have. */
  private ruleOf(id: SourceIdentity, gvk: FullGVK): RuleState | undefined {
    if (id.rule) {
      // A rule made again under that name for another kind is not the rule that made the copy.
      const r = this.o.view.rule(id.rule);
      return r && (!r.compiled || makes(r, id, gvk)) ? r : undefined;
    }
    return this.o.view.allRules().find((r) => makes(r, id, gvk));
  }

  /** What the rule that made the copy knows about its source on the recorded peer. */
  private *describe(copy: KubeObject, rule: RuleState | undefined, b: BoundPeer | undefined, id: SourceIdentity): Steps<RecordedSource> {
    if (!rule) return { rule: 'deleted', binding: 'starting', object: 'unknown' };
    if (!rule.compiled) return { rule: 'invalid', binding: 'starting', object: 'unknown' };
    if (!b) return { rule: 'present', binding: 'starting', object: 'unknown' };
    if (b.phase === 'featuresUnmet') return { rule: 'present', binding: 'featuresUnmet', object: 'unknown' };
    if (!b.synced) return { rule: 'present', binding: 'starting', object: 'unknown' };
    const lookup = b.lookup(id.namespace, id.name);
    if (!lookup.inScope) return { rule: 'present', binding: 'active', object: 'notMatching' };
    const source = lookup.object;
    if (!source || source.metadata.deletionTimestamp) {
      const owner = ownerOf(copy);
      return { rule: 'present', binding: 'active', object: b.watchesOwner(owner) ? 'absent' : yield* this.ownersWord(copy, rule, owner, id) };
    }
    const target = yield* holding(lookup.bytes, this.o.targets.finding(rule, b.peerRef, source, () => this.o.view.clusters()));
    if (target === null) return { rule: 'present', binding: 'active', object: 'unknown' };
    return { rule: 'present', binding: 'active', object: standsAt(copy, target) ? 'matches' : 'notMatching' };
  }

  /**
   * The recorded peer's watches leave out what it passes on for the copy's owner, whose objects
   * come to us first-hand: the owner's binding says what became of the source. One it still
   * delivers as this copy is handed over to it (see alternative) rather than judged here.
   */
  private *ownersWord(copy: KubeObject, rule: RuleState, owner: string, id: SourceIdentity): Steps<RecordedSource['object']> {
    const b = this.o.view.bindingsOf(rule.name).find((x) => x.peer.id === owner);
    // The owner's own objects are never left out of its watches: this asks no further.
    if (!b?.synced || !b.watchesOwner(owner)) return 'unknown';
    const word = (yield* this.describe(copy, rule, b, id)).object;
    return word === 'matches' ? 'unknown' : word;
  }

  /**
   * A live source other than the recorded one that would deliver this same copy: its key. It
   * must be allowed to take the copy over: when the owner is alive only the owner delivers, and
   * a second-hand source needs a path to the owner.
   */
  private *alternative(copy: KubeObject, gvk: FullGVK, id: SourceIdentity, view: SweepView): Steps<SyncKey | undefined> {
    const { registered, alive } = view;
    for (const rule of this.o.view.allRules()) {
      if (!rule.compiled || !makes(rule, id, gvk)) continue;
      for (const b of this.o.view.bindingsOf(rule.name)) {
        if ((b.peer.id === id.clusterID && rule.name === id.rule) || !b.synced || !alive.has(b.peer.id)) continue;
        const source = liveSource(b, id.namespace, id.name);
        if (!source) continue;
        const owner = ownerOf(source.object) || b.peer.id;
        if (!registered.has(owner) || (owner !== b.peer.id && (alive.has(owner) || !b.reaches(owner)))) continue;
        if (standsAt(copy, yield* holding(source.bytes, this.o.targets.finding(rule, b.peerRef, source.object, () => this.o.view.clusters())))) return syncKey(rule.name, b.peer.name, id.namespace, id.name);
      }
    }
    return undefined;
  }
}

/** Whether the rule reads the kind of the recorded source and writes copies of that kind. */
function makes(rule: RuleState, id: SourceIdentity, gvk: FullGVK): boolean {
  return rule.sourceGVK.group === id.group && rule.sourceGVK.kind === id.kind && rule.targetGVKs.some((t) => sameGVK(t, gvk));
}

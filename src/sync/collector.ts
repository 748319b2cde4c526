// Garbage collection of copies that outlived their source (see decideCopyFate for when that is).
// Every sweep looks at every copy we made: an orphan is remembered with the time it was first
// seen, and deleted once it has been one for the whole grace period, with preconditions so that
// a copy changed meanwhile is looked at again instead. What keeps a copy alive is only ever
// positive knowledge, so a partition or an unknown never deletes anything. A copy whose source
// moved to another peer or rule is handed over (the new source is reconciled) rather than deleted.
import { gvkOf, sameGVK, sourceIdentityOf, type FullGVK, type SourceIdentity } from '../core/api/index.ts';
import type { Cluster, KubeObject } from '../core/api/types.ts';
import { RuleError, buildDesiredCopy, combineMutations, decideCopyFate, ownerOf, type RecordedSource } from '../core/rules/index.ts';
import { counter, gauge, type Discovery, type EventRecorder, type Logger } from '../kube/index.ts';
import type { Binding } from './binding.ts';
import type { LocalCopies } from './copies.ts';
import { syncKey, type SyncKey } from './keys.ts';
import type { RuleState } from './rules.ts';
import { Wakeup } from './wakeup.ts';
import type { CopyWriter } from './writer.ts';

export interface CollectorEngine {
  rule(name: string): RuleState | undefined;
  allRules(): RuleState[];
  bindingsOf(rule: string): Binding[];
  recordedSourceLive(id: SourceIdentity): boolean;
}

export interface CollectorOptions {
  readonly engine: CollectorEngine;
  readonly copies: LocalCopies;
  readonly writer: CopyWriter;
  readonly localDiscovery: Discovery;
  readonly localClusterID: string;
  /** The local registry's Clusters (template data). */
  readonly clusters: () => readonly Cluster[];
  readonly registeredIDs: () => ReadonlySet<string>;
  readonly aliveIDs: () => ReadonlySet<string>;
  readonly graceMs: number;
  readonly enqueue: (key: SyncKey) => void;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly now?: () => number;
}

const sweeps = counter({ name: 'cluster_registry_orphan_sweeps_total', help: 'Completed passes of the orphan collector over all copies.' });
const copiesByFate = gauge({ name: 'cluster_registry_copies', help: 'Copies made by this controller at the last orphan sweep, by why they are kept or that they are orphans.', labelNames: ['fate', 'reason'] });
const collected = counter({ name: 'cluster_registry_orphans_collected_total', help: 'Orphaned copies deleted after the grace period, by reason.', labelNames: ['reason'] });

/** Where a source is copied to, per rule, binding and source version (templates are not free). */
const TARGET_MEMO_MAX = 50_000;

export class Collector {
  private readonly o: CollectorOptions;
  private readonly wake = new Wakeup();
  private readonly now: () => number;
  /** uid -> when the copy was first seen orphaned. */
  private readonly orphanSince = new Map<string, number>();
  private readonly targets = new Map<string, string | undefined>();

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
      try {
        await this.sweep(signal);
      } catch (err) {
        if (!signal.aborted) this.o.log.warn({ err }, 'orphan sweep failed; trying again at the next one');
      }
    }
  }

  /** One pass over every copy of every kind the rules write. */
  async sweep(signal: AbortSignal): Promise<void> {
    const registered = this.o.registeredIDs();
    const alive = this.o.aliveIDs();
    const seen = new Set<string>();
    const tally = new Map<string, number>();
    for (const gvk of this.o.copies.kinds()) {
      if (!this.o.copies.synced(gvk)) continue;
      for (const copy of this.o.copies.all(gvk)) {
        const uid = copy.metadata.uid ?? '';
        const id = sourceIdentityOf(copy);
        if (!id) continue;
        seen.add(uid);
        const recorded = this.describe(copy, gvk, id);
        const alternative = recorded && !this.o.engine.recordedSourceLive(id) ? this.alternative(copy, gvk, id) : undefined;
        const fate = decideCopyFate(copy, { localClusterID: this.o.localClusterID, registeredClusterIDs: registered, alivePeerIDs: alive, recorded, alternativeSource: alternative !== undefined });
        const label = `${fate.orphan ? 'orphan' : 'kept'}|${fate.reason}`;
        tally.set(label, (tally.get(label) ?? 0) + 1);
        if (!fate.orphan) {
          this.orphanSince.delete(uid);
          if (alternative) this.o.enqueue(alternative);
          continue;
        }
        const since = this.orphanSince.get(uid) ?? this.now();
        this.orphanSince.set(uid, since);
        if (this.now() - since < this.o.graceMs) continue;
        const resource = await this.o.localDiscovery.resourceFor(gvk);
        if (await this.o.writer.delete(resource, copy, signal, { exactVersion: true })) {
          this.orphanSince.delete(uid);
          const where = `${copy.metadata.namespace ? `${copy.metadata.namespace}/` : ''}${copy.metadata.name ?? ''}`;
          this.o.log.info({ copy: where, kind: gvk.kind, reason: fate.reason, rule: id.rule }, 'collected an orphaned copy');
          collected.inc({ reason: fate.reason });
          const rule = id.rule ? this.o.engine.rule(id.rule)?.object : undefined;
          if (rule) this.o.events.event(rule, 'Normal', 'OrphanCollected', `deleted ${gvk.kind} ${where}: ${fate.reason}`);
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
  }

  /** What the rule that made the copy knows about its source on the recorded peer. */
  private describe(copy: KubeObject, gvk: FullGVK, id: SourceIdentity): RecordedSource | undefined {
    const rule = id.rule ? this.o.engine.rule(id.rule) : this.o.engine.allRules().find((r) => r.sourceGVK.group === id.group && r.sourceGVK.kind === id.kind && r.targetGVKs.some((t) => sameGVK(t, gvk)));
    if (!rule) return { rule: 'deleted', binding: 'starting', object: 'unknown' };
    if (!rule.compiled) return { rule: 'invalid', binding: 'starting', object: 'unknown' };
    const b = this.o.engine.bindingsOf(rule.name).find((x) => x.peer.id === id.clusterID);
    if (!b) return { rule: 'present', binding: 'starting', object: 'unknown' };
    if (b.phase === 'featuresUnmet') return { rule: 'present', binding: 'featuresUnmet', object: 'unknown' };
    if (!b.synced) return { rule: 'present', binding: 'starting', object: 'unknown' };
    return { rule: 'present', binding: 'active', object: this.sourceState(rule, b, id.namespace, id.name, copy) };
  }

  private sourceState(rule: RuleState, b: Binding, namespace: string, name: string, copy: KubeObject): RecordedSource['object'] {
    const source = b.get(namespace, name);
    if (!source || source.metadata.deletionTimestamp) return 'absent';
    const target = this.targetOf(rule, b, source);
    if (target === null) return 'unknown';
    return target === `${gvkKey(gvkOf(copy))}|${targetKey(copy)}` ? 'matches' : 'notMatching';
  }

  /**
   * Where the source's copy goes now: `namespace/name`, undefined when the rule does not take it,
   * null when that cannot be said (a template failing on it).
   */
  private targetOf(rule: RuleState, b: Binding, source: KubeObject): string | undefined | null {
    const memo = `${rule.fingerprint}|${b.peer.id}|${source.metadata.uid ?? ''}|${source.metadata.resourceVersion ?? ''}`;
    if (this.targets.has(memo)) return this.targets.get(memo);
    let target: string | undefined;
    const ours = ownerOf(source) === this.o.localClusterID || sourceIdentityOf(source)?.clusterID === this.o.localClusterID;
    if (!ours && (!rule.accepts || rule.accepts(source, b.peer.id))) {
      const m = rule.compiled?.match(source);
      if (m?.matched) {
        try {
          const desired = buildDesiredCopy(source, combineMutations(m.matchedRules, rule.spec), { syncedFromClusterID: b.peer.id, localClusterID: this.o.localClusterID, clusters: this.o.clusters(), rule: rule.name });
          target = `${gvkKey(gvkOf(desired))}|${targetKey(desired)}`;
        } catch (err) {
          if (!(err instanceof RuleError)) throw err;
          return null;
        }
      }
    }
    if (this.targets.size >= TARGET_MEMO_MAX) this.targets.clear();
    this.targets.set(memo, target);
    return target;
  }

  /** A live source other than the recorded one that delivers this same copy: its key. */
  private alternative(copy: KubeObject, gvk: FullGVK, id: SourceIdentity): SyncKey | undefined {
    const registered = this.o.registeredIDs();
    const alive = this.o.aliveIDs();
    const want = `${gvkKey(gvk)}|${targetKey(copy)}`;
    for (const rule of this.o.engine.allRules()) {
      if (!rule.compiled || rule.sourceGVK.group !== id.group || rule.sourceGVK.kind !== id.kind || !rule.targetGVKs.some((t) => sameGVK(t, gvk))) continue;
      for (const b of this.o.engine.bindingsOf(rule.name)) {
        if ((b.peer.id === id.clusterID && rule.name === id.rule) || !b.synced || !alive.has(b.peer.id)) continue;
        const source = b.get(id.namespace, id.name);
        if (!source || source.metadata.deletionTimestamp) continue;
        const owner = ownerOf(source);
        if (owner && (!registered.has(owner) || (owner !== b.peer.id && !b.reaches(owner)))) continue;
        if (sourceIdentityOf(source)?.clusterID === this.o.localClusterID) continue;
        if (this.targetOf(rule, b, source) === want) return syncKey(rule.name, b.peer.name, id.namespace, id.name);
      }
    }
    return undefined;
  }
}

function gvkKey(g: FullGVK): string {
  return `${g.group}/${g.version}/${g.kind}`;
}

function targetKey(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

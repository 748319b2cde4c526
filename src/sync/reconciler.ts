// One source object as one rule sees it on one peer, brought to its desired state here: read the
// source from the peer's cache and the copy from ours, let the pure core decide (match, mutate,
// create/update/delete by upstream's ownership table with our fixes), and carry the decision out
// with at most one write of the copy and one of its status. Level-triggered: the key says what
// to look at, the caches say what is; whatever blocks a key registers what will release it.
import {
  addressable,
  ANNOTATIONS,
  SYNC_EVENT_REASONS,
  gvkOf,
  isSecret,
  sameSourceIdentity,
  sourceIdentityOf,
  sourceObjectKey,
  type FullGVK,
  type SourceIdentity,
} from '../core/api/index.ts';
import type { KubeObject } from '../core/api/types.ts';
import {
  applyNeeded,
  type CopyTargets,
  decideCopy,
  decideDelete,
  type Decision,
  DECISION_REASONS,
  type DecisionReason,
  adoptionPolicyOf,
  describeDrift,
  describeReplaced,
  driftOutcome,
  describeMutationFailure,
  type DesiredCopy,
  errorMessage,
  FIELD_MANAGER,
  ownerOf,
  type OwnershipFacts,
  planCopyUpdate,
  replacedFields,
  recordedFrom,
  recordOn,
  unkeptFields,
  type CopyUpdate,
  RuleError,
  type RuleState,
  specPart,
} from '../core/rules/index.ts';
import { copiesPerRuleAndPeer, credentialsInUse, inPeerCopyBudget, keepingVouch, mayHold, type TrustVerdict } from '../core/trust/index.ts';
import { counter, holding, Lru, NoKindMatchError, isAlreadyExists, isConflict, isNotFound, type ApiResource, type Discovery, type EventRecorder, type Logger, type ReconcileResult, type Renders } from '../kube/index.ts';
import { kindNotServed, type LiveSource } from './binding.ts';
import { objectName, type SyncKey } from './keys.ts';
import type { CopyReservation, NoRoom } from './copy-budget.ts';
import type { Outcome, RuleStatusReporter } from './status.ts';
import type { BoundPeer, CopiesView, CopyWrites, SyncView } from './view.ts';
import { StageClock } from './stages.ts';
import { WAIT, type Waiters } from './waiters.ts';
import { CopyChangedError, refusedCopy } from './writer.ts';

export interface ReconcilerDeps {
  readonly view: SyncView;
  readonly copies: CopiesView;
  readonly writer: CopyWrites;
  /** Makes the copies, and remembers where each belongs for the collector. */
  readonly targets: Pick<CopyTargets, 'making'>;
  /** Where a peer's templates are rendered, taking turns with the rest of the process. */
  readonly renders: Renders;
  readonly localDiscovery: Pick<Discovery, 'resourceFor'>;
  /** Copies one rule may make here from one peer. */
  readonly maxCopiesPerRule: number;
  readonly waiters: Waiters;
  readonly status: Pick<RuleStatusReporter, 'outcome' | 'forget'>;
  readonly events: Pick<EventRecorder, 'event'>;
  readonly log: Logger;
}

const driftsFound = counter({
  name: 'cluster_registry_sync_drifts_total',
  help: 'Copies found edited here, not at their source, by rule and by what was done (the drift policy: Revert, Report, Pause).',
  labelNames: ['rule', 'policy'],
});

/** Copies whose unkept fields are remembered: only those whose schema drops some of what we write. */
const MAX_UNKEPT_REMEMBERED = 10_000;
const NOTHING_UNKEPT: ReadonlySet<string> = new Set();

const adoptions = counter({
  name: 'cluster_registry_sync_adoptions_total',
  help: 'Local objects taken over as copies, by rule and adoption policy (IfIdentical, Always).',
  labelNames: ['rule', 'policy'],
});

/** How a decision that writes nothing counts in the rule's status. */
const NO_WRITE_OUTCOME: Partial<Record<DecisionReason, Outcome>> = {
  [DECISION_REASONS.sourceUnreachable]: 'waiting',
  [DECISION_REASONS.ownerNotInGroup]: 'waiting',
  [DECISION_REASONS.ownerNotReachedByPeer]: 'waiting',
  [DECISION_REASONS.ownerWouldChange]: 'waiting',
  [DECISION_REASONS.noOwner]: 'failed',
};

export class SyncReconciler {
  private readonly d: ReconcilerDeps;
  /** The rules and peers whose copies were last found at their budget (said once until they make room). */
  private readonly full = new Set<string>();
  /** Per copy (by uid), the fields the API server did not keep when we last wrote it. */
  private readonly unkept = new Lru<ReadonlySet<string>>(MAX_UNKEPT_REMEMBERED);

  constructor(deps: ReconcilerDeps) {
    this.d = deps;
  }

  readonly reconcile = async (key: SyncKey, signal: AbortSignal): Promise<ReconcileResult> => {
    this.d.waiters.forget(key);
    const [ruleName, peerName] = key;
    const rule = this.d.view.rule(ruleName);
    const b = this.d.view.binding(ruleName, peerName);
    // Not running there (yet or any more): the binding enqueues everything when it becomes active,
    // and copies it leaves behind are the collector's.
    if (!rule?.compiled || !b?.readable) return {};
    const clock = new StageClock();
    try {
      return await this.reconcileBound(rule, b, key, signal, clock);
    } finally {
      this.passOnRoom(rule, b, key);
      clock.end();
    }
  };

  private async reconcileBound(rule: RuleState, b: BoundPeer, key: SyncKey, signal: AbortSignal, clock: StageClock): Promise<ReconcileResult> {
    const [ruleName, peerName, namespace, name] = key;
    const lookup = b.lookup(namespace, name);
    // Outside what the rule watches (its scope narrowed): a copy is the collector's, after its grace period.
    if (!lookup.inScope) {
      this.d.status.forget(ruleName, peerName, objectName(key));
      return {};
    }
    const source = lookup.object;
    const identity: SourceIdentity = { clusterID: b.peer.id, group: rule.sourceGVK.group, kind: rule.sourceGVK.kind, namespace, name, rule: ruleName };
    try {
      if (!source || source.metadata.deletionTimestamp) {
        // Absence counts only once the peer's objects have been listed.
        // A copy that changed since the cache showed it (a write of ours still on its way back,
        // say) is decided on again once the cache has caught up; its own event may be the echo of
        // our write, which brings nothing back.
        if (b.synced && !(await this.deleteCopies(rule, b, identity, this.facts(b), signal, clock))) return { requeue: true };
        this.d.status.forget(ruleName, peerName, objectName(key));
        return {};
      }
      return await this.sync(rule, b, key, { object: source, bytes: lookup.bytes }, signal, clock);
    } catch (err) {
      if (signal.aborted) throw err;
      this.failed(rule, key, errorMessage(err));
      throw err;
    }
  }

  /** What the ownership decisions weigh, as the group stands now. */
  private facts(b: BoundPeer): OwnershipFacts {
    const registered = new Set(this.d.view.clusters().map((c) => c.spec?.clusterID ?? ''));
    // A binding whose watches fail speaks from its last listing only: for it the peer counts as
    // unreachable (nothing is created from that listing, and it takes nothing over).
    let alive = this.d.view.aliveIDs();
    if (!b.synced && alive.has(b.peer.id)) alive = new Set([...alive].filter((id) => id !== b.peer.id));
    return {
      localClusterID: this.d.view.localClusterID,
      syncedFromClusterID: b.peer.id,
      alivePeerIDs: alive,
      peerReaches: (id) => b.reaches(id),
      ownerRegistered: (id) => registered.has(id),
    };
  }

  /**
   * Whether the source a copy records, when another than the one `desired` comes from, still
   * delivers it (a copy is left to it then). Its rule's templates may take to say: they take turns.
   */
  private async recordedStillDelivers(copy: KubeObject | undefined, desired: KubeObject, signal: AbortSignal): Promise<boolean> {
    const recorded = copy && sourceIdentityOf(copy);
    const incoming = sourceIdentityOf(desired);
    if (!copy || !recorded || !incoming || sameSourceIdentity(recorded, incoming)) return false;
    return this.d.renders.run(this.d.view.recordedSourceLive(recorded, copy), signal);
  }

  private async sync(rule: RuleState, b: BoundPeer, key: SyncKey, seen: LiveSource, signal: AbortSignal, clock: StageClock): Promise<ReconcileResult> {
    const source = seen.object;
    const object = objectName(key);
    // While templates take turns, the rule, its binding or the source may change or go: what was
    // rendered is then not written, and the change brings the key back. A rule stands while its
    // spec does (its status changes all the time), a source while its version does.
    const [, , namespace, name] = key;
    const moved = (): boolean => {
      const now = this.d.view.rule(rule.name);
      const held = b.get(namespace, name)?.metadata;
      const was = source.metadata;
      return (
        !held ||
        now?.fingerprint !== rule.fingerprint ||
        now.compiled !== rule.compiled ||
        this.d.view.binding(rule.name, b.peer.name) !== b ||
        held.uid !== was.uid ||
        held.resourceVersion !== was.resourceVersion ||
        held.deletionTimestamp !== was.deletionTimestamp
      );
    };
    let copy: DesiredCopy | undefined;
    try {
      // A peer's rule may spend a large share of a second on one object's templates: the event
      // loop is handed back between them, and what they hold meanwhile (the object, copied and
      // decoded) waits for room beside the other renders'.
      copy = await this.d.renders.run(holding(seen.bytes, this.d.targets.making(rule, b.peerRef, source, this.d.view.clusters())), signal);
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      if (moved()) return { requeue: true };
      // Bad input in the rule (a template failing on this object, or the Cluster it reads not here
      // yet): reported, and looked at again when the registry changes or the rule or source does.
      this.d.waiters.wait(WAIT.clusters, key);
      this.failed(rule, key, `could not mutate ${object}: ${describeMutationFailure(err, isSecret(source))}`);
      return {};
    }
    if (moved()) return { requeue: true };
    if (!copy) {
      this.d.status.forget(rule.name, b.peer.name, object);
      return {};
    }
    const { mutations, desired } = copy;
    const gvk = gvkOf(desired);
    let resource: ApiResource;
    try {
      resource = await this.d.localDiscovery.resourceFor(gvk);
    } catch (err) {
      if (!(err instanceof NoKindMatchError)) throw err;
      // The binding checked the kind when it started; it went since: retried with backoff.
      this.failed(rule, key, `${object}: ${kindNotServed(gvk, 'here')}`);
      return { requeue: true };
    }
    const target = desired.metadata;
    if (!resource.namespaced) delete target.namespace;
    else if (!target.namespace) {
      this.failed(rule, key, `${object}: ${gvk.kind} is namespaced here, but the copy has no namespace`);
      return {};
    }
    if (target.namespace && !this.d.view.namespaceExists(target.namespace)) {
      this.d.waiters.wait(WAIT.namespace(target.namespace), key);
      this.d.status.outcome(rule.name, b.peer.name, object, 'waiting', { error: `${object}: namespace ${target.namespace} does not exist here; waiting for it` });
      this.event(rule, 'Warning', SYNC_EVENT_REASONS.missingNamespace, `could not reconcile (resource: ${object}, localResource: ${target.namespace}/${target.name ?? ''}): namespace does not exists locally`);
      return {};
    }
    let current = this.d.copies.get(gvk, target.namespace, target.name ?? '');
    // Whether the source the copy records, when another, still delivers it: asked before each decision.
    let recordedLive = await this.recordedStillDelivers(current, desired, signal);
    if (moved()) return { requeue: true };
    const wait = b.limiter.take(`${key[2]}/${key[3]}`);
    if (wait > 0) {
      this.event(rule, 'Warning', SYNC_EVENT_REASONS.rateLimited, `ratelimited, too frequent reconciles were happening for this object (resource: ${object})`);
      return { requeueAfter: Math.ceil(wait) };
    }
    if (current) this.d.writer.forgetEcho(current);
    const decide = (): Decision =>
      decideCopy(rule, b.peerRef, { ...this.facts(b), recordedSourceLive: () => recordedLive }, { source, desired, current, syncStatus: mutations.syncStatus, clusters: this.d.view.clusters() });
    let decision = decide();
    // Whatever the rule says, a peer never makes this cluster hold what the trust boundary refuses.
    const judge = (): TrustVerdict | undefined => (decision.action === 'none' ? undefined : mayHold(desired, { channel: rule.channel, from: b.peer.id, current }, this.d.view.trust()));
    let verdict = judge();
    if (verdict && !verdict.allowed && decision.action === 'create') {
      // Our cache holds copies only: a local object of that name may be there, and then nothing is written.
      clock.enter('write');
      current = await this.getLocal(resource, desired, signal);
      if (current) {
        recordedLive = await this.recordedStillDelivers(current, desired, signal);
        if (moved()) return { requeue: true };
        decision = decide();
        verdict = judge();
      }
    }
    if (verdict && !verdict.allowed && decision.action !== 'none') return this.refusedByBoundary(rule, b, key, verdict);
    let wrote = false;
    if (decision.action === 'create') {
      recordOn(desired, undefined, recordedFrom(rule, source, this.d.view.localClusterID));
      const place = this.reserve(rule, b, desired, undefined);
      if ('full' in place) return this.overBudget(rule, b, key, place);
      clock.enter('write');
      try {
        current = await this.d.writer.create(resource, desired, signal);
        place.made(current);
        wrote = true;
      } catch (err) {
        place.abandon();
        if (this.reportIfRefused(rule, key, err)) return {};
        if (!isAlreadyExists(err)) throw err;
        // Something of that name exists without being a copy we know of: decide on what it is,
        // and ask the trust boundary again about what it would become.
        current = await this.getLocal(resource, desired, signal);
        if (!current) return { requeue: true };
        recordedLive = await this.recordedStillDelivers(current, desired, signal);
        if (moved()) return { requeue: true };
        decision = decide();
        verdict = judge();
        if (verdict && !verdict.allowed && decision.action !== 'none') return this.refusedByBoundary(rule, b, key, verdict);
      }
    }
    let drift: CopyUpdate | undefined;
    if (decision.action === 'update' && current) {
      // An entry this member vouches for stays vouched for, whoever's sync updates it.
      const part = specPart(resource);
      const uid = current.metadata.uid ?? '';
      const update = planCopyUpdate(rule, source, keepingVouch(desired, current), current, { part, localClusterID: this.d.view.localClusterID, unkept: this.unkept.get(uid) ?? NOTHING_UNKEPT });
      drift = update;
      const body = update.body;
      // What an adoption replaces, said once it is done.
      const replaced = decision.reason === DECISION_REASONS.adopt ? describeReplaced(current, replacedFields(current, desired)) : undefined;
      if (body && applyNeeded(body, current, FIELD_MANAGER, part)) {
        // A copy this rule takes over from another rule or peer takes a place in its budget, as one
        // it makes; one it grows takes what it adds.
        const place = this.reserve(rule, b, body, current);
        if ('full' in place) return this.overBudget(rule, b, key, place);
        clock.enter('write');
        try {
          const before = current;
          current = await this.d.writer.update(resource, body, current, signal);
          place.made(current);
          wrote = true;
          this.rememberUnkept(uid, body, current);
          if (replaced !== undefined) this.adopted(rule, b, key, before, replaced);
        } catch (err) {
          place.abandon();
          // Our cache was behind, or the copy changed since (every write is guarded by the version
          // the decision saw): look again with fresh data.
          if (isConflict(err) || err instanceof CopyChangedError) return { requeue: true };
          if (this.reportIfRefused(rule, key, err)) return {};
          throw err;
        }
      }
      if (drift.plan.mark !== 'keep') {
        clock.enter('write');
        try {
          current = await this.d.writer.mark(resource, desired, current, drift.plan.mark, signal);
        } catch (err) {
          if (isConflict(err)) return { requeue: true };
          throw err;
        }
      }
      if (drift.plan.report) this.driftFound(rule, b, key, current, drift);
    }
    if (decision.writeStatus && drift?.plan.apply !== 'none' && current && desired['status'] !== undefined && resource.subresources.includes('status') && applyNeeded(desired, current, FIELD_MANAGER, 'status')) {
      clock.enter('write');
      try {
        await this.d.writer.applyStatus(resource, desired, current, signal);
      } catch (err) {
        if (isConflict(err)) return { requeue: true };
        if (this.reportIfRefused(rule, key, err)) return {};
        throw err;
      }
      wrote = true;
    }
    clock.enter('record');
    this.recordOutcome(rule, b, key, decision, desired, current, wrote, drift);
    return {};
  }

  /** What the API server did not keep of our write (fields its schema prunes, say): their absence later is no one's edit. */
  private rememberUnkept(uid: string, body: KubeObject, written: KubeObject): void {
    const unkept = unkeptFields(body, written);
    if (unkept.size > 0) this.unkept.set(uid, unkept);
    else this.unkept.delete(uid);
  }

  /** A local object taken over: said on it (an Event with what it held, so that it can be put back by hand), in the log, and counted. */
  private adopted(rule: RuleState, b: BoundPeer, key: SyncKey, local: KubeObject, replaced: string): void {
    const { policy } = adoptionPolicyOf(rule);
    const message = `taken over as a copy (rule ${rule.name}, adoptionPolicy ${policy}, from ${b.peer.name}); it held: ${replaced}`;
    this.d.log.info({ rule: rule.name, peer: b.peer.name, object: objectName(key), policy, replaced }, 'local object adopted');
    this.d.events.event(local, policy === 'Always' ? 'Warning' : 'Normal', SYNC_EVENT_REASONS.adopted, message);
    adoptions.inc({ rule: rule.name, policy });
  }

  /** A copy edited here: said on the copy (an Event with who changed what), in the log, and counted. */
  private driftFound(rule: RuleState, b: BoundPeer, key: SyncKey, copy: KubeObject, drift: CopyUpdate): void {
    const what = describeDrift(drift.fields);
    const message = `edited here, not at its source (rule ${rule.name}, from ${b.peer.name}); ${driftOutcome(drift)}: ${what}`;
    this.d.log.info({ rule: rule.name, peer: b.peer.name, object: objectName(key), policy: drift.policy, fields: what }, 'copy drifted');
    this.d.events.event(copy, 'Warning', drift.policy === 'Revert' ? SYNC_EVENT_REASONS.driftReverted : SYNC_EVENT_REASONS.drifted, message);
    driftsFound.inc({ rule: rule.name, policy: drift.policy });
  }

  /** A place for writing `copy` over `current` among what this rule and all rules make from the peer, or why there is none. */
  private reserve(rule: RuleState, b: BoundPeer, copy: KubeObject, current: KubeObject | undefined): CopyReservation | NoRoom {
    const limit = { max: copiesPerRuleAndPeer(rule.channel, this.d.maxCopiesPerRule), peerWide: inPeerCopyBudget(rule.channel) };
    const place = this.d.copies.budget.reserve(rule.name, b.peer.id, limit, copy, current);
    if (!('full' in place)) this.full.delete(`${rule.name}|${b.peer.id}`);
    return place;
  }

  /**
   * The copies the rule made from this peer (or all copies from it) hold their budget: reported on
   * the rule (its Event and log once per rule and peer until it makes room again), looked at again
   * once one of them goes.
   */
  private overBudget(rule: RuleState, b: BoundPeer, key: SyncKey, room: NoRoom): ReconcileResult {
    const flag = room.budget === 'rule' ? '--rule-max-copies' : '--peer-cache-max-objects and --peer-cache-max-bytes';
    const message = `${room.full} here, so no more are made from ${b.peer.name} (the controller's ${flag})`;
    this.d.waiters.wait(room.budget === 'rule' ? WAIT.ruleCopies(rule.name, b.peer.id) : WAIT.peerCopies(b.peer.id), key);
    this.d.status.outcome(rule.name, b.peer.name, objectName(key), 'failed', { error: `${objectName(key)}: ${message}` });
    const full = `${rule.name}|${b.peer.id}`;
    if (!this.full.has(full)) {
      this.full.add(full);
      this.d.log.warn({ rule: rule.name, peer: b.peer.name }, message);
      this.event(rule, 'Warning', SYNC_EVENT_REASONS.notReconciled, message);
    }
    return {};
  }

  /**
   * Freed room wakes one key waiting for it; whatever that key did (made its copy, needed none,
   * failed), room still free goes on to the next. A key waiting for room itself passes none of it:
   * it would wake itself.
   */
  private passOnRoom(rule: RuleState, b: BoundPeer, key: SyncKey): void {
    const budget = this.d.copies.budget;
    const ruleRoom = WAIT.ruleCopies(rule.name, b.peer.id);
    if (this.mayPassOn(ruleRoom, key) && budget.free(rule.name, b.peer.id, copiesPerRuleAndPeer(rule.channel, this.d.maxCopiesPerRule)) > 0) this.d.waiters.release(ruleRoom, 1);
    const peerRoom = WAIT.peerCopies(b.peer.id);
    if (this.mayPassOn(peerRoom, key) && budget.roomFrom(b.peer.id)) this.d.waiters.release(peerRoom, 1);
  }

  /** Whether `key` may pass on room to a key waiting for `event`: some key waits, and not `key` itself, which would wake itself. */
  private mayPassOn(event: string, key: SyncKey): boolean {
    return this.d.waiters.waiting(event) && !this.d.waiters.waitsFor(key, event);
  }

  /** What the trust boundary refused: reported, and looked at again when the registry changes if that may lift it. */
  private refusedByBoundary(rule: RuleState, b: BoundPeer, key: SyncKey, verdict: Extract<TrustVerdict, { allowed: false }>): ReconcileResult {
    const object = objectName(key);
    if (verdict.untilRegistryChanges) {
      this.d.waiters.wait(WAIT.clusters, key);
      this.d.status.outcome(rule.name, b.peer.name, object, 'waiting', { error: `${object}: ${verdict.reason}` });
    } else this.failed(rule, key, `${object}: ${verdict.reason}`);
    return {};
  }

  /** Records the outcome, and what will release a key the decision blocked. */
  private recordOutcome(rule: RuleState, b: BoundPeer, key: SyncKey, decision: Decision, desired: KubeObject, current: KubeObject | undefined, wrote: boolean, drift: CopyUpdate | undefined): void {
    const object = objectName(key);
    const place = WAIT.target(desired);
    const owner = ownerOf(desired);
    switch (decision.reason) {
      case DECISION_REASONS.ownedByAnotherAliveCluster:
      case DECISION_REASONS.deliveredByAnotherSource: {
        // Another live source's copy: looked at again when its cluster dies or the copy changes (goes).
        const blocker = decision.reason === DECISION_REASONS.ownedByAnotherAliveCluster ? ownerOf(current ?? desired) : sourceIdentityOf(current ?? desired)?.clusterID;
        if (blocker) this.d.waiters.wait(WAIT.death(blocker), key);
        this.d.waiters.wait(place, key);
        break;
      }
      case DECISION_REASONS.ownerNotReachedByPeer:
        // Settled once the peer reaches the owner, or once the owner is alive here to deliver it.
        this.d.waiters.wait(WAIT.reach(b.peer.name, owner), key);
        this.d.waiters.wait(WAIT.alive(owner), key);
        break;
      case DECISION_REASONS.ownerNotInGroup:
        this.d.waiters.wait(WAIT.registered(owner), key);
        break;
      case DECISION_REASONS.ownerWouldChange:
        // The copy's owner keeps it while in the group: settled once it leaves, comes back to
        // deliver it, or the copy changes.
        this.d.waiters.wait(WAIT.clusters, key);
        this.d.waiters.wait(WAIT.alive(ownerOf(current ?? desired)), key);
        this.d.waiters.wait(place, key);
        break;
      case DECISION_REASONS.sourceUnreachable:
        this.d.waiters.wait(WAIT.alive(b.peer.id), key);
        break;
      case DECISION_REASONS.locallyOwned:
        this.d.waiters.wait(place, key);
        break;
      default:
        // Nothing outside this key's source or copy blocks it: their own events bring it back.
        break;
    }
    // A local object of the same name (no owner) wins by design (the core rules rely on it), so it
    // counts as in sync, like a copy left to the live cluster that owns it.
    const outcome = decision.action === 'none' ? (NO_WRITE_OUTCOME[decision.reason] ?? 'synced') : 'synced';
    const why = outcome === 'synced' ? undefined : `${object}: ${decision.reason}`;
    // A failure (the rule's mutations removed the owner, the source names no drift policy we know)
    // is reported as every other: log, Event and status.
    if (drift?.policyError) this.failed(rule, key, `${object}: ${drift.policyError}`);
    else if (outcome === 'failed' && why) this.failed(rule, key, why);
    else this.d.status.outcome(rule.name, b.peer.name, object, outcome, { ...(why ? { error: why } : {}), wrote, drifted: drift?.plan.drifted ?? false, reverted: drift?.policy === 'Revert' && drift.plan.report });
    if (wrote) {
      this.d.log.debug({ rule: rule.name, peer: b.peer.name, object, action: decision.action }, 'object synced');
      this.event(rule, 'Normal', SYNC_EVENT_REASONS.reconciled, `object reconciled (resource: ${object})`);
    }
  }

  private async getLocal(resource: ApiResource, desired: KubeObject, signal: AbortSignal): Promise<KubeObject | undefined> {
    if (!addressable(desired)) return undefined;
    try {
      return await this.d.writer.get(resource, desired.metadata.namespace, desired.metadata.name ?? '', signal);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The copies of a source the peer says is gone: found by the identity they record (renamed, moved
   * or long-named ones included), or, for copies another implementation made, by name. False when
   * one of them changed since the cache showed it.
   */
  private async deleteCopies(rule: RuleState, b: BoundPeer, identity: SourceIdentity, facts: OwnershipFacts, signal: AbortSignal, clock: StageClock): Promise<boolean> {
    let settled = true;
    /** Asked of the peer once, before the first deletion (see goneFromPeer). */
    let gone: boolean | undefined;
    for (const gvk of rule.targetGVKs) {
      for (const copy of this.copiesOf(gvk, identity)) {
        // Already on its way out (a Namespace waiting for its finalizers answers a second delete with a conflict).
        if (copy.metadata.deletionTimestamp) continue;
        // Credentials our registry reads their owner with stay while it does (the collector takes
        // them once no Cluster names them): a member that replaces its reader Secret by deleting it
        // hands out the new one through the old, which we could otherwise no longer read.
        if (credentialsInUse(copy, this.d.view.clusters())) continue;
        // The peer's watches leave out what it holds of that owner's: its absence there says
        // nothing (the owner answers us itself, or its objects are being listed again).
        if (!b.watchesOwner(ownerOf(copy))) continue;
        const decision = decideDelete(facts, identity, copy);
        if (decision.action !== 'delete') continue;
        clock.enter('write');
        try {
          gone ??= await b.goneFromPeer(identity.namespace, identity.name, signal);
        } catch (err) {
          // The peer did not say: asked again later, with backoff, nothing deleted meanwhile.
          if (signal.aborted) throw err;
          return false;
        }
        // Still there, only not shown to us: nothing to delete (and nothing to update it from).
        if (!gone) return settled;
        const resource = await this.d.localDiscovery.resourceFor(gvk);
        // The source went: so did everything the peer had in a namespace it deleted.
        const outcome = await this.d.writer.delete(resource, copy, signal, { exactVersion: true, ownersCopiesGo: true });
        if (outcome === 'changed') settled = false;
        if (outcome === 'deleted') {
          this.d.log.info({ rule: rule.name, peer: b.peer.name, copy: `${copy.metadata.namespace ?? ''}/${copy.metadata.name ?? ''}` }, 'deleted the copy of a deleted source');
        }
        if (typeof outcome === 'object') this.namespaceKept(rule, copy, outcome.kept);
      }
    }
    return settled;
  }

  private copiesOf(gvk: FullGVK, identity: SourceIdentity): KubeObject[] {
    const recorded = this.d.copies.bySource(gvk, sourceObjectKey(identity)).filter((c) => {
      const r = sourceIdentityOf(c);
      return !r?.rule || r.rule === identity.rule;
    });
    // Copies made without our source record keep the upstream labels, or the source's own name.
    // The index already ties them to this source by name; a source record that does not parse still counts as one.
    const legacy = this.d.copies.legacy(gvk, identity.namespace, identity.name).filter((c) => !c.metadata.annotations?.[ANNOTATIONS.source]);
    return [...recorded, ...legacy];
  }

  /**
   * A copy the API server refuses as invalid is the rule's doing (a template or override making a
   * bad name, label or field): reported like any failure, and left until the rule or the source
   * changes, instead of retried as a fault for ever.
   */
  private reportIfRefused(rule: RuleState, key: SyncKey, err: unknown): boolean {
    const why = refusedCopy(err);
    if (why !== undefined) this.failed(rule, key, `${objectName(key)}: the API server refused the copy: ${why}`);
    return why !== undefined;
  }

  /** A Namespace copy whose source went, kept because it holds more than copies of the same owner's. */
  private namespaceKept(rule: RuleState, copy: KubeObject, why: string): void {
    const message = `kept namespace ${copy.metadata.name ?? ''}, no longer a copy, though its source is gone: ${why}`;
    this.d.log.warn({ rule: rule.name, namespace: copy.metadata.name }, message);
    this.event(rule, 'Warning', SYNC_EVENT_REASONS.namespaceKept, message);
  }

  private failed(rule: RuleState, key: SyncKey, message: string): void {
    this.d.status.outcome(rule.name, key[1], objectName(key), 'failed', { error: message });
    this.d.log.warn({ rule: rule.name, peer: key[1], object: objectName(key), error: message }, 'object not synced');
    this.event(rule, 'Warning', SYNC_EVENT_REASONS.notReconciled, `could not reconcile (resource: ${objectName(key)}): ${message}`);
  }

  private event(rule: RuleState, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (rule.object) this.d.events.event(rule.object, type, reason, message);
  }
}

// ResourceSyncRule status: what each rule does on each peer (phase, matched, synced and failed
// counts, the last error), summed up in conditions. Outcomes are counted per object, so the
// status stays the same size whatever the number of objects, and it is written at most once per
// interval and only when it changed: writing it on every sync would send events to every peer
// that watches our rules.
import { isDeepStrictEqual } from 'node:util';
import { RESOURCE_SYNC_RULES, RULE_CONDITIONS, RULE_STATUS_LIMITS } from '../core/api/index.ts';
import { ruleCondition } from '../core/api/condition.ts';
import { cut } from '../core/api/text.ts';
import { metaTime } from '../core/api/time.ts';
import type { Condition, ResourceSyncRule, ResourceSyncRuleStatus, RuleClusterStatus } from '../core/api/types.ts';
import { formatIssue } from '../core/rules/index.ts';
import { gauge, isNotFound, sleep, type Logger, type ObjectWriter } from '../kube/index.ts';
import type { Binding } from './binding.ts';
import type { RuleState } from '../core/rules/index.ts';

/**
 * How an object's last sync went: in sync (or rightly left to the cluster that owns it), failed
 * (an error, or a local object in the way), or waiting for something outside its control (a
 * namespace, the peer or the owner to be reachable, the owner to join the group).
 */
export type Outcome = 'synced' | 'failed' | 'waiting';

const OUTCOMES: readonly Outcome[] = ['synced', 'failed', 'waiting'];
const ruleObjects = gauge({
  name: 'cluster_registry_rule_objects',
  help: 'Objects each rule takes from each peer, by the outcome of their last sync (synced, failed, waiting).',
  labelNames: ['rule', 'peer', 'outcome'],
});

interface PeerTally {
  clusterID: string;
  phase: Binding['phase'];
  message: string;
  denied: boolean;
  /** Matched objects by name, and how their last sync went. */
  objects: Map<string, Outcome>;
  /** Matched objects whose copies are left drifted. */
  drifted: Set<string>;
  /** Edits of copies put back. */
  reverted: number;
  lastError: string | undefined;
  /** When the sync last wrote a copy from that peer (written as the status's lastSyncTime). */
  lastSyncAt: Date | undefined;
}

interface RuleTally {
  peers: Map<string, PeerTally>;
  dirty: boolean;
}

const PHASE_STATE: Record<Binding['phase'], RuleClusterStatus['state']> = { starting: 'Pending', featuresUnmet: 'Pending', failed: 'Failed', active: 'Active' };

export const RULE_FAILED_ON_PEER = 'RuleFailedOnPeer';

/**
 * The Warning Event a binding's phase calls for: a rule that cannot run against a peer (its kind
 * not served there or here, access denied, its watches failing) is as much bad input as an
 * invalid one, and an operator looks at Events first. Recorded on each change of phase or reason
 * only (the binding reports nothing else), in the words the rule's status uses for that peer.
 */
export function phaseWarning(b: Pick<Binding, 'phase' | 'message'> & { readonly peer: { readonly name: string } }): { reason: string; message: string } | undefined {
  return b.phase === 'failed' ? { reason: RULE_FAILED_ON_PEER, message: `${b.peer.name}: ${b.message}` } : undefined;
}

export class RuleStatusReporter {
  private readonly rest: ObjectWriter;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly tallies = new Map<string, RuleTally>();
  // What was last written per rule: where the CRD lacks our status fields the server prunes them,
  // and the rule would otherwise never look up to date.
  private readonly written = new Map<string, { text: string; status: ResourceSyncRuleStatus }>();

  constructor(opts: { rest: ObjectWriter; log: Logger; now?: () => Date }) {
    this.rest = opts.rest;
    this.log = opts.log;
    this.now = opts.now ?? (() => new Date());
  }

  private tally(rule: string): RuleTally {
    let t = this.tallies.get(rule);
    if (!t) this.tallies.set(rule, (t = { peers: new Map(), dirty: true }));
    return t;
  }

  private peer(rule: string, peer: string): PeerTally {
    const t = this.tally(rule);
    let p = t.peers.get(peer);
    if (!p) {
      t.peers.set(peer, (p = { clusterID: '', phase: 'starting', message: '', denied: false, objects: new Map(), drifted: new Set(), reverted: 0, lastError: undefined, lastSyncAt: undefined }));
      t.dirty = true;
    }
    return p;
  }

  phase(b: Pick<Binding, 'phase' | 'message' | 'denied'> & { readonly rule: { readonly name: string }; readonly peer: { readonly name: string; readonly id: string } }): void {
    const p = this.peer(b.rule.name, b.peer.name);
    if (p.clusterID === b.peer.id && p.phase === b.phase && p.message === b.message && p.denied === b.denied) return;
    Object.assign(p, { clusterID: b.peer.id, phase: b.phase, message: b.message, denied: b.denied });
    this.tally(b.rule.name).dirty = true;
  }

  /**
   * The outcome of one object's sync; `error` becomes the peer's last error, and `wrote` moves
   * its last sync time. Nothing changes (and nothing is written) for a pass that found
   * everything as it was.
   */
  outcome(rule: string, peer: string, object: string, outcome: Outcome, opts: { error?: string; wrote?: boolean; drifted?: boolean; reverted?: boolean } = {}): void {
    const p = this.peer(rule, peer);
    const drifted = opts.drifted ?? false;
    const changed =
      p.objects.get(object) !== outcome ||
      (opts.error !== undefined && cut(opts.error, RULE_STATUS_LIMITS.maxErrorLength) !== p.lastError) ||
      opts.wrote === true ||
      p.drifted.has(object) !== drifted ||
      opts.reverted === true;
    if (!changed) return;
    p.objects.set(object, outcome);
    if (drifted) p.drifted.add(object);
    else p.drifted.delete(object);
    if (opts.reverted) p.reverted++;
    if (opts.error) p.lastError = cut(opts.error, RULE_STATUS_LIMITS.maxErrorLength);
    if (opts.wrote) p.lastSyncAt = this.now();
    this.tally(rule).dirty = true;
  }

  /** The object is not (or no longer) matched from that peer. */
  forget(rule: string, peer: string, object: string): void {
    const p = this.tallies.get(rule)?.peers.get(peer);
    p?.drifted.delete(object);
    if (p?.objects.delete(object)) this.tallies.get(rule)!.dirty = true;
  }

  /** The rule stopped running on that peer (or altogether, without `peer`). */
  drop(rule: string, peer?: string): void {
    const t = this.tallies.get(rule);
    if (!t) return;
    if (peer === undefined) {
      this.tallies.delete(rule);
      this.written.delete(rule);
    } else if (t.peers.delete(peer)) t.dirty = true;
  }

  /** The status the rule should show now. */
  statusOf(rule: RuleState, previous: ResourceSyncRuleStatus | undefined): ResourceSyncRuleStatus {
    const peers = [...(this.tallies.get(rule.name)?.peers ?? new Map<string, PeerTally>())].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const clusters: RuleClusterStatus[] = peers.slice(0, RULE_STATUS_LIMITS.maxClusters).map(([name, p]) => {
      let synced = 0;
      let failed = 0;
      for (const o of p.objects.values()) if (o === 'synced') synced++;
      else failed++;
      const entry: RuleClusterStatus = { name, state: PHASE_STATE[p.phase], matched: p.objects.size, synced, failed };
      if (p.clusterID) entry.clusterID = p.clusterID;
      if (p.message) entry.message = cut(p.message, RULE_STATUS_LIMITS.maxErrorLength);
      if (p.lastError && failed > 0) entry.lastError = p.lastError;
      if (p.lastSyncAt) entry.lastSyncTime = metaTime(p.lastSyncAt);
      if (p.drifted.size > 0) entry.drifted = p.drifted.size;
      if (p.reverted > 0) entry.reverted = p.reverted;
      return entry;
    });
    const generation = rule.object?.metadata.generation;
    const cond = (type: string, ok: boolean, reason: string, message: string): Condition =>
      ruleCondition(previous?.conditions, { type, ok, reason, message: cut(message, 32_768), observedGeneration: generation }, this.now());
    const V = RULE_CONDITIONS.valid;
    const P = RULE_CONDITIONS.permitted;
    const S = RULE_CONDITIONS.synced;
    const valid = rule.issues.length === 0;
    const deniedPeers = new Set(peers.filter(([, p]) => p.denied).map(([name]) => name));
    const denied = clusters.filter((c) => deniedPeers.has(c.name));
    const failing = clusters.filter((c) => c.state === 'Failed' || (c.failed ?? 0) > 0);
    const conditions = [
      valid ? cond(V.type, true, V.true.reason, V.true.message) : cond(V.type, false, V.false.reason, rule.issues.map(formatIssue).join('; ')),
      denied.length === 0 ? cond(P.type, true, P.true.reason, P.true.message) : cond(P.type, false, P.false.reason, denied.map((c) => `${c.name}: ${c.message ?? ''}`).join('; ')),
      valid && failing.length === 0
        ? cond(S.type, true, S.true.reason, S.true.message)
        : cond(S.type, false, S.false.reason, valid ? failing.map((c) => `${c.name}: ${c.state === 'Failed' ? (c.message ?? '') : (c.lastError ?? '')}`).join('; ') : 'the rule is invalid'),
    ];
    return { ...(generation !== undefined ? { observedGeneration: generation } : {}), conditions, clusters };
  }

  /** Writes changed status of every dirty rule, then again every `intervalMs`, until the signal aborts. */
  async run(rules: () => readonly RuleState[], intervalMs: number, signal: AbortSignal): Promise<void> {
    try {
      await this.writeEvery(rules, intervalMs, signal);
    } finally {
      // A term that ended speaks for nothing any more.
      ruleObjects.reset();
    }
  }

  private async writeEvery(rules: () => readonly RuleState[], intervalMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.publish();
      for (const rule of rules()) {
        if (!rule.object) continue;
        const t = this.tallies.get(rule.name);
        if (t && !t.dirty && rule.object.status?.observedGeneration === rule.object.metadata.generation) continue;
        // Cleared before the write: an outcome that arrives while it is on the way marks the rule
        // again (cleared after, that outcome would never be written); a failed write is retried.
        if (t) t.dirty = false;
        if (!(await this.write(rule, signal)) && t) t.dirty = true;
      }
      await sleep(intervalMs, signal);
    }
  }

  /** The tallies as metrics (replaced whole: rules and peers that went take their series with them). */
  private publish(): void {
    ruleObjects.reset();
    for (const [rule, t] of this.tallies) {
      for (const [peer, p] of t.peers) {
        const counts = new Map<Outcome, number>(OUTCOMES.map((o) => [o, 0]));
        for (const o of p.objects.values()) counts.set(o, (counts.get(o) ?? 0) + 1);
        for (const [outcome, n] of counts) ruleObjects.set({ rule, peer, outcome }, n);
      }
    }
  }

  /** Writes the rule's status if it changed; false when the write failed. */
  private async write(rule: RuleState, signal: AbortSignal): Promise<boolean> {
    const obj = rule.object as ResourceSyncRule;
    const last = this.written.get(rule.name);
    const status = this.statusOf(rule, obj.status?.conditions ? obj.status : last?.status);
    const comparable = (s: ResourceSyncRuleStatus | undefined) => ({ ...s, conditions: s?.conditions ?? [], clusters: s?.clusters ?? [] });
    if (isDeepStrictEqual(comparable(obj.status), comparable(status))) return true;
    const text = JSON.stringify([obj.metadata.uid, status]);
    if (last?.text === text) return true;
    try {
      await this.rest.patchStatus(RESOURCE_SYNC_RULES, undefined, obj.metadata.name ?? '', 'merge', { status }, { signal });
      this.written.set(rule.name, { text, status });
      return true;
    } catch (err) {
      if (signal.aborted || isNotFound(err)) return true;
      this.log.warn({ rule: rule.name, err }, 'writing rule status failed; retrying');
      return false;
    }
  }
}

// What a rule makes of a source: whether it takes it, the copy it would write, what that copy
// needs (the ownership table with our fixes), and where the copy is.
import { hash as digest } from 'node:crypto';
import { API_GROUP, gvkKey, gvkOf, KINDS, sourceIdentityOf } from '../api/index.ts';
import type { Cluster, KubeObject } from '../api/types.ts';
import { adoptionPolicyOf, adopts, replacedFields } from './adoption.ts';
import { RuleError } from './errors.ts';
import type { MatchResult } from './match.ts';
import { buildingDesiredCopy, combineMutations, type CombinedMutations } from './mutate.ts';
import { runThrough, type Pausable } from './pausable.ts';
import { DECISION_REASONS, decideWrite, unclaimedOverOwnDelivery, type Decision, type OwnershipFacts } from './ownership.ts';
import { ownerOf } from '../api/source-identity.ts';
import { relaysRegistry, type PeerRef, type RuleState } from './rule-state.ts';

/**
 * Whether the rule takes this source from the peer with `peerID`: never what is ours or our copy
 * coming back through the peer (loop guards), then a built-in rule's narrowing, then the match.
 */
export function ruleTakes(rule: RuleState, peer: PeerRef, source: KubeObject, localClusterID: string): MatchResult | undefined {
  if (!rule.compiled || ownerOf(source) === localClusterID || sourceIdentityOf(source)?.clusterID === localClusterID) return undefined;
  if (rule.accepts && !rule.accepts(source, peer)) return undefined;
  const m = rule.compiled.match(source);
  return m.matched ? m : undefined;
}

/**
 * The copy a rule makes of a source from a peer, with the mutations that made it: undefined when
 * the rule does not take the source; throws RuleError when a mutation fails on it.
 */
export function desiredCopy(rule: RuleState, peer: PeerRef, source: KubeObject, ctx: CopyContext): DesiredCopy | undefined {
  return runThrough(makingDesiredCopy(rule, peer, source, ctx));
}

/** desiredCopy, pausing before each costly part (see buildingDesiredCopy). */
export function* makingDesiredCopy(rule: RuleState, peer: PeerRef, source: KubeObject, ctx: CopyContext): Pausable<DesiredCopy | undefined> {
  const matched = ruleTakes(rule, peer, source, ctx.localClusterID);
  if (!matched) return undefined;
  const mutations = combineMutations(matched.matchedRules, rule.spec);
  const desired = yield* buildingDesiredCopy(source, mutations, { syncedFromClusterID: peer.id, localClusterID: ctx.localClusterID, clusters: ctx.clusters, rule: rule.name, relaysRegistry: relaysRegistry(rule.name) });
  return { mutations, desired };
}

/** Who we are and the registry, which templates read. */
export interface CopyContext {
  localClusterID: string;
  clusters: readonly Cluster[];
}

export interface DesiredCopy {
  mutations: CombinedMutations;
  desired: KubeObject;
}

/** A Cluster is how an owner joins the registry: its own entry may always be copied. */
function isRegistryEntry(o: KubeObject): boolean {
  const g = gvkOf(o);
  return g.group === API_GROUP && g.kind === KINDS.cluster;
}

/**
 * What the copy of a source needs: upstream's ownership table with our fixes, a copy that another
 * live source delivers left to it, a local registry entry a built-in rule adopts, and a local
 * object a rule's adoptionPolicy takes over.
 */
export function decideCopy(rule: RuleState, peer: PeerRef, facts: OwnershipFacts, c: { source: KubeObject; desired: KubeObject; current: KubeObject | undefined; syncStatus: boolean; clusters: readonly Cluster[] }): Decision {
  // A registry entry is how its owner joins the group, so it is never refused for that reason.
  const f: OwnershipFacts = isRegistryEntry(c.desired) ? { ...facts, ownerRegistered: () => true } : facts;
  const d = decideWrite(f, c.desired, c.current, c.syncStatus);
  if (d.action === 'update' && unclaimedOverOwnDelivery(f, c.source, c.desired, c.current)) return { action: 'none', reason: DECISION_REASONS.deliveredByAnotherSource, writeStatus: false };
  if (d.reason !== DECISION_REASONS.locallyOwned || !c.current) return d;
  if (rule.adopts?.(c.current, peer, c.clusters)) return { action: 'update', reason: DECISION_REASONS.update, writeStatus: false };
  const { policy } = adoptionPolicyOf(rule);
  return policy !== 'Never' && adopts(policy, replacedFields(c.current, c.desired)) ? { action: 'update', reason: DECISION_REASONS.adopt, writeStatus: c.syncStatus } : d;
}

/** `group/version/kind|namespace/name`: where a copy is. */
export function copyPlace(o: KubeObject): string {
  return `${gvkKey(gvkOf(o))}|${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

/**
 * Whether a copy stands where a rule puts its source's copy (`place`, as copyPlace says it). A
 * kind cluster-scoped here has its copies written without the namespace the rule gave them, so a
 * copy without one stands at that place in any namespace.
 */
export function standsAt(copy: KubeObject, place: string | undefined | null): boolean {
  if (typeof place !== 'string') return false;
  const here = copyPlace(copy);
  if (copy.metadata.namespace) return place === here;
  // The copy is on our API server, so its name has no '/': the place's own name ends the place.
  return place.startsWith(here.slice(0, here.indexOf('|') + 1)) && place.endsWith(`/${copy.metadata.name ?? ''}`);
}

/** Entries kept before the memo starts over. */
const TARGET_MEMO_MAX = 50_000;

/**
 * Where a rule copies a source to (see copyPlace), remembered per rule spec, peer and source
 * version, since templates are not free: undefined when the rule does not take the source, null
 * when that cannot be said (a template failing on it).
 */
export class CopyTargets {
  private readonly memo = new Map<string, string | undefined | null>();
  private readonly localClusterID: string;
  /** Moves with every change of the registry: a target worked out against an older one is not kept. */
  private registryVersion = 0;

  constructor(localClusterID: string) {
    this.localClusterID = localClusterID;
  }

  /**
   * Where the rule puts the copy of a source, pausing before each costly part when that is not
   * remembered; `clusters` is read only then.
   */
  *finding(rule: RuleState, peer: PeerRef, source: KubeObject, clusters: () => readonly Cluster[]): Pausable<string | undefined | null> {
    const key = this.key(rule, peer, source);
    if (key && this.memo.has(key)) return this.memo.get(key);
    try {
      const copy = yield* this.rendering(rule, peer, source, clusters(), key);
      return copy && copyPlace(copy.desired);
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      return null;
    }
  }

  /**
   * desiredCopy, pausing before each costly part, with the copy's place remembered as `finding`
   * finds it: the sync makes a copy and the collector asks where it belongs from one rendering.
   */
  making(rule: RuleState, peer: PeerRef, source: KubeObject, clusters: readonly Cluster[]): Pausable<DesiredCopy | undefined> {
    return this.rendering(rule, peer, source, clusters, this.key(rule, peer, source));
  }

  /** desiredCopy, remembering its place under `key` (as the registry stood when it started). */
  private *rendering(rule: RuleState, peer: PeerRef, source: KubeObject, clusters: readonly Cluster[], key: string | undefined): Pausable<DesiredCopy | undefined> {
    const version = this.registryVersion;
    let copy: DesiredCopy | undefined;
    try {
      copy = yield* makingDesiredCopy(rule, peer, source, { localClusterID: this.localClusterID, clusters });
    } catch (err) {
      if (key && err instanceof RuleError) this.remember(key, version, null);
      throw err;
    }
    if (key) this.remember(key, version, copy && copyPlace(copy.desired));
    return copy;
  }

  /** Templates read the registry (`.Cluster`, `.LocalCluster`): a change of it may move any copy. */
  registryChanged(): void {
    this.registryVersion++;
    this.memo.clear();
  }

  /** Where a source version's answer is remembered; undefined when it is not. */
  private key(rule: RuleState, peer: PeerRef, source: KubeObject): string | undefined {
    // What a built-in rule takes depends on the registry, not only on the source's version; it has
    // no templates either, so it is not remembered.
    if (rule.accepts) return undefined;
    // The peer chooses the source's metadata, of any size or type: a digest keeps every key small.
    const { namespace, name, uid, resourceVersion } = source.metadata;
    return digest('sha256', JSON.stringify([rule.name, rule.fingerprint, peer.id, namespace, name, uid, resourceVersion]), 'base64');
  }

  private remember(key: string, version: number, target: string | undefined | null): void {
    if (version !== this.registryVersion) return;
    if (this.memo.size >= TARGET_MEMO_MAX) this.memo.clear();
    this.memo.set(key, target);
  }
}

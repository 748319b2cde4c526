// The rules the engine runs: every ResourceSyncRule of the local cluster (each member runs its own
// copy of a rule against each of its peers), compiled once per spec so a rule's problems are
// known before it touches an object, plus built-in rules that no one can edit or delete.
import { createHash } from 'node:crypto';
import { ANNOTATIONS, API_GROUP, CORE_RULE_NAMES, coreResourceSyncRules, fullGVK, gvkOf, KINDS, sourceIdentityOf, type FullGVK } from '../core/api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../core/api/types.ts';
import {
  buildDesiredCopy,
  combineMutations,
  compileRule,
  DECISION_REASONS,
  decideWrite,
  mayChangeOwner,
  ownerOf,
  possibleTargetGVKs,
  RuleError,
  unclaimedOverOwnDelivery,
  validateRule,
  type CombinedMutations,
  type CompiledRule,
  type Decision,
  type MatchResult,
  type OwnershipFacts,
  type RuleIssue,
} from '../core/rules/index.ts';
import { namesCredentials, ruleChannel, type Channel } from '../core/trust/index.ts';
import type { Informer } from '../kube/index.ts';

/** What rules need to know of the peer a source comes from. */
export interface PeerRef {
  /** Its kube-system UID. */
  readonly id: string;
  /** Its Cluster's name here (a group's members share Cluster names). */
  readonly name: string;
  /** The peer's own Cluster, as the peer has it. */
  readonly ownCluster: () => Cluster | undefined;
}

export interface RuleState {
  readonly name: string;
  /** The local ResourceSyncRule (events and status go there); absent for built-in rules. */
  readonly object: ResourceSyncRule | undefined;
  readonly spec: ResourceSyncRuleSpec;
  /** Undefined when the rule is invalid; `issues` then says why. */
  readonly compiled: CompiledRule | undefined;
  readonly issues: readonly RuleIssue[];
  readonly sourceGVK: FullGVK;
  /** Every kind the rule can write locally (its GVK mutations may differ per matched rule). */
  readonly targetGVKs: readonly FullGVK[];
  /** Some rule of it syncs status, so status changes of sources matter. */
  readonly syncsStatus: boolean;
  /** No mutation of it can set or drop a copy's owner: every copy keeps its source's owner. */
  readonly keepsSourceOwner: boolean;
  /** Built-in rules run against every verified peer, whatever it advertises. */
  readonly ignoresFeatures: boolean;
  /** What the rule may deliver: the registry's own rules carry what no other rule may. */
  readonly channel: Channel;
  /** A built-in rule's narrowing of what it takes from a peer. */
  readonly accepts?: (source: KubeObject, peer: PeerRef) => boolean;
  /**
   * Whether a built-in rule takes over a local object that carries no owner (so is never synced
   * otherwise): a peer's registry entry copied here by hand, as the quickstart does it.
   */
  readonly adopts?: (local: KubeObject, peer: PeerRef, clusters: readonly Cluster[]) => boolean;
  /** Changes whenever anything that shapes the rule's watches or copies changes. */
  readonly fingerprint: string;
}

/** Names of built-in rules contain a slash, which no ResourceSyncRule name can. */
export const BUILTIN_PREFIX = 'builtin/';

function fingerprint(spec: ResourceSyncRuleSpec, builtin: boolean): string {
  return createHash('sha256').update(JSON.stringify([spec, builtin])).digest('hex').slice(0, 16);
}

/** `namespace` is the controller namespace. */
export function ruleState(name: string, spec: ResourceSyncRuleSpec, object: ResourceSyncRule | undefined, namespace: string, builtin?: Pick<RuleState, 'accepts' | 'adopts'>): RuleState {
  const issues = validateRule(spec);
  let compiled: CompiledRule | undefined;
  if (issues.length === 0) {
    try {
      compiled = compileRule(spec);
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      issues.push(...err.issues);
    }
  }
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  return {
    name,
    object,
    spec,
    compiled,
    issues,
    sourceGVK: fullGVK(spec.groupVersionKind ?? {}),
    targetGVKs: compiled ? possibleTargetGVKs(spec) : [],
    syncsStatus: rules.some((r) => r.mutations?.syncStatus === true),
    keepsSourceOwner: !mayChangeOwner(rules),
    ignoresFeatures: builtin !== undefined,
    channel: builtin ? 'registry' : ruleChannel(name, spec, namespace),
    ...(builtin?.accepts ? { accepts: builtin.accepts } : {}),
    ...(builtin?.adopts ? { adopts: builtin.adopts } : {}),
    fingerprint: fingerprint(spec, builtin !== undefined),
  };
}

/** The core rules that pass the registry on: Clusters and their credentials. */
export function relaysRegistry(ruleName: string): boolean {
  return ruleName === CORE_RULE_NAMES.clusters || ruleName === CORE_RULE_NAMES.clusterSecrets;
}

const ownedByItself = (o: KubeObject): boolean => !o.metadata.annotations?.[ANNOTATIONS.ownership];

/**
 * A peer's own registry entry (its Cluster and its reader credentials Secret), taken from every
 * verified peer whether or not it advertises the core feature: that is how a rotated reader token
 * reaches every member before the old one expires. Only objects the peer owns itself qualify, and
 * the entry copied here by hand (no owner: the quickstart's swap) is adopted, or a short-lived
 * token would never be renewed here.
 */
export function builtinRules(namespace: string): RuleState[] {
  const core = new Map(coreResourceSyncRules(namespace).map((r) => [r.metadata.name, r.spec]));
  const spec = (name: string): ResourceSyncRuleSpec => {
    const s = core.get(name);
    if (!s) throw new Error(`no core rule ${name}`);
    return { groupVersionKind: s.groupVersionKind, rules: s.rules };
  };
  return [
    // Exactly one entry per peer: the Cluster named as ours for it and describing it, and the
    // Secret that very Cluster names; a member cannot pass off anything else as its entry.
    ruleState(`${BUILTIN_PREFIX}peer-cluster`, spec(CORE_RULE_NAMES.clusters), undefined, namespace, {
      accepts: (o, peer) => ownedByItself(o) && o.metadata.name === peer.name && (o as Cluster).spec?.clusterID === peer.id,
      adopts: (local, peer) => ownedByItself(local) && local.metadata.name === peer.name && (local as Cluster).spec?.clusterID === peer.id,
    }),
    ruleState(`${BUILTIN_PREFIX}peer-credentials`, spec(CORE_RULE_NAMES.clusterSecrets), undefined, namespace, {
      accepts: (o, peer) => {
        const own = peer.ownCluster();
        return ownedByItself(o) && own !== undefined && namesCredentials(own, o.metadata);
      },
      // The Secret our Cluster of that peer reads its credentials from.
      adopts: (local, peer, clusters) => ownedByItself(local) && clusters.some((c) => c.metadata.name === peer.name && c.spec?.clusterID === peer.id && namesCredentials(c, local.metadata)),
    }),
  ];
}

export type RuleListener = (name: string, state: RuleState | undefined) => void;

/** The rules as the local ResourceSyncRule cache has them, recompiled when a spec changes. */
export class RuleBook {
  private readonly rules = new Map<string, RuleState>();
  private readonly listeners = new Set<RuleListener>();
  private readonly informer: Informer<ResourceSyncRule>;
  private readonly namespace: string;

  /** `namespace` is the controller namespace. */
  constructor(informer: Informer<ResourceSyncRule>, namespace: string) {
    this.informer = informer;
    this.namespace = namespace;
    const builtins = builtinRules(namespace);
    for (const b of builtins) this.rules.set(b.name, b);
  }

  get(name: string): RuleState | undefined {
    return this.rules.get(name);
  }

  all(): RuleState[] {
    return [...this.rules.values()];
  }

  /** Calls `listener` for every current rule and every later change; returns the unsubscribe. */
  subscribe(listener: RuleListener): () => void {
    this.listeners.add(listener);
    for (const r of this.rules.values()) listener(r.name, r);
    return () => this.listeners.delete(listener);
  }

  /** Follows the ResourceSyncRule cache until the returned unsubscribe is called. */
  start(): () => void {
    return this.informer.addEventHandler({
      onAdd: (o) => this.put(o),
      onUpdate: (_old, o) => this.put(o),
      onDelete: (o) => this.remove(o.metadata.name ?? ''),
    });
  }

  private put(obj: ResourceSyncRule): void {
    const name = obj.metadata.name ?? '';
    const prev = this.rules.get(name);
    // Metadata and status changes keep the compiled rule; only the object reference moves on.
    // A rule object without a spec is reported as invalid like any other bad rule.
    const spec = obj.spec ?? ({} as ResourceSyncRuleSpec);
    const next = prev && !prev.ignoresFeatures && fingerprint(spec, false) === prev.fingerprint ? { ...prev, object: obj } : ruleState(name, spec, obj, this.namespace);
    this.rules.set(name, next);
    if (next.fingerprint !== prev?.fingerprint || next.object?.metadata.uid !== prev.object?.metadata.uid) this.emit(name, next);
  }

  private remove(name: string): void {
    if (name.startsWith(BUILTIN_PREFIX) || !this.rules.delete(name)) return;
    this.emit(name, undefined);
  }

  private emit(name: string, state: RuleState | undefined): void {
    for (const l of this.listeners) l(name, state);
  }
}

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
export function desiredCopy(rule: RuleState, peer: PeerRef, source: KubeObject, ctx: { localClusterID: string; clusters: readonly Cluster[] }): { mutations: CombinedMutations; desired: KubeObject } | undefined {
  const matched = ruleTakes(rule, peer, source, ctx.localClusterID);
  if (!matched) return undefined;
  const mutations = combineMutations(matched.matchedRules, rule.spec);
  const desired = buildDesiredCopy(source, mutations, { syncedFromClusterID: peer.id, localClusterID: ctx.localClusterID, clusters: ctx.clusters, rule: rule.name, relaysRegistry: relaysRegistry(rule.name) });
  return { mutations, desired };
}

/** A Cluster is how an owner joins the registry: its own entry may always be copied. */
function isRegistryEntry(o: KubeObject): boolean {
  const g = gvkOf(o);
  return g.group === API_GROUP && g.kind === KINDS.cluster;
}

/**
 * What the copy of a source needs: upstream's ownership table with our fixes, a copy that another
 * live source delivers left to it, and a local registry entry a built-in rule adopts.
 */
export function decideCopy(rule: RuleState, peer: PeerRef, facts: OwnershipFacts, c: { source: KubeObject; desired: KubeObject; current: KubeObject | undefined; syncStatus: boolean; clusters: readonly Cluster[] }): Decision {
  // A registry entry is how its owner joins the group, so it is never refused for that reason.
  const f: OwnershipFacts = isRegistryEntry(c.desired) ? { ...facts, ownerRegistered: () => true } : facts;
  const d = decideWrite(f, c.desired, c.current, c.syncStatus);
  if (d.action === 'update' && unclaimedOverOwnDelivery(f, c.source, c.desired, c.current)) return { action: 'none', reason: DECISION_REASONS.deliveredByAnotherSource, writeStatus: false };
  return d.reason === DECISION_REASONS.locallyOwned && c.current && rule.adopts?.(c.current, peer, c.clusters) ? { action: 'update', reason: DECISION_REASONS.update, writeStatus: false } : d;
}

/** `group/version/kind|namespace/name`: where a copy is. */
export function copyPlace(o: KubeObject): string {
  const g = gvkOf(o);
  return `${g.group}/${g.version}/${g.kind}|${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
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

  constructor(localClusterID: string) {
    this.localClusterID = localClusterID;
  }

  /** `clusters` is read only when the target is not remembered. */
  of(rule: RuleState, peer: PeerRef, source: KubeObject, clusters: () => readonly Cluster[]): string | undefined | null {
    // What a built-in rule takes depends on the registry, not only on the source's version; it has
    // no templates either, so it is not remembered.
    if (rule.accepts) return this.compute(rule, peer, source, clusters);
    const key = `${rule.name}|${rule.fingerprint}|${peer.id}|${source.metadata.uid ?? ''}|${source.metadata.resourceVersion ?? ''}`;
    if (this.memo.has(key)) return this.memo.get(key);
    const target = this.compute(rule, peer, source, clusters);
    if (this.memo.size >= TARGET_MEMO_MAX) this.memo.clear();
    this.memo.set(key, target);
    return target;
  }

  /** Templates read the registry (`.Cluster`, `.LocalCluster`): a change of it may move any copy. */
  registryChanged(): void {
    this.memo.clear();
  }

  private compute(rule: RuleState, peer: PeerRef, source: KubeObject, clusters: () => readonly Cluster[]): string | undefined | null {
    try {
      const copy = desiredCopy(rule, peer, source, { localClusterID: this.localClusterID, clusters: clusters() });
      return copy && copyPlace(copy.desired);
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      return null;
    }
  }
}

// A rule as the engine runs it: compiled once per spec so its problems are known before it
// touches an object, what it may deliver, and the built-in rules that no one can edit or delete.
import { hash as digest } from 'node:crypto';
import { ANNOTATIONS, API_GROUP, CORE_RULE_NAMES, coreResourceSyncRules, fullGVK, KINDS, LABELS, type FullGVK } from '../api/index.ts';
import type { Cluster, KubeObject, ResourceSyncRule, ResourceSyncRuleSpec } from '../api/types.ts';
import { namesCredentials, ruleChannel, type Channel } from '../trust/index.ts';
import { RuleError, type RuleIssue } from './errors.ts';
import { compileRule, validateRule, type CompiledRule } from './match.ts';
import { isLabelValue, mayChangeOwner, possibleTargetGVKs } from './mutate.ts';

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
  /** Some override of it renders a template, which may read the registry (`.Cluster`, `.LocalCluster`). */
  readonly readsRegistry: boolean;
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
  /**
   * A built-in rule reading what a core rule reads: its watches on a peer leave out the owners
   * that rule settles, so that both share one watch per peer (the sync engine's settledOwners).
   */
  readonly settlesWith?: string;
  /** Changes whenever anything that shapes the rule's watches or copies changes. */
  readonly fingerprint: string;
}

/** Names of built-in rules contain a slash, which no ResourceSyncRule name can. */
export const BUILTIN_PREFIX = 'builtin/';

export function fingerprint(spec: ResourceSyncRuleSpec, builtin: boolean): string {
  return digest('sha256', JSON.stringify([spec, builtin]), 'hex').slice(0, 16);
}

/** `namespace` is the controller namespace. */
export function ruleState(name: string, spec: ResourceSyncRuleSpec, object: ResourceSyncRule | undefined, namespace: string, builtin?: Pick<RuleState, 'accepts' | 'adopts' | 'settlesWith'>): RuleState {
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
    // Every override value is rendered; one without an action renders as itself.
    readsRegistry: rules.some((r) => r.mutations?.overrides?.some((o) => typeof o.value === 'string' && o.value.includes('{{'))),
    ignoresFeatures: builtin !== undefined,
    channel: builtin ? 'registry' : ruleChannel(name, spec, namespace),
    ...(builtin?.accepts ? { accepts: builtin.accepts } : {}),
    ...(builtin?.adopts ? { adopts: builtin.adopts } : {}),
    ...(builtin?.settlesWith ? { settlesWith: builtin.settlesWith } : {}),
    fingerprint: fingerprint(spec, builtin !== undefined),
  };
}

/** The core rules that pass the registry on: Clusters and their credentials. */
export function relaysRegistry(ruleName: string): boolean {
  return ruleName === CORE_RULE_NAMES.clusters || ruleName === CORE_RULE_NAMES.clusterSecrets;
}

/**
 * The label selector of a rule's watches on a peer: everything but what the peer copied from us
 * and what it passes on for `settled` owners (clusters that answer us themselves and have for a
 * while: their own objects come to us first-hand, and the peer's copies of them matter only once
 * they stop answering). Copies from us are never synced back (the loop guard); without this, each
 * member would cache and parse every copy every peer holds. Only where the ownership label surely
 * names the owner (no mutation of the rule can set or drop it), and not for Clusters: the registry
 * judges a peer's view of the group by all of them, from the same watch. The registry's
 * credentials are filtered too, or every member would cache each peer's copy of every member's
 * Secret, a cost that grows with the square of the group. The peer itself is never left out.
 */
export function peerWatchFilter(rule: Pick<RuleState, 'sourceGVK' | 'keepsSourceOwner'>, localClusterID: string, peerID: string, settled: Iterable<string>): PeerWatchFilter | undefined {
  const clusters = rule.sourceGVK.group === API_GROUP && rule.sourceGVK.kind === KINDS.cluster;
  if (!rule.keepsSourceOwner || clusters || !localClusterID || !isLabelValue(localClusterID)) return undefined;
  const others = [...new Set(settled)].filter((id) => id && id !== peerID && id !== localClusterID && isLabelValue(id)).sort();
  // The selector travels in the URL of every list and watch: past the cap, owners stay watched.
  const leftOut = [localClusterID, ...others.slice(0, MAX_LEFT_OUT - 1)];
  return { labelSelector: `${LABELS.ownership} notin (${leftOut.join(',')})`, leftOut };
}

/** Owners one selector leaves out at most (ours included): about 3.8 KB of URL with UIDs. */
export const MAX_LEFT_OUT = 100;

/** How a rule's watches on a peer narrow what they see: the selector, and the owners it leaves out (ours first). */
export interface PeerWatchFilter {
  readonly labelSelector: string;
  readonly leftOut: readonly string[];
}

/**
 * Whether watches with `to` see only objects that watches with `from` see: then a cache of `from`,
 * cut down to what `to`'s selector admits, is a cache of `to` at the same version, and need not be listed.
 */
export function narrows(from: PeerWatchFilter | undefined, to: PeerWatchFilter | undefined): boolean {
  if (!to) return !from;
  return !from || from.leftOut.every((id) => to.leftOut.includes(id));
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
      settlesWith: CORE_RULE_NAMES.clusterSecrets,
    }),
  ];
}


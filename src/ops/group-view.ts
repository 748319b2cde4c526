// The group as one cluster's caches show it, in rows a person reads: its members with their
// health, the ResourceSyncRules with what they synced from each peer, and the ClusterFeatures.
// Pure, so that `status` and the dashboard show the same thing from the same objects.
import { CLUSTER_CONDITIONS, RULE_CONDITIONS } from '../core/api/keys.ts';
import { cut } from '../core/api/text.ts';
import type { Cluster, ClusterFeature, ResourceSyncRule } from '../core/api/types.ts';
import { byCodeUnit, runsOurs, upstreamMembersHint } from '../core/registry/index.ts';

export interface ClusterRow {
  name: string;
  type: string;
  state: string;
  synced: string;
  version: string;
  /** `ours` when the member's Cluster carries our implementation mark, `other` (upstream's Go controller) when not. */
  controller: string;
  provider: string;
  distribution: string;
  region: string;
  lastCheck: string;
  message: string;
}

export interface RulePeerRow {
  name: string;
  state: string;
  matched: number;
  synced: number;
  failed: number;
  /** Copies left drifted (Report, Pause), and edits put back since its controller started (Revert). */
  drifted: number;
  reverted: number;
  message: string;
  lastError: string;
  lastSyncTime: string;
}

export interface RuleRow {
  name: string;
  /** group/version/Kind, the core group shown as version/Kind. */
  kind: string;
  /** Synced, Errors, Denied, Invalid, or Pending while no controller has reported on this generation. */
  state: string;
  /** Why the rule is not Synced: the message of its first failing condition. */
  message: string;
  matched: number;
  synced: number;
  failed: number;
  drifted: number;
  peers: RulePeerRow[];
}

export interface FeatureRow {
  name: string;
  featureName: string;
}

export interface GroupView {
  /** The cluster whose caches these are (its kubeconfig context or server). */
  viewer: string;
  clusters: ClusterRow[];
  rules: RuleRow[];
  features: FeatureRow[];
  /** Advice when members run another controller (see `upstreamMembersHint`). */
  hint: string;
}

/** Texts a peer writes (a message, an error) are unbounded input: each is cut to this many characters. */
export const MAX_TEXT = 1024;

const clip = (text: string | undefined): string => cut(text ?? '', MAX_TEXT);

const byName = <T extends { metadata: { name?: string } }>(a: T, b: T) => byCodeUnit(a.metadata.name ?? '', b.metadata.name ?? '');
/** The condition of `type` among `conditions`, if there is one. */
export const condition = <C extends { type: string }>(conditions: readonly C[] | undefined, type: string) => conditions?.find((c) => c.type === type);

export function clusterRows(clusters: readonly Cluster[]): ClusterRow[] {
  return [...clusters].sort(byName).map((c) => {
    const cond = (t: string) => condition(c.status?.conditions, t);
    return {
      name: c.metadata.name ?? '',
      type: clip(c.status?.type),
      state: clip(c.status?.state),
      synced: clip(cond(CLUSTER_CONDITIONS.clustersSynced.type)?.status),
      version: clip(c.status?.version),
      controller: runsOurs(c) ? 'ours' : 'other',
      provider: clip(c.status?.provider),
      distribution: clip(c.status?.distribution),
      region: clip(c.status?.locality?.region),
      lastCheck: clip(cond(CLUSTER_CONDITIONS.ready.type)?.lastHeartbeatTime),
      message: clip(c.status?.message),
    };
  });
}

/** The verdict of a rule's conditions, in the order they gate each other. */
function ruleState(r: ResourceSyncRule): { state: string; message: string } {
  const conditions = r.status?.conditions;
  // Conditions about an older generation say nothing about the rule as it is now.
  const current = r.status?.observedGeneration === undefined || r.metadata.generation === undefined || r.status.observedGeneration >= r.metadata.generation;
  if (!conditions?.length) return { state: 'Pending', message: 'no controller has reported on this rule yet' };
  if (!current) return { state: 'Pending', message: `not reported on generation ${r.metadata.generation ?? 0} yet` };
  for (const [type, state] of [
    [RULE_CONDITIONS.valid.type, 'Invalid'],
    [RULE_CONDITIONS.permitted.type, 'Denied'],
    [RULE_CONDITIONS.synced.type, 'Errors'],
  ] as const) {
    const c = condition(conditions, type);
    if (c?.status === 'False') return { state, message: clip(c.message) };
  }
  return condition(conditions, RULE_CONDITIONS.synced.type)?.status === 'True' ? { state: 'Synced', message: '' } : { state: 'Pending', message: '' };
}

export function ruleRows(rules: readonly ResourceSyncRule[]): RuleRow[] {
  return [...rules].sort(byName).map((r) => {
    const gvk = r.spec?.groupVersionKind;
    const peers = [...(r.status?.clusters ?? [])]
      .sort((a, b) => byCodeUnit(a.name, b.name))
      .map((p) => ({
        name: clip(p.name),
        state: clip(p.state),
        matched: p.matched ?? 0,
        synced: p.synced ?? 0,
        failed: p.failed ?? 0,
        drifted: p.drifted ?? 0,
        reverted: p.reverted ?? 0,
        message: clip(p.message),
        lastError: clip(p.lastError),
        lastSyncTime: clip(p.lastSyncTime),
      }));
    const sum = (k: 'matched' | 'synced' | 'failed' | 'drifted') => peers.reduce((n, p) => n + p[k], 0);
    return {
      name: r.metadata.name ?? '',
      kind: gvk ? [gvk.group, gvk.version, gvk.kind].filter(Boolean).join('/') : '',
      ...ruleState(r),
      matched: sum('matched'),
      synced: sum('synced'),
      failed: sum('failed'),
      drifted: sum('drifted'),
      peers,
    };
  });
}

export function featureRows(features: readonly ClusterFeature[]): FeatureRow[] {
  return [...features].sort(byName).map((f) => ({ name: f.metadata.name ?? '', featureName: clip(f.spec?.featureName) }));
}

export function groupView(viewer: string, objects: { clusters: readonly Cluster[]; rules: readonly ResourceSyncRule[]; features: readonly ClusterFeature[] }): GroupView {
  return {
    viewer,
    clusters: clusterRows(objects.clusters),
    rules: ruleRows(objects.rules),
    features: featureRows(objects.features),
    hint: upstreamMembersHint(objects.clusters) ?? '',
  };
}

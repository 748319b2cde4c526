// Which peers a rule reads from: its clusterFeatureMatch against the ClusterFeatures a peer
// advertises. Every requirement must hold (AND); one holds when any of the peer's features has the
// required featureName (when given) and labels matching its selector (when given). A rule without
// requirements reads from every peer. Upstream treated an invalid selector as "not satisfied";
// rules are validated before they run (validateRule), so here it can only be a programming error.

import type { ClusterFeature, ClusterFeatureMatch } from '../api/types.ts';
import { labelSelectorToSelector } from '../../go/labels/index.ts';

/** What a peer advertises: its ClusterFeatures' featureName and labels. */
export interface AdvertisedFeature {
  readonly featureName: string;
  readonly labels: Readonly<Record<string, string>>;
}

export function advertisedFeature(f: ClusterFeature): AdvertisedFeature {
  return { featureName: f.spec?.featureName ?? '', labels: f.metadata?.labels ?? {} };
}

function requirementHolds(req: ClusterFeatureMatch, features: readonly AdvertisedFeature[]): boolean {
  const hasSelector = Object.keys(req.matchLabels ?? {}).length > 0 || (req.matchExpressions ?? []).length > 0;
  const selector = hasSelector ? labelSelectorToSelector({ matchLabels: req.matchLabels, matchExpressions: req.matchExpressions }) : undefined;
  return features.some((f) => (!req.featureName || req.featureName === f.featureName) && (!selector || selector.matches(f.labels)));
}

export function featuresSatisfied(requirements: readonly ClusterFeatureMatch[] | undefined, features: readonly AdvertisedFeature[]): boolean {
  return (requirements ?? []).every((r) => requirementHolds(r, features));
}

// The built-in ClusterFeature and ResourceSyncRules that bootstrap a group: every member
// pulls Clusters, credential Secrets and ResourceSyncRules from peers advertising the feature.
// Names and specs must equal upstream's or mixed groups stop propagating. The specs are in the
// form Go serialises them (`objectKey: {}` and `mutations: {}` are non-omitempty structs;
// `syncStatus: false` is omitted), so objects written by either implementation compare equal.

import {
  API_GROUP,
  API_GROUP_VERSION,
  API_VERSION,
  CLUSTER_SECRET,
  CORE_FEATURE,
  CORE_RULE_NAMES,
  KINDS,
  LABEL_TRUE,
  LABELS,
} from './keys.ts';
import type { ClusterFeature, GroupVersionKind, ResourceSyncRule, SyncRule } from './types.ts';

function coreLabels(): Record<string, string> {
  return { [LABELS.coreSyncResource]: LABEL_TRUE };
}

export function coreClusterFeature(): ClusterFeature {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KINDS.clusterFeature,
    metadata: { name: CORE_FEATURE.name, labels: coreLabels() },
    spec: { featureName: CORE_FEATURE.featureName },
  };
}

function coreRule(name: string, groupVersionKind: GroupVersionKind, rule: SyncRule): ResourceSyncRule {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KINDS.resourceSyncRule,
    metadata: { name, labels: coreLabels() },
    spec: {
      clusterFeatureMatch: [{ featureName: CORE_FEATURE.featureName }],
      groupVersionKind,
      rules: [rule],
    },
  };
}

/** The three core rules; `namespace` is the controller namespace (credential Secrets live there). */
export function coreResourceSyncRules(namespace: string): ResourceSyncRule[] {
  return [
    coreRule(
      CORE_RULE_NAMES.clusters,
      { group: API_GROUP, version: API_VERSION, kind: KINDS.cluster },
      { mutations: {} },
    ),
    coreRule(
      CORE_RULE_NAMES.clusterSecrets,
      { version: 'v1', kind: 'Secret' },
      {
        match: [
          {
            content: [{ key: 'type', value: CLUSTER_SECRET.type }],
            namespaces: [namespace],
            objectKey: {},
          },
        ],
        mutations: {},
      },
    ),
    coreRule(
      CORE_RULE_NAMES.syncRules,
      { group: API_GROUP, version: API_VERSION, kind: KINDS.resourceSyncRule },
      { mutations: {} },
    ),
  ];
}

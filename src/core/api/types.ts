// Types of the clusterregistry.k8s.cisco.com/v1alpha1 API and the slice of Kubernetes object
// shapes the core works with. Field names are the JSON names of the upstream Go types.

import type { CLUSTER_STATES, CLUSTER_TYPES, OVERRIDE_TYPES } from './keys.ts';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  selfLink?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
}

/** Any Kubernetes object as JSON (unstructured); kind-specific fields stay `unknown`. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface GroupVersionKind {
  group?: string;
  version?: string;
  kind?: string;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  // The CRDs do not enforce the operator set (LabelSelectorOperator lists the valid ones); an
  // unknown one is a validation error, not a type error.
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** metav1.Condition: used by our ResourceSyncRule status. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

// ---------------------------------------------------------------------------------------------
// Cluster

export type ClusterState = (typeof CLUSTER_STATES)[keyof typeof CLUSTER_STATES];
export type ClusterType = (typeof CLUSTER_TYPES)[keyof typeof CLUSTER_TYPES];

export interface NamespacedName {
  name?: string;
  namespace?: string;
}

export interface AuthInfo {
  secretRef?: NamespacedName;
}

export interface KubernetesAPIEndpoint {
  /** Network of the client this entry is for; empty means any network. */
  clientNetwork?: string;
  /** hostname, hostname:port, IP or IP:port; https is assumed when no scheme is given. */
  serverAddress?: string;
  /** Base64 of PEM CA certificate(s). */
  caBundle?: string;
}

export interface ClusterSpec {
  /** UID of the kube-system Namespace of the described cluster. */
  clusterID: string;
  authInfo?: AuthInfo;
  kubernetesApiEndpoints?: KubernetesAPIEndpoint[];
}

export interface ClusterCondition {
  type: string;
  status: ConditionStatus;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Locality {
  region?: string;
  regions?: string[];
  zones?: string[];
}

export interface ClusterMetadata {
  provider?: string;
  distribution?: string;
  kubeProxyVersions?: string[];
  kubeletVersions?: string[];
  version?: string;
  locality?: Locality;
}

export interface ClusterStatus extends ClusterMetadata {
  state?: ClusterState;
  message?: string;
  type?: ClusterType;
  /** Never written (vestigial upstream field, kept for schema parity). */
  leader?: boolean;
  conditions?: ClusterCondition[];
}

export interface Cluster extends KubeObject {
  spec: ClusterSpec;
  status?: ClusterStatus;
}

// ---------------------------------------------------------------------------------------------
// ClusterFeature

export interface ClusterFeatureSpec {
  featureName: string;
}

export interface ClusterFeature extends KubeObject {
  spec: ClusterFeatureSpec;
  status?: Record<string, never>;
}

// ---------------------------------------------------------------------------------------------
// ResourceSyncRule

export interface ClusterFeatureMatch {
  featureName?: string;
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface ObjectKey {
  name?: string;
  namespace?: string;
}

/** Like a LabelSelector, evaluated against the annotations map. */
export interface AnnotationSelector {
  matchAnnotations?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** `x-kubernetes-int-or-string`: the JSON type decides how the gjson result is compared. */
export type IntOrString = number | string;

export interface ContentSelector {
  /** A gjson path evaluated against the object's JSON. */
  key: string;
  value: IntOrString;
}

export interface SyncRuleMatch {
  objectKey?: ObjectKey;
  namespaces?: string[];
  labels?: LabelSelector[];
  annotations?: AnnotationSelector[];
  content?: ContentSelector[];
}

export interface KeyMutations {
  add?: Record<string, string>;
  remove?: string[];
}

export type OverrideType = (typeof OVERRIDE_TYPES)[keyof typeof OVERRIDE_TYPES];

export interface Override {
  // Not an enum in the CRD: anything but OverrideType is rejected when the rule is applied.
  type?: string;
  /** go-patch path, e.g. `/metadata/name`. */
  path?: string;
  /** Go text/template source; absent means "". */
  value?: string;
  /** YAML-parse the rendered value instead of inserting it as a string. */
  parseValue?: boolean;
}

export interface Mutations {
  annotations?: KeyMutations;
  labels?: KeyMutations;
  groupVersionKind?: GroupVersionKind;
  overrides?: Override[];
  syncStatus?: boolean;
}

export interface SyncRule {
  match?: SyncRuleMatch[];
  mutations?: Mutations;
}

export interface ResourceSyncRuleSpec {
  clusterFeatureMatch?: ClusterFeatureMatch[];
  groupVersionKind: GroupVersionKind;
  rules: SyncRule[];
  /** Ours (docs/api.md): what a copy edited where it is gets; Revert when absent. */
  driftPolicy?: 'Revert' | 'Report' | 'Pause';
  /** Ours (docs/api.md): whether an object at a copy's place that is not a copy is taken over; Never when absent. */
  adoptionPolicy?: 'Never' | 'IfIdentical' | 'Always';
}

/** Ours (docs/api.md): the sync summary for one peer. */
export interface RuleClusterStatus {
  /** Name of the peer's Cluster CR. */
  name: string;
  clusterID?: string;
  /** Active: syncing; Pending: clusterFeatureMatch not met or starting; Failed: cannot start (permissions, kind not served). */
  state?: 'Active' | 'Pending' | 'Failed';
  /** Why the peer is Pending or Failed. */
  message?: string;
  /** Objects on the peer the rule matches. */
  matched?: number;
  synced?: number;
  failed?: number;
  /** Copies edited here and left so (driftPolicy Report or Pause). */
  drifted?: number;
  /** Edits of copies put back since the controller started (driftPolicy Revert). */
  reverted?: number;
  lastError?: string;
  lastSyncTime?: string;
}

/** Upstream's status is empty; every field here is our addition (docs/api.md). */
export interface ResourceSyncRuleStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  clusters?: RuleClusterStatus[];
}

export interface ResourceSyncRule extends KubeObject {
  spec: ResourceSyncRuleSpec;
  status?: ResourceSyncRuleStatus;
}

/** Ours (docs/hub-and-spoke.md): spec, labels and annotations from a hub member down to this cluster; status back up. */
export interface HubSyncRuleSpec {
  /** The Cluster (a member of the group) that declares the objects. */
  hub: string;
  /** Secret in the controller namespace with a `kubeconfig` for the hub (default `cluster-registry-hub-<hub>`, made by `cluster-registry hub grant`). */
  credentialsSecret?: string;
  groupVersionKind: GroupVersionKind;
  /** The hub namespaces read (each on its own, as `hub grant --hub-namespace` grants them); none: every namespace. */
  hubNamespaces?: string[];
  /** Which hub objects, besides the name suffix. */
  selector?: LabelSelector;
  names?: { suffix?: string; namespaceSuffix?: string; namespacePrefix?: string };
  /** Replace (default): the hub's content is this cluster's. Merge: fields set only here are kept. */
  content?: 'Replace' | 'Merge';
  /** Write this cluster's status back to the hub (default true). */
  reportStatus?: boolean;
  generationAnnotations?: { remote?: string; local?: string };
  namespaces?: { create?: boolean };
  /** How an object here is deleted when the hub's goes (default Foreground). */
  deletePropagation?: 'Foreground' | 'Background' | 'Orphan';
  secrets?: { names: string[]; remoteSuffix?: string };
}

export interface HubSyncRuleStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  /** Hub objects this cluster takes. */
  matched?: number;
  synced?: number;
  failed?: number;
  lastError?: string;
  lastSyncTime?: string;
}

export interface HubSyncRule extends KubeObject {
  spec: HubSyncRuleSpec;
  status?: HubSyncRuleStatus;
}

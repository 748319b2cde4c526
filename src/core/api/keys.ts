// Every annotation, label, secret type and well-known name the product reads or writes. The
// values are the wire contract with upstream cluster-registry-controller peers: never change one.

export const API_GROUP = 'clusterregistry.k8s.cisco.com';
export const API_VERSION = 'v1alpha1';
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

export const KINDS = {
  cluster: 'Cluster',
  clusterFeature: 'ClusterFeature',
  resourceSyncRule: 'ResourceSyncRule',
  /** Ours: hub-and-spoke sync (docs/hub-and-spoke.md). */
  hubSyncRule: 'HubSyncRule',
} as const;

export const RESOURCES = {
  clusters: 'clusters',
  clusterFeatures: 'clusterfeatures',
  resourceSyncRules: 'resourcesyncrules',
  hubSyncRules: 'hubsyncrules',
} as const;

/** The prefix of this controller's own label and annotation keys. */
export const OUR_KEY_PREFIX = 'cluster-registry.k8s.cisco.com/';
const OWNERSHIP_KEY = 'cluster-registry.k8s.cisco.com/resource-owner-cluster-id';

export const ANNOTATIONS = {
  /** kube-system UID of the cluster that owns a synced copy; absent means "owned here". */
  ownership: OWNERSHIP_KEY,
  /** Source GVK as `<Kind>.<group>/<version>`, written when a rule mutates the GVK. */
  originalGVK: 'cluster-registry.k8s.cisco.com/original-group-version-kind',
  /** On a Cluster: presence (any value) disables it. */
  clusterDisabled: 'cluster-registry.k8s.cisco.com/cluster-disabled',
  /** Presence on a source blocks creation of a copy; on a local copy it blocks updates. */
  resourceSyncDisabled: 'cluster-registry.k8s.cisco.com/resource-sync-disabled',
  /**
   * Ours: the full identity of the object a copy was made from, as written by source-identity.ts.
   * Upstream peers carry it along untouched; we overwrite it on every hop.
   */
  source: 'cluster-registry.k8s.cisco.com/source',
  /**
   * Ours, on the local Cluster (and so on every member's copy of it): which implementation runs
   * in that cluster. Upstream's controller writes none, which is how `status` tells a Go member.
   */
  implementation: 'cluster-registry.k8s.cisco.com/controller-implementation',
  /**
   * Ours, on this member's entry (Cluster) of another: who vouched for where it is reached
   * (`join`, or `admin` for an entry written by hand). Kept by every update of the entry here and
   * never passed on: what comes over a connection made from an entry no one here vouched for is
   * second-hand.
   */
  vouched: 'cluster-registry.k8s.cisco.com/vouched-by',
  /**
   * Ours, on a source: what its copies do when edited where they are (Revert, Report or Pause),
   * over its rule's spec.driftPolicy.
   */
  driftPolicy: 'cluster-registry.k8s.cisco.com/drift-policy',
  /** Ours, on a copy: the hash of what the sync last wrote, with the source version and rule generation it wrote from. */
  syncRecord: 'cluster-registry.k8s.cisco.com/sync-record',
  /** Ours, on a copy left drifted (Report, Pause): which fields differ, and who changed them. Removing it resumes a paused copy. */
  drifted: 'cluster-registry.k8s.cisco.com/drifted',
  /**
   * Ours, beside the mark: which fields drifted and what they held when marked, so that a removed
   * mark is told from a new edit, and a drifted field stays so whoever owns it now.
   */
  driftedFields: 'cluster-registry.k8s.cisco.com/drifted-fields',
  banzaiLastApplied: 'banzaicloud.com/last-applied',
  kubectlLastApplied: 'kubectl.kubernetes.io/last-applied-configuration',
  banzaiManagedComponent: 'banzaicloud.io/managed-component',
  banzaiRelatedTo: 'banzaicloud.io/related-to',
  serviceAccountName: 'kubernetes.io/service-account.name',
  istioRevision: 'istio.io/rev',
} as const;

/** Ours: hub-and-spoke sync (`HubSyncRule`, docs/hub-and-spoke.md). */
export const HUB_ANNOTATIONS = {
  /** "true" on the hub's object or the spoke's stops the sync of that object both ways. */
  paused: 'cluster-registry.k8s.cisco.com/sync-paused',
  /** Default keys of the generation echo written on the hub's object. */
  remoteGeneration: 'cluster-registry.k8s.cisco.com/synced-remote-generation',
  localGeneration: 'cluster-registry.k8s.cisco.com/synced-local-generation',
  /** On the spoke's object: the hub generation its content was last taken from. */
  appliedGeneration: 'cluster-registry.k8s.cisco.com/hub-generation',
  /** On the spoke's object: the label and annotation keys the hub set, so that a key the hub drops is removed and no other. */
  managedKeys: 'cluster-registry.k8s.cisco.com/hub-managed-keys',
  /** On a namespace the sync created: `<rule>/<namespace>/<name>` of the object it was created for. */
  namespaceOwner: 'cluster-registry.k8s.cisco.com/hub-sync-owner',
  /** On the spoke's object: the HubSyncRule that made it, the only one that may update or delete it. */
  rule: 'cluster-registry.k8s.cisco.com/hub-sync-rule',
  /** On the spoke's object: the hub object it was made from, `<namespace>/<name>/<uid>`; only that object's deletion deletes it. */
  origin: 'cluster-registry.k8s.cisco.com/hub-sync-origin',
  /** On the hub's object: the cluster ID of the spoke that reports its status; another spoke's report is refused. */
  reportedBy: 'cluster-registry.k8s.cisco.com/status-reported-by',
  /** On a hub Secret a spoke filled: the hash of the data it sent. */
  uploadedHash: 'cluster-registry.k8s.cisco.com/last-uploaded-hash',
  /** On a spoke's hub credentials Secret (written by `hub grant`): the hub's cluster ID, so `leave` finds what a departed hub left. */
  hubClusterID: 'cluster-registry.k8s.cisco.com/hub-cluster-id',
  /** On the hub's ServiceAccount of a spoke (written by `hub grant`): the spoke's cluster ID, so `leave` finds its grant. */
  spokeClusterID: 'cluster-registry.k8s.cisco.com/spoke-cluster-id',
} as const;

/** Ours: the credentials a spoke's HubSyncRules reach their hub with (`cluster-registry hub grant`). */
export const HUB_CREDENTIALS = {
  /**
   * The only type a HubSyncRule takes its credentials from: never the registry's reader
   * credentials (a rule naming a member's reader Secret would reach that member with our token).
   */
  type: 'k8s.cisco.com/cluster-registry-hub-credentials',
  kubeconfigKey: 'kubeconfig',
  /** On everything `hub grant` makes on the hub for a spoke (and on the spoke's Secret): the spoke's name. */
  spokeLabel: 'cluster-registry.k8s.cisco.com/spoke',
  /**
   * Hub credentials live in a namespace of their own, `<controller namespace>-hub` unless set:
   * every member reads the controller namespace's Secrets with the reader token, and a hub token
   * there would let any of them act as this spoke on its hub (and mint more such tokens).
   */
  namespaceSuffix: '-hub',
} as const;

/**
 * Removed from every desired copy: upstream's four describe the source's own apply history.
 * Ours: cluster-disabled is one member's decision about a peer, never a fact to pass on (copied,
 * a cluster that disables itself would be cut off by every peer, which then could not see it
 * enabled again).
 */
/** Records of what a client last applied: a second copy of the object, which no copy carries. */
export const LAST_APPLIED_ANNOTATIONS: readonly string[] = [ANNOTATIONS.banzaiLastApplied, ANNOTATIONS.kubectlLastApplied];

export const STRIPPED_ANNOTATIONS: readonly string[] = [
  ANNOTATIONS.banzaiManagedComponent,
  ANNOTATIONS.banzaiRelatedTo,
  ...LAST_APPLIED_ANNOTATIONS,
  ANNOTATIONS.clusterDisabled,
  // One member's word on its own entry of another: never a fact to pass on, nor for a relay to forge.
  ANNOTATIONS.vouched,
  // One member's record and marks of its own copy: a relay's copy is written, and marked, anew.
  ANNOTATIONS.syncRecord,
  ANNOTATIONS.drifted,
  ANNOTATIONS.driftedFields,
  // A hub sync's bookkeeping on a spoke's object: a peer's copy of it belongs to no hub sync there.
  HUB_ANNOTATIONS.rule,
  HUB_ANNOTATIONS.origin,
  HUB_ANNOTATIONS.appliedGeneration,
  HUB_ANNOTATIONS.managedKeys,
  HUB_ANNOTATIONS.namespaceOwner,
];

export const LABELS = {
  /** Same key as the ownership annotation; set only when absent (transitive owners are kept). */
  ownership: OWNERSHIP_KEY,
  originalName: 'cluster-registry.k8s.cisco.com/original-name',
  originalNamespace: 'cluster-registry.k8s.cisco.com/original-namespace',
  coreSyncResource: 'cluster-registry-controller.k8s.cisco.com/core-sync-resource',
  controllerAggregated: 'cluster-registry.k8s.cisco.com/controller-aggregated',
  readerAggregated: 'cluster-registry.k8s.cisco.com/reader-aggregated',
} as const;

export const LABEL_TRUE = 'true';

/** The value of ANNOTATIONS.implementation that this controller writes. */
export const OUR_IMPLEMENTATION = 'typescript';

export const CLUSTER_SECRET = {
  type: 'k8s.cisco.com/cluster-registry-secret',
  kubeconfigKey: 'kubeconfig',
} as const;

export const SERVICE_ACCOUNT_TOKEN_SECRET_TYPE = 'kubernetes.io/service-account-token';

export const CORE_FEATURE = {
  name: 'cluster-registry-core-resources',
  featureName: 'cluster-registry-core-resources-source',
} as const;

export const CORE_RULE_NAMES = {
  clusters: 'cluster-registry-core-resource-clusters-sink',
  clusterSecrets: 'cluster-registry-core-resource-cluster-secrets-sink',
  syncRules: 'cluster-registry-core-resource-syncrules-sink',
} as const;

export const WELL_KNOWN = {
  leaderElectionName: 'cluster-registry-leader-election',
  defaultNamespace: 'cluster-registry',
  readerServiceAccountName: 'cluster-registry-controller-reader',
  kubeSystemNamespace: 'kube-system',
  webhookPath: '/validate-cluster',
  webhookEntryName: 'cluster-validator.clusterregistry.k8s.cisco.com',
  webhookConfigurationName: 'cluster-validator-webhook',
  /** Controller names of the built-in per-peer reconcilers. */
  remoteClusterController: 'remote-cluster',
  remoteClusterFeatureController: 'remote-cluster-feature',
} as const;

/** Event recorder (component) names. */
export const RECORDERS = {
  clusters: 'clusters',
  clusterController: 'cluster-controller',
} as const;

export const CLUSTER_STATES = {
  ready: 'Ready',
  failed: 'Failed',
  disabled: 'Disabled',
  missingAuthInfo: 'MissingAuthInfo',
  invalidAuthInfo: 'InvalidAuthInfo',
} as const;

export const CLUSTER_TYPES = { local: 'Local', peer: 'Peer' } as const;

export const CONDITION_STATUS = { true: 'True', false: 'False', unknown: 'Unknown' } as const;

/** Cluster condition types with their True/False reasons and upstream's fixed messages. */
export const CLUSTER_CONDITIONS = {
  localCluster: {
    type: 'LocalCluster',
    true: { reason: 'ClusterIsLocal', message: 'cluster is local' },
    false: { reason: 'ClusterIsNotLocal', message: 'cluster is not local' },
  },
  localConflict: {
    type: 'LocalConflict',
    true: { reason: 'LocalClusterIsConflicting', message: 'multiple local clusters are defined' },
    false: { reason: 'LocalClusterIsNotConflicting', message: 'only one local cluster is defined' },
  },
  clusterMetadataSet: {
    type: 'ClusterMetadataSet',
    true: { reason: 'ClusterMetadataSet', message: 'cluster metadata is set' },
    // False carries the error text as its message.
    false: { reason: 'ClusterMetadataIsNotSet' },
  },
  ready: {
    type: 'Ready',
    true: { reason: 'ClusterIsReady', message: 'cluster is ready' },
    false: { reason: 'ClusterIsNotReady' },
  },
  clustersSynced: {
    type: 'ClustersSynced',
    true: { reason: 'ClustersAreSynced', message: 'all participating clusters are in sync' },
    false: { reason: 'ClustersAreNotSynced' },
  },
  /** Ours, on a peer's Cluster: whether our caches of the peer hold all it serves us, within their budget. */
  peerCacheWithinBudget: {
    type: 'PeerCacheWithinBudget',
    true: { reason: 'PeerCacheWithinBudget', message: 'our caches of the peer are within their budget' },
    false: { reason: 'PeerCacheBudgetExceeded' },
  },
  /** Ours, on the local Cluster where the About API is served: whether its ClusterProperty holds this cluster's ID. */
  clusterIDProperty: {
    type: 'ClusterIDPropertyConsistent',
    true: { reason: 'ClusterIDPropertyMatches', message: 'ClusterProperty cluster.clusterset.k8s.io holds this cluster ID' },
    false: { reason: 'ClusterIDPropertyDiffers' },
  },
} as const;

/** Ours: condition types and reasons of HubSyncRule status (docs/hub-and-spoke.md). */
export const HUB_RULE_CONDITIONS = {
  valid: { type: 'Valid', true: 'RuleIsValid', false: 'RuleIsInvalid' },
  connected: { type: 'Connected', true: 'HubConnected', false: 'HubNotConnected' },
  synced: { type: 'Synced', true: 'AllObjectsSynced', false: 'SyncErrors' },
  /** What the hub sends (our cache of it) and what the rule makes here, each within its budget. */
  withinBudget: { type: 'WithinBudget', true: 'WithinBudget', false: 'BudgetExceeded' },
} as const;

/** Reasons of the events recorded on a HubSyncRule. */
export const HUB_EVENT_REASONS = {
  invalid: 'InvalidHubSyncRule',
  /** The rule carries another cluster's copy marks: a peer's sync delivered it, and it never runs. */
  foreign: 'ForeignHubSyncRule',
  notConnected: 'HubNotConnected',
  notSynced: 'ObjectNotSynced',
  /** The hub token could not be renewed; the sync goes on with the current one while it lasts. */
  tokenNotRenewed: 'HubTokenNotRenewed',
  /** A namespace made for a hub object was kept when the object went: it holds more than it did. */
  namespaceKept: 'HubNamespaceKept',
  /** The hub serves more than our cache of it may hold, or the rule holds all the objects it may make here. */
  budgetExceeded: 'HubBudgetExceeded',
} as const;

/** Reasons of the events the sync controllers record on a ResourceSyncRule. */
export const SYNC_EVENT_REASONS = {
  reconciled: 'ObjectReconciled',
  notReconciled: 'ObjectNotReconciled',
  missingNamespace: 'ObjectNotReconciledMissingNamespace',
  rateLimited: 'ObjectReconcileRateLimited',
  /** Ours: a Namespace copy whose source went was kept (and is no longer a copy): it holds objects that are not going with it. */
  namespaceKept: 'NamespaceKept',
  /** Ours: a rule changed its scope so often that copies it no longer makes are left in place, unwatched until a restart. */
  copiesLeft: 'CopiesLeftUncollected',
  /** Ours, on a copy: it was edited here, not at its source, and the sync put it back (driftPolicy Revert). */
  driftReverted: 'CopyDriftReverted',
  /** Ours, on a copy: it was edited here, not at its source, and is left so (driftPolicy Report or Pause). */
  drifted: 'CopyDrifted',
  /** Ours, on a local object: a rule took it over as a copy (adoptionPolicy IfIdentical or Always); the message says what it held. */
  adopted: 'LocalObjectAdopted',
} as const;

/** Ours: condition types and reasons of ResourceSyncRule status (docs/api.md). */
export const RULE_CONDITIONS = {
  valid: {
    type: 'Valid',
    true: { reason: 'RuleIsValid', message: 'rule is valid' },
    false: { reason: 'RuleIsInvalid' },
  },
  permitted: {
    type: 'Permitted',
    true: { reason: 'AccessGranted', message: 'the rule may read its kind on every eligible peer and write it here' },
    false: { reason: 'AccessDenied' },
  },
  synced: {
    type: 'Synced',
    true: { reason: 'AllPeersSynced', message: 'all objects from all eligible peers are in sync' },
    false: { reason: 'SyncErrors' },
  },
} as const;

/** Ours: bounds that keep ResourceSyncRule status small (mirrored as maxItems/maxLength in the CRD). */
export const RULE_STATUS_LIMITS = {
  maxClusters: 256,
  maxErrorLength: 1024,
  maxConditions: 16,
} as const;

/** Overrides types upstream's overlay patcher accepts. */
export const OVERRIDE_TYPES = { replace: 'replace', remove: 'remove' } as const;

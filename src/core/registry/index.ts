// Pure decisions of the cluster registry: metadata, endpoints, conditions, group consistency,
// reader kubeconfigs, Cluster admission, and why a peer is not Ready.
export { clusterMetadata, detectDistribution, detectProvider, annotationsRead, type NodeInfo } from './metadata.ts';
export { endpointCA, normalizeServerAddress, pickEndpoint } from './endpoints.ts';
export { changedBeyondHeartbeats, conditionOf, removeCondition, setCondition, sortConditions, HEARTBEAT_REFRESH_MS, type ConditionInput, type TransitionEvent } from './conditions.ts';
export { groupSyncFindings, groupSyncProblems, type GroupSyncFindings } from './group-sync.ts';
export { CREDENTIALS_REFUSED, peerFailure, unreachableMessage, unusableSettings, type PeerFailure } from './peer-failure.ts';
export { REACH_FRESHNESS_MS, reachedIDs, registryReaches } from './reach.ts';
export { peerClusterStatus } from './peer-view.ts';
export { mergeCABundles, readerKubeconfig, type ReaderKubeconfigInput } from './reader-kubeconfig.ts';
export { admitCluster, rfc1123NameProblem, type AdmissionDecision } from './admission.ts';
export { byCodeUnit } from './order.ts';
export { runsOurs, upstreamMembersHint } from './controller-mark.ts';
export {
  CLUSTER_ID_PROPERTY,
  CLUSTER_MANAGER,
  CLUSTER_MANAGER_LABEL,
  CLUSTER_PROFILE,
  CLUSTER_PROPERTY,
  clusterIDMismatch,
  clusterIDProperty,
  clusterProfileChanged,
  clusterProfileFor,
  type ClusterProfile,
  type ClusterProfileStatus,
} from './inventory.ts';

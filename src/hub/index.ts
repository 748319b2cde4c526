// The hub-and-spoke sync as a library (`cluster-registry/hub`): run a HubSync for your own kind
// next to your own controllers, over clients and informer factories you may share with them.
// examples/library/hub-sync.ts shows the whole of it.
export { HubSync, hubWrites, type ClusterSide, type HubSyncCounts, type HubSyncOptions } from './sync.ts';
export { checkHubRule, defaultCredentialsSecret, type HubRule, type HubRuleCheck } from '../core/hub/index.ts';
export type { HubSyncRuleSpec } from '../core/api/types.ts';
export { CacheBudget, ClusterConfig, Discovery, InformerFactory, RestClient, createLogger, withoutManagedFields, type CacheLimits, type Logger } from '../kube/index.ts';

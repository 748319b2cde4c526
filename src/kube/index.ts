// The Kubernetes runtime: our client-go + controller-runtime.
export { ClusterConfig, type ConnectionSettings, type TlsSettings } from './config.ts';
export { KubeconfigError, parsePeerKubeconfig } from './kubeconfig.ts';
export {
  ResponseTooLargeError,
  RestClient,
  resourcePath,
  type AccessReviewer,
  type AccessReviewStatus,
  type CallOptions,
  type DeleteOptions,
  type ListOptions,
  type PatchOptions,
  type ObjectClient,
  type ObjectReader,
  type ObjectWriter,
  type PatchType,
  type PeerReader,
  type RawRequest,
  type RawResponse,
  type ResourceAttributes,
  type RestClientOptions,
  type WatchOptions,
  type WatchStream,
  type WriteOptions,
} from './rest.ts';
export {
  ApiError,
  WatchInactivityError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNetworkError,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
  type Status,
  type StatusCause,
  type StatusDetails,
} from './errors.ts';
export {
  apiVersionOf,
  deepCopy,
  objectKey,
  parseApiVersion,
  splitKey,
  type GroupVersionKind,
  type KubeList,
  type KubeObject,
  type ListMeta,
  type ObjectMeta,
  type OwnerReference,
  type ResourceRef,
  type WatchEvent,
  type WatchEventType,
} from './types.ts';
export { Discovery, NoKindMatchError, type ApiResource } from './discovery.ts';
export { Lru } from './lru.ts';
export { Store, NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from './store.ts';
export { BudgetExceededError, CacheBudget, chargedSize, type BudgetedCache, type CacheLimits } from './cache-budget.ts';
export { namespaceHoldsOnly, type NamespaceContents } from './namespace-contents.ts';
export { Informer, resourceName, watchWasHealthy, withoutManagedFields, type EventHandler, type InformerOptions } from './informer.ts';
export { InformerFactory, type InformerFactoryOptions, type InformerLease, type KindScope, type ResourceScope, type Selectors } from './informer-factory.ts';
export {
  WorkQueue,
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
  type WorkQueueOptions,
} from './workqueue.ts';
export { Controller, jsonKeyCodec, type ControllerOptions, type KeyCodec, type Predicates, type ReconcileResult, type Reconciler } from './controller.ts';
export { LeaderElector, LEASES, defaultIdentity, microTime, type Lease, type LeaderCallbacks, type LeaderElectionOptions, type LeaseClient } from './leader-election.ts';
export { EventRecorder, EventCorrelator, COMBINED_EVENT_PREFIX, EVENTS, EVENT_BURST, EVENT_REFILL_MS, type CoreEvent, type CorrelationResult, type EventRecorderOptions, type EventType, type ObjectReference } from './events.ts';
export { releaseIdleMemory, type MemoryReleaseOptions } from './memory-release.ts';
export { registry, counter, gauge, histogram, exponentialBuckets, collectProcessMetrics } from './metrics.ts';
export { HealthServer, type Check, type HealthServerOptions } from './health.ts';
export { createLogger, levelForVerbosity, redact, redactString, silentLogger, type LogFormat, type Logger, type LoggerOptions } from './log.ts';
export { Backoff, sleep, type BackoffOptions } from './backoff.ts';
export { GcraRateLimiter, type GcraOptions } from './gcra.ts';
export { holding, SliceDriver, TimeSlice, type Renders, type Steps } from './time-slice.ts';

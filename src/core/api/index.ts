// The clusterregistry.k8s.cisco.com/v1alpha1 API: types, keys and built-in objects.
export { cloneJSON } from './clone.ts';
export * from './keys.ts';
export type * from './types.ts';
export * from './gvk.ts';
export * from './source-identity.ts';
export { coreClusterFeature, coreResourceSyncRules } from './core-rules.ts';
export * from './resources.ts';
export { addressable, isPathSegment } from './names.ts';
export { isDisabled } from './cluster.ts';

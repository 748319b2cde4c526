// The API resources the registry reads and writes, by REST path parts (group, version, plural).
import { API_GROUP, API_VERSION, RESOURCES } from '../core/api/keys.ts';
import type { KubeObject, ResourceRef } from '../kube/index.ts';

export const CLUSTERS: ResourceRef = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.clusters };
export const CLUSTER_FEATURES: ResourceRef = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.clusterFeatures };
export const RESOURCE_SYNC_RULES: ResourceRef = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.resourceSyncRules };
export const SECRETS: ResourceRef = { group: '', version: 'v1', resource: 'secrets' };
export const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };
export const NODES: ResourceRef = { group: '', version: 'v1', resource: 'nodes' };

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** The value of a Secret's data key as text. */
export function secretText(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

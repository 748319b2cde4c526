// The API resources the product reads and writes, by REST path parts (group, version, plural).
import { API_GROUP, API_VERSION, RESOURCES } from './keys.ts';
import { gvkOf } from './gvk.ts';
import type { KubeObject } from './types.ts';

/** Structurally the runtime's ResourceRef: what a REST path is built from. */
export interface Resource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export const CLUSTERS: Resource = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.clusters };
export const CLUSTER_FEATURES: Resource = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.clusterFeatures };
export const RESOURCE_SYNC_RULES: Resource = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.resourceSyncRules };
export const HUB_SYNC_RULES: Resource = { group: API_GROUP, version: API_VERSION, resource: RESOURCES.hubSyncRules };
export const SECRETS: Resource = { group: '', version: 'v1', resource: 'secrets' };
export const NAMESPACES: Resource = { group: '', version: 'v1', resource: 'namespaces' };
export const NODES: Resource = { group: '', version: 'v1', resource: 'nodes' };
export const CUSTOM_RESOURCE_DEFINITIONS: Resource = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

/** The value of a Secret's data key as text. */
/** A core Secret, whatever its version. */
export function isSecret(o: KubeObject): boolean {
  const g = gvkOf(o);
  return g.group === '' && g.kind === 'Secret';
}

export function secretText(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

/** Whether a CustomResourceDefinition's resources are served (its Established condition). */
export function crdEstablished(crd: KubeObject): boolean {
  const conditions = (crd['status'] as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

// The shapes the runtime reads from any Kubernetes object, kept as raw JSON (no model classes, so
// no field is dropped or coerced).

// One definition of an object's shape for the whole product: the core's (metadata is optional
// there because the core also builds objects; everything the API server returns has it).
export type { KubeObject, ObjectMeta, OwnerReference } from '../core/api/types.ts';
import { cloneJSON } from '../core/api/clone.ts';
import type { KubeObject } from '../core/api/types.ts';

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** Group, version and plural resource name: what a REST path is built from. */
export interface ResourceRef {
  group: string;
  version: string;
  resource: string;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  /** A `metav1.Status` when `type` is ERROR. */
  object: T;
}

export function apiVersionOf(ref: { group: string; version: string }): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/** Splits `apps/v1` or `v1` into group and version. */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

/** The cache and queue key: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: { metadata?: { name?: string; namespace?: string } }): string {
  const { name = '', namespace } = obj.metadata ?? {};
  return namespace ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: undefined, name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Cached objects are frozen; callers that want to change one work on a copy. */
export function deepCopy<T>(obj: T): T {
  return cloneJSON(obj);
}

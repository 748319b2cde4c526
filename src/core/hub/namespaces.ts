// Namespaces a hub sync creates, and the only ones it may delete: a namespace is marked with the
// object it was created for, and goes with that object alone. A namespace someone else made, or
// made for another object, is never deleted; only the object in it is.
import { HUB_ANNOTATIONS } from '../api/keys.ts';
import type { KubeObject } from '../api/types.ts';
import type { Place } from './names.ts';

function ownerValue(rule: string, place: Place): string {
  return `${rule}/${place.namespace ?? ''}/${place.name}`;
}

/** The namespace to create for an object synced into a namespace that does not exist. */
export function namespaceFor(rule: string, place: Place & { namespace: string }): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: place.namespace, annotations: { [HUB_ANNOTATIONS.namespaceOwner]: ownerValue(rule, place) } } };
}

/** What goes when the hub object behind `place` is gone: its namespace, if created for it, or only the object. */
export function removalOf(rule: string, place: Place, namespace: KubeObject | undefined): 'namespace' | 'object' {
  return place.namespace !== undefined && namespace?.metadata.annotations?.[HUB_ANNOTATIONS.namespaceOwner] === ownerValue(rule, place) ? 'namespace' : 'object';
}

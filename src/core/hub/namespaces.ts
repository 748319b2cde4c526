// Namespaces a hub sync creates, and the only ones it may delete: a namespace is marked with the
// object it was created for, and may go with that object when nothing else of the rule is left in
// it (the runtime then also makes sure it holds nothing else at all). A namespace someone else
// made, or made for another object, is never deleted; only the object in it is.
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

/**
 * What goes when the hub object behind `place` is gone: its namespace, if created for it and no
 * other object of the rule lives there (they came into a namespace that was there), or only the object.
 */
export function removalOf(rule: string, place: Place, namespace: KubeObject | undefined, othersOfRule: number): 'namespace' | 'object' {
  const createdForIt = place.namespace !== undefined && namespace?.metadata.annotations?.[HUB_ANNOTATIONS.namespaceOwner] === ownerValue(rule, place);
  return createdForIt && othersOfRule === 0 ? 'namespace' : 'object';
}

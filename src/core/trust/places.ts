// Where a peer's rule or a hub may put what it delivers. The system namespaces hold nothing of
// anyone else's; the controller's own namespace holds what the controller, its webhook, its
// leases and its Helm release run on, so there the table is an allow-list: plain Secrets (the
// quickstart syncs one there) and the registry's credentials, under names none of those use.

import { CLUSTER_SECRET, HUB_CREDENTIALS, SERVICE_ACCOUNT_TOKEN_SECRET_TYPE } from '../api/keys.ts';
import type { Channel } from './kinds.ts';

export const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set(['kube-system', 'kube-public', 'kube-node-lease']);

/** An object by its place. */
export interface ObjectPlace {
  readonly group: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * How Helm finds a release's state (Secrets, or ConfigMaps with its configmap driver) in the
 * release's namespace, and acts on it at the next upgrade or rollback: by these labels (Helm 3,
 * and Tiller before it), under names of this prefix.
 */
const HELM_RELEASE_PREFIX = 'sh.helm.release.';
const HELM_OWNER_LABELS: readonly (readonly [string, string])[] = [
  ['owner', 'helm'],
  ['OWNER', 'TILLER'],
];

/** Secret types never synced, wherever they would land. */
const REFUSED_SECRET_TYPES: ReadonlyMap<string, string> = new Map([
  [SERVICE_ACCOUNT_TOKEN_SECRET_TYPE, 'they would make this cluster issue credentials'],
  ['bootstrap.kubernetes.io/token', 'they would make this cluster accept credentials'],
  ['helm.sh/release.v1', 'they hold a Helm release’s state, which Helm acts on'],
  [HUB_CREDENTIALS.type, 'they would name a hub this cluster syncs from'],
]);

/** The type Kubernetes gives a Secret that names none. */
const OPAQUE = 'Opaque';

export interface PlaceFacts {
  /** The controller namespace. */
  readonly namespace: string;
  /** Namespaces of ours nothing is ever delivered into (the hub credentials'). */
  readonly closedNamespaces: readonly string[];
  /** What the controller keeps for itself here (its webhook's serving Secret). */
  readonly reserved: readonly ObjectPlace[];
}

/** Why the object may not be put at its place, or undefined when it may. */
export function placeProblem(place: ObjectPlace, secretType: string | undefined, labels: Readonly<Record<string, string>>, channel: Channel, f: PlaceFacts): string | undefined {
  if (SYSTEM_NAMESPACES.has(place.namespace) || f.closedNamespaces.includes(place.namespace)) return `nothing is synced into namespace ${place.namespace}`;
  // A Namespace copy of one of those would be deleted with its source, and everything in it with it.
  if (place.group === '' && place.kind === 'Namespace' && (SYSTEM_NAMESPACES.has(place.name) || place.name === f.namespace || f.closedNamespaces.includes(place.name))) {
    return `namespace ${place.name} is never a copy`;
  }
  if (f.reserved.some((r) => r.group === place.group && r.kind === place.kind && r.namespace === place.namespace && r.name === place.name)) {
    return `${place.kind} ${place.namespace}/${place.name} is kept by this controller itself and is never synced over`;
  }
  const secret = place.group === '' && place.kind === 'Secret';
  if (secret || (place.group === '' && place.kind === 'ConfigMap')) {
    if (place.name.startsWith(HELM_RELEASE_PREFIX)) return `${place.name} is a name Helm keeps a release's state under`;
    const helm = HELM_OWNER_LABELS.find(([k, v]) => labels[k] === v);
    if (helm) return `objects labelled ${helm[0]}=${helm[1]} are where Helm keeps a release's state`;
  }
  const type = secretType || OPAQUE;
  if (secret) {
    const why = REFUSED_SECRET_TYPES.get(type);
    if (why) return `Secrets of type ${type} are never synced: ${why}`;
    if (type === CLUSTER_SECRET.type && channel !== 'registry') return 'registry credentials are passed on only by the registry’s own rules';
  }
  if (place.namespace !== f.namespace || place.namespace === '') return undefined;
  const here = `into the controller namespace ${f.namespace}`;
  if (channel === 'hub') return `a hub puts nothing ${here}`;
  if (!secret) return `only Secrets are synced ${here}`;
  return type === OPAQUE || type === CLUSTER_SECRET.type ? undefined : `only Opaque Secrets are synced ${here} (this one is of type ${type})`;
}

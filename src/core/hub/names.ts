// Where a hub object lands on a spoke, by naming convention: one hub addresses many spokes by
// giving each its own suffix, so a spoke takes only the hub objects (or namespaces) carrying its
// suffix, strips it, and may prefix the namespace. Hub names are input from another cluster: a
// mapped name that is not a valid Kubernetes name is refused, never truncated or repaired.
import { rfc1123NameProblem } from '../registry/admission.ts';

export interface HubNames {
  /** Only hub objects whose name ends with it are synced; it is stripped locally. */
  suffix?: string;
  /** Only hub namespaces ending with it are synced; it is stripped locally. */
  namespaceSuffix?: string;
  /** Put before the (stripped) namespace locally. */
  namespacePrefix?: string;
}

export interface Place {
  /** Absent for cluster-scoped objects. */
  namespace?: string;
  name: string;
}

export type Mapping = { place: Place } | { refused: string };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether `name` may name a namespace (a DNS label). */
export function isNamespaceName(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

function stripSuffix(value: string, suffix: string | undefined): string | undefined {
  if (!suffix) return value;
  return value.endsWith(suffix) && value.length > suffix.length ? value.slice(0, -suffix.length) : undefined;
}

/**
 * The spoke's place for a hub object: undefined when the object is not this spoke's (its name or
 * namespace lacks the suffix), refused when what the mapping gives is no valid name.
 */
export function localPlace(hub: Place, names: HubNames): Mapping | undefined {
  const name = stripSuffix(hub.name, names.suffix);
  if (name === undefined) return undefined;
  if (rfc1123NameProblem(name) !== undefined) return { refused: `name "${name}" (from "${hub.name}") is not a valid object name` };
  if (hub.namespace === undefined) return { place: { name } };
  const stripped = stripSuffix(hub.namespace, names.namespaceSuffix);
  if (stripped === undefined) return undefined;
  const namespace = `${names.namespacePrefix ?? ''}${stripped}`;
  if (!isNamespaceName(namespace)) return { refused: `namespace "${namespace}" (from "${hub.namespace}") is not a valid namespace name` };
  return { place: { namespace, name } };
}

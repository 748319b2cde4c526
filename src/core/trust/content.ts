// What a synced object may not say, whatever its kind is allowed: the few fields through which
// one object of a namespace takes traffic or admission decisions from every other namespace.

import { gvkOf } from '../api/gvk.ts';
import type { KubeObject } from '../api/types.ts';

/** The label that ties an EndpointSlice to the Service of that name, whose traffic it then receives. */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Pod Security Admission's labels on a Namespace: how its pods are admitted. */
const POD_SECURITY_PREFIX = 'pod-security.kubernetes.io/';

type Fields = Record<string, unknown>;

function field(o: KubeObject, ...path: string[]): unknown {
  let v: unknown = o;
  for (const p of path) v = typeof v === 'object' && v !== null ? (v as Fields)[p] : undefined;
  return v;
}

const nonEmpty = (v: unknown): boolean => Array.isArray(v) && v.length > 0;

/** Why `o` may not be held for what it says, or undefined. */
export function contentProblem(o: KubeObject): string | undefined {
  const g = gvkOf(o);
  if (g.group === '' && g.kind === 'Service') {
    // kube-proxy sends traffic for these addresses, from every namespace, to the Service.
    if (nonEmpty(field(o, 'spec', 'externalIPs'))) return 'a Service with spec.externalIPs would take the traffic to those addresses from every namespace';
    if (nonEmpty(field(o, 'status', 'loadBalancer', 'ingress'))) return "a Service's status.loadBalancer.ingress would take the traffic to those addresses from every namespace";
  }
  if (g.group === 'discovery.k8s.io' && g.kind === 'EndpointSlice' && o.metadata.labels?.[SERVICE_NAME_LABEL] !== undefined) {
    return `an EndpointSlice labelled ${SERVICE_NAME_LABEL} would receive the traffic of that Service here`;
  }
  if (g.group === '' && g.kind === 'Namespace' && Object.keys(o.metadata.labels ?? {}).some((k) => k.startsWith(POD_SECURITY_PREFIX))) {
    return `a Namespace's ${POD_SECURITY_PREFIX}* labels decide how pods are admitted here (a rule may remove them with mutations.labels.remove)`;
  }
  return undefined;
}

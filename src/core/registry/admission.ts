// The Cluster validating webhook's decision, as upstream's but with the race closed: we know our
// own cluster ID, so a second Cluster claiming it is refused even before either has been
// marked Local by the reconciler.
import type { Cluster } from '../api/types.ts';

export type AdmissionDecision = { allowed: true } | { allowed: false; code: number; message: string };

export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

export function rfc1123NameProblem(name: string): string | undefined {
  if (name.length === 0) return 'name must not be empty';
  if (name.length > DNS1123_SUBDOMAIN_MAX_LENGTH) return `name "${name}" is longer than ${DNS1123_SUBDOMAIN_MAX_LENGTH} characters`;
  if (!DNS1123_SUBDOMAIN.test(name)) {
    return `name "${name}" is not an RFC 1123 subdomain (lower-case alphanumerics, '-' and '.', starting and ending with an alphanumeric)`;
  }
  return undefined;
}

/**
 * Decides a CREATE or UPDATE of `incoming`, given every stored Cluster and the local cluster ID
 * (kube-system UID).
 */
export function admitCluster(incoming: Cluster, existing: readonly Cluster[], localClusterID: string): AdmissionDecision {
  const name = incoming.metadata?.name ?? '';
  const nameProblem = rfc1123NameProblem(name);
  if (nameProblem) return { allowed: false, code: 422, message: `invalid Cluster: ${nameProblem}` };
  if (!incoming.spec?.clusterID) return { allowed: false, code: 422, message: 'invalid Cluster: spec.clusterID is required' };
  if (incoming.spec.clusterID !== localClusterID) return { allowed: true };
  const other = existing.find((c) => c.spec?.clusterID === localClusterID && c.metadata?.name !== name);
  if (other) {
    return {
      allowed: false,
      code: 409,
      message: `validating unique local cluster CR failed: a local cluster CR with name ${other.metadata?.name ?? ''} already exists with the same clusterID ${localClusterID}`,
    };
  }
  return { allowed: true };
}

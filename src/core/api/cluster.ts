// What a Cluster's own metadata says of it, read alike by the controller and the tools.
import { ANNOTATIONS } from './keys.ts';
import type { Cluster } from './types.ts';

/** Whether the Cluster carries the cluster-disabled annotation (with any value). */
export function isDisabled(c: Pick<Cluster, 'metadata'>): boolean {
  return ANNOTATIONS.clusterDisabled in (c.metadata.annotations ?? {});
}

// --provision-local-cluster: the Cluster describing this cluster, created when absent — by the
// leader only, retried until it succeeds, and without touching the webhook's failure policy
// (upstream set it to Ignore first, letting a duplicate local Cluster slip through): our webhook
// admits the first Cluster for the local ID.
import { ANNOTATIONS, API_GROUP_VERSION, OUR_IMPLEMENTATION, KINDS } from '../core/api/keys.ts';
import type { Cluster } from '../core/api/types.ts';
import { isAlreadyExists, isNotFound, type ObjectClient } from '../kube/index.ts';
import { CLUSTERS } from '../core/api/resources.ts';

export interface ProvisionInput {
  readonly name: string;
  readonly clusterID: string;
  readonly namespace: string;
  readonly apiServerEndpointAddress: string;
}

export function provisionedCluster(i: ProvisionInput): Cluster {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KINDS.cluster,
    // Marked from the start, so that a copy swapped by hand right away carries the mark too.
    metadata: { name: i.name, annotations: { [ANNOTATIONS.implementation]: OUR_IMPLEMENTATION } },
    spec: {
      clusterID: i.clusterID,
      authInfo: { secretRef: { name: i.name, namespace: i.namespace } },
      ...(i.apiServerEndpointAddress ? { kubernetesApiEndpoints: [{ serverAddress: i.apiServerEndpointAddress }] } : {}),
    },
  };
}

/** Creates the local Cluster unless one of that name exists; returns whether it created it. */
export async function provisionLocalCluster(rest: ObjectClient, input: ProvisionInput, signal: AbortSignal): Promise<boolean> {
  try {
    await rest.get(CLUSTERS, undefined, input.name, { signal });
    return false;
  } catch (err) {
    // Only a confirmed absence creates: any other error is retried by the caller.
    if (!isNotFound(err)) throw err;
  }
  try {
    await rest.create(CLUSTERS, undefined, provisionedCluster(input), { signal });
    return true;
  } catch (err) {
    if (isAlreadyExists(err)) return false;
    throw err;
  }
}

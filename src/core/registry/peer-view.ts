// What is read of a peer's Clusters, and so all our caches of a peer keep of them: a peer holds a
// Cluster per member, each with a status its controller writes, so a member caching the whole of
// every peer's would hold the group squared.
import type { ClusterStatus } from '../api/types.ts';
import { newestHeartbeat } from './reach.ts';

/**
 * Of a peer's Cluster status: the state, by which the peer's view of the group is judged (its
 * ClustersSynced), and the newest heartbeat, by which it vouches for reaching that cluster (one
 * condition carrying it).
 */
export function peerClusterStatus(status: ClusterStatus): ClusterStatus {
  const heartbeat = newestHeartbeat(status);
  const newest = Number.isFinite(heartbeat) ? status.conditions?.find((x) => Date.parse(x.lastHeartbeatTime ?? '') === heartbeat) : undefined;
  return {
    ...(status.state !== undefined ? { state: status.state } : {}),
    ...(newest ? { conditions: [{ type: newest.type, status: newest.status, lastHeartbeatTime: newest.lastHeartbeatTime }] } : {}),
  };
}

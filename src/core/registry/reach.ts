// Whether a peer vouches for another cluster: the peer's registry says it reached it lately.
import { CLUSTER_STATES } from '../api/index.ts';
import type { Cluster, ClusterStatus } from '../api/types.ts';

/**
 * How long a peer's word that it reached a cluster holds: our controllers renew the Ready
 * heartbeat every minute; a stale one (a stopped controller, or an implementation that never
 * refreshes) vouches for nothing.
 */
export const REACH_FRESHNESS_MS = 10 * 60_000;

/**
 * Whether the registry of a peer (its Clusters) shows the cluster with that ID Ready, lately, and
 * (when we lost that cluster ourselves, at `lostAt`) more lately than we lost it: its word from
 * before our loss is no news, since it has not yet seen what we saw, and the cluster may be dead.
 */
export function registryReaches(clusters: readonly Cluster[], clusterID: string, lostAt: number, now: number): boolean {
  return clusters.some((c) => c.spec?.clusterID === clusterID && shownReached(c, lostAt, now));
}

/** The IDs `registryReaches` holds for, all in one pass over the registry. */
export function reachedIDs(clusters: readonly Cluster[], lostAt: number, now: number): Set<string> {
  const ids = new Set<string>();
  for (const c of clusters) {
    const id = c.spec?.clusterID;
    if (id !== undefined && !ids.has(id) && shownReached(c, lostAt, now)) ids.add(id);
  }
  return ids;
}

function shownReached(c: Cluster, lostAt: number, now: number): boolean {
  if (c.status?.state !== CLUSTER_STATES.ready) return false;
  const heartbeat = newestHeartbeat(c.status);
  return now - heartbeat < REACH_FRESHNESS_MS && heartbeat > lostAt;
}

/**
 * The newest heartbeat of any condition: upstream's controller at times writes the state Ready
 * without a Ready condition, and renews whichever conditions it set last. A loop, not a spread: a
 * peer decides how many conditions there are.
 */
export function newestHeartbeat(status: ClusterStatus): number {
  let heartbeat = -Infinity;
  for (const x of status.conditions ?? []) {
    const t = Date.parse(x.lastHeartbeatTime ?? '');
    if (t > heartbeat) heartbeat = t;
  }
  return heartbeat;
}

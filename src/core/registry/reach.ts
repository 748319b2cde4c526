// Whether a peer vouches for another cluster: the peer's registry says it reached it lately.
import { CLUSTER_STATES } from '../api/index.ts';
import type { Cluster } from '../api/types.ts';

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
  return clusters.some((c) => {
    if (c.spec?.clusterID !== clusterID || c.status?.state !== CLUSTER_STATES.ready) return false;
    // The newest heartbeat of any condition: upstream's controller at times writes the state
    // Ready without a Ready condition, and renews whichever conditions it set last.
    const heartbeat = Math.max(...(c.status.conditions ?? []).map((x) => Date.parse(x.lastHeartbeatTime ?? '')).filter((t) => !Number.isNaN(t)));
    return now - heartbeat < REACH_FRESHNESS_MS && heartbeat > lostAt;
  });
}

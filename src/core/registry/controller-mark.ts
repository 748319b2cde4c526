// Which members run our controller: ours marks its local Cluster, and the mark travels with the
// Cluster to every member; upstream's Go controller writes none. What a group needs where some
// members run upstream's.
import { ANNOTATIONS, OUR_IMPLEMENTATION } from '../api/keys.ts';
import type { Cluster } from '../api/types.ts';

export function runsOurs(c: Cluster): boolean {
  return c.metadata.annotations?.[ANNOTATIONS.implementation] === OUR_IMPLEMENTATION;
}

/** The advice for a group whose `clusters` include members that run another controller; undefined when none does. */
export function upstreamMembersHint(clusters: readonly Cluster[]): string | undefined {
  const members = [...new Set(clusters.filter((c) => !runsOurs(c)).map((c) => c.metadata.name ?? ''))].sort();
  if (members.length === 0) return undefined;
  return (
    `${members.join(', ')} run${members.length === 1 ? 's' : ''} another controller (upstream's Go controller, or ours before it marked its Cluster). ` +
    "Upstream's controller reads Secrets in the whole cluster: apply deploy/compat/reader-for-upstream-peers.yaml on every member of ours that it reads. " +
    'Swapping by hand with such a member, swap the Secret before the Cluster, and give the members of ours whose entry it holds by hand a long --reader-token-ttl (docs/compatibility.md).'
  );
}

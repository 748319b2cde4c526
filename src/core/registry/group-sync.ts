// The ClustersSynced check: a peer is in sync with us when it knows every Cluster we know, under
// the same name, and sees each of them Ready. A peer's Clusters are input from that peer: one
// without spec is simply no match.
import type { Cluster } from '../api/types.ts';
import { byCodeUnit } from './order.ts';

/** Every violation, in a stable order; empty means in sync. */
export function groupSyncProblems(local: readonly Cluster[], peer: readonly Cluster[]): string[] {
  const peerByID = new Map(peer.map((c) => [c.spec?.clusterID, c]));
  const problems: string[] = [];
  const sorted = [...local].sort((a, b) => byCodeUnit(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  for (const c of sorted) {
    const name = c.metadata?.name ?? '';
    const remote = peerByID.get(c.spec?.clusterID);
    if (!remote) {
      problems.push(`cluster '${name}' not found at remote side`);
      continue;
    }
    const remoteName = remote.metadata?.name ?? '';
    if (remoteName !== name) problems.push(`cluster name mismatch ${name} != ${remoteName}`);
    if (remote.status?.state !== 'Ready') problems.push(`cluster '${name}' status is not ready`);
  }
  return problems;
}

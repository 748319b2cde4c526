// The ClustersSynced check: a peer is in sync with us when it knows every Cluster we know, under
// the same name, and sees each of them Ready. A peer's Clusters are input from that peer: one
// without spec is simply no match. Its message is also read back (`groupSyncFindings`): it is the
// one record, in our cluster, of how a peer sees the rest of the group.
import type { Cluster } from '../api/types.ts';
import { byCodeUnit } from './order.ts';

// Upstream's wording. Its controller names the peer's Cluster where it is not Ready, and ours
// names ours (as it always has): `groupSyncFindings` tells the two apart.
const notFound = (name: string) => `cluster '${name}' not found at remote side`;
const renamed = (name: string, remoteName: string) => `cluster name mismatch ${name} != ${remoteName}`;
const notReady = (name: string) => `cluster '${name}' status is not ready`;

/** Every violation, in a stable order; empty means in sync. */
export function groupSyncProblems(local: readonly Cluster[], peer: readonly Cluster[]): string[] {
  const peerByID = new Map(peer.map((c) => [c.spec?.clusterID, c]));
  const problems: string[] = [];
  const sorted = [...local].sort((a, b) => byCodeUnit(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  for (const c of sorted) {
    const name = c.metadata?.name ?? '';
    const remote = peerByID.get(c.spec?.clusterID);
    if (!remote) {
      problems.push(notFound(name));
      continue;
    }
    const remoteName = remote.metadata?.name ?? '';
    if (remoteName !== name) problems.push(renamed(name, remoteName));
    if (remote.status?.state !== 'Ready') problems.push(notReady(name));
  }
  return problems;
}

/** What a ClustersSynced message says of the peer's view of each cluster, by our names. */
export interface GroupSyncFindings {
  /** The peer has no Cluster with its ID. */
  readonly missing: ReadonlySet<string>;
  /** The peer's name for it, where that differs. */
  readonly renamed: ReadonlyMap<string, string>;
  /** The peer's Cluster of it is not Ready. */
  readonly notReady: ReadonlySet<string>;
}

// Names are RFC 1123 subdomains (no quote, comma, semicolon or space), so each problem is found
// whatever joins them (", " ours, "; " upstream's). The peer's name is the peer's text.
const FINDING = /cluster '([a-z0-9.-]+)' (not found at remote side|status is not ready)|cluster name mismatch ([a-z0-9.-]+) != ([^\s,;]*)/g;
const UPSTREAM_JOIN = '; ';

export function groupSyncFindings(message: string): GroupSyncFindings {
  const missing = new Set<string>();
  const renamedAs = new Map<string, string>();
  const notReadyNames: string[] = [];
  for (const m of message.matchAll(FINDING)) {
    if (m[1] === undefined) renamedAs.set(m[3] ?? '', m[4] ?? '');
    else if (m[2] === 'status is not ready') notReadyNames.push(m[1]);
    else missing.add(m[1]);
  }
  // Upstream's not Ready names the peer's Cluster. That differs from ours only where the message
  // also reports the rename, so it has two problems or more, and their join says whose it is.
  const ours = new Map(message.includes(UPSTREAM_JOIN) ? [...renamedAs].map(([name, remoteName]) => [remoteName, name]) : []);
  return { missing, renamed: renamedAs, notReady: new Set(notReadyNames.map((n) => ours.get(n) ?? n)) };
}

// The group as a picture: its members, and each member's view of each other one as a directed
// edge with a state, so that a partition or a one-sided failure shows at once.
//
// Everything comes from one cluster's Clusters (the viewer's), and so from two kinds of record:
// - the viewer's own entries: its view of every peer, first-hand (state, message);
// - on its entry of each peer P, the ClustersSynced condition its controller writes each time P's
//   Clusters change: which members P has no entry of, knows by another name, or does not see
//   Ready. That is P's view as the viewer's controller last read it over its verified, read-only
//   connection to P; it says that P does not see a member Ready, not why (that is in P).
// Cluster status is not synced between members, and the dashboard reads nothing but the viewer's
// cluster with its user's kubeconfig (never the group's reader credentials): a peer the viewer
// cannot read has edges `Unknown` here, with the reason.
import { ANNOTATIONS, CLUSTER_CONDITIONS, CLUSTER_STATES, CLUSTER_TYPES } from '../core/api/keys.ts';
import { cut } from '../core/api/text.ts';
import type { Cluster } from '../core/api/types.ts';
import { byCodeUnit, groupSyncFindings, peerFailure } from '../core/registry/index.ts';
import { MAX_TEXT } from './group-view.ts';

export const VIEW_STATES = {
  ready: 'Ready',
  unreachable: 'Unreachable',
  /** Missing or unusable credentials, or the peer refuses them. */
  credentials: 'CredentialsInvalid',
  /** The member has no entry of the other (the group's Clusters have not reached it), or another name for it. */
  notSynced: 'NotSynced',
  /** Not Ready for another reason (a wrong cluster ID, an unlistable registry), or a peer's view whose reason is not known here. */
  notReady: 'NotReady',
  disabled: 'Disabled',
  /** Not observable from the viewer, or not reported yet. */
  unknown: 'Unknown',
} as const;

export type ViewState = (typeof VIEW_STATES)[keyof typeof VIEW_STATES];

export interface GraphNode {
  name: string;
  /** The viewer's own Cluster: its edges are first-hand. */
  local: boolean;
}

export interface GraphEdge {
  from: string;
  to: string;
  state: ViewState;
  /** Why it is not Ready ('' when it is): the entry's message, or where the state comes from. */
  reason: string;
}

export interface GroupGraph {
  nodes: GraphNode[];
  /** Every ordered pair of distinct members, by `from` then `to`. */
  edges: GraphEdge[];
  /** Why nothing is drawn for a group larger than the picture holds; '' otherwise. */
  omitted: string;
}

/** Past this many members the picture (n·(n−1) edges, each frame of the page) is neither readable nor small. */
export const MAX_GRAPH_MEMBERS = 40;

type View = Pick<GraphEdge, 'state' | 'reason'>;

const name = (c: Cluster) => c.metadata.name ?? '';
const disabled = (c: Cluster) => !!c.metadata.annotations && ANNOTATIONS.clusterDisabled in c.metadata.annotations;
const conditionOf = (c: Cluster, type: string) => c.status?.conditions?.find((x) => x.type === type);

/** The viewer's view of a peer, from its entry of it. */
function firstHand(peer: Cluster): View {
  const state = peer.status?.state;
  const message = cut(peer.status?.message ?? '', MAX_TEXT);
  if (disabled(peer) || state === CLUSTER_STATES.disabled) return { state: VIEW_STATES.disabled, reason: 'disabled here (cluster-disabled annotation)' };
  if (state === CLUSTER_STATES.ready) return { state: VIEW_STATES.ready, reason: '' };
  if (!state) return { state: VIEW_STATES.unknown, reason: 'not checked yet' };
  const failure = peerFailure(state, peer.status?.message ?? '');
  const viewState = failure === 'credentials' ? VIEW_STATES.credentials : failure === 'unreachable' ? VIEW_STATES.unreachable : VIEW_STATES.notReady;
  return { state: viewState, reason: message || state };
}

/** A peer's view of the others, as the viewer's controller recorded it on its entry of the peer. */
function secondHand(viewer: string, peer: Cluster): (to: Cluster) => View {
  const from = name(peer);
  const reach = firstHand(peer).state;
  if (reach !== VIEW_STATES.ready) {
    const reason = `not observable here: ${viewer} does not read ${from}'s registry (${reach})`;
    return () => ({ state: VIEW_STATES.unknown, reason });
  }
  const synced = conditionOf(peer, CLUSTER_CONDITIONS.clustersSynced.type);
  if (synced?.status !== 'True' && synced?.status !== 'False') {
    const reason = `not observable here yet: ${viewer} has not compared ${from}'s registry with its own`;
    return () => ({ state: VIEW_STATES.unknown, reason });
  }
  const findings = groupSyncFindings(synced.status === 'False' ? (synced.message ?? '') : '');
  return (c) => {
    const to = name(c);
    if (findings.missing.has(to)) return { state: VIEW_STATES.notSynced, reason: `${from} has no Cluster of ${to}` };
    const renamed = findings.renamed.get(to);
    if (renamed !== undefined) return { state: VIEW_STATES.notSynced, reason: `${from} knows ${to} as ${cut(renamed, 253)}` };
    if (findings.notReady.has(to)) return { state: VIEW_STATES.notReady, reason: `${from}'s Cluster of ${to} is not Ready there (its status there says why)` };
    return { state: VIEW_STATES.ready, reason: '' };
  };
}

const NO_LOCAL: View = { state: VIEW_STATES.unknown, reason: 'no Cluster here is marked Local yet: the controller has not reported on this cluster' };

export function groupGraph(clusters: readonly Cluster[]): GroupGraph {
  if (clusters.length > MAX_GRAPH_MEMBERS) return { nodes: [], edges: [], omitted: `${clusters.length} members: the picture is drawn for at most ${MAX_GRAPH_MEMBERS}` };
  const sorted = [...clusters].sort((a, b) => byCodeUnit(name(a), name(b)));
  // Of several Clusters claiming to be this one (a conflict their status reports), the first speaks.
  const local = sorted.find((c) => c.status?.type === CLUSTER_TYPES.local);
  const edges: GraphEdge[] = [];
  for (const from of sorted) {
    const view = !local ? () => NO_LOCAL : from === local ? firstHand : secondHand(name(local), from);
    for (const to of sorted) if (to !== from) edges.push({ from: name(from), to: name(to), ...view(to) });
  }
  return { nodes: sorted.map((c) => ({ name: name(c), local: c === local })), edges, omitted: '' };
}

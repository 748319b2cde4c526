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
//
// It goes to every page on every change, so it is kept small: only the views that are not Ready
// are sent, each reason cut short, all of it within a byte budget, and past MAX_GRAPH_MEMBERS only
// the viewer's views whole and a bounded number of the others' views that are not Ready.
import { CLUSTER_CONDITIONS, CLUSTER_STATES, CLUSTER_TYPES, isDisabled } from '../core/api/index.ts';
import { cut } from '../core/api/text.ts';
import type { Cluster } from '../core/api/types.ts';
import { byCodeUnit, groupSyncFindings, peerFailure } from '../core/registry/index.ts';
import { condition } from './group-view.ts';

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
  /**
   * All its views that are not Ready are in `edges`, so its views of the other members are Ready.
   * False when some were left out (`omitted` says why): then only its views in `edges` are known.
   */
  allViews: boolean;
}

export interface GraphEdge {
  from: string;
  to: string;
  state: ViewState;
  /** Why it is not Ready: the entry's message, or where the state comes from. */
  reason: string;
}

export interface GroupGraph {
  nodes: GraphNode[];
  /** The views that are not Ready, by `from` then `to`. */
  edges: GraphEdge[];
  /** What the picture leaves out, and why; '' when nothing. */
  omitted: string;
}

/** Past this many members, n·(n−1) arrows are neither readable nor small: the others' Ready views are left out. */
export const MAX_GRAPH_MEMBERS = 40;
/** Past MAX_GRAPH_MEMBERS, at most this many of the other members' views that are not Ready are sent. */
export const MAX_OTHERS_VIEWS = 200;
/** A reason is a tooltip and a table cell; the Members table shows an entry's message whole. */
export const MAX_REASON = 256;
/** The picture's share of each frame, in bytes of JSON. */
export const MAX_GRAPH_BYTES = 256 * 1024;
/** Of MAX_GRAPH_BYTES, what the object around the nodes and edges takes, `omitted` included. */
const ENVELOPE_BYTES = 1024;

type View = Pick<GraphEdge, 'state' | 'reason'>;
/** A member's views of the others: the same one of every other member, or those not Ready by name (the rest are Ready). */
type Views = { every: View } | { notReady: ReadonlyMap<string, View> };

const READY: View = { state: VIEW_STATES.ready, reason: '' };
const name = (c: Cluster) => c.metadata.name ?? '';

/** The viewer's view of a peer, from its entry of it. */
function firstHand(peer: Cluster): View {
  const state = peer.status?.state;
  const message = peer.status?.message ?? '';
  if (isDisabled(peer) || state === CLUSTER_STATES.disabled) return { state: VIEW_STATES.disabled, reason: 'disabled here (cluster-disabled annotation)' };
  if (state === CLUSTER_STATES.ready) return READY;
  if (!state) return { state: VIEW_STATES.unknown, reason: 'not checked yet' };
  const failure = peerFailure(state, message);
  const viewState = failure === 'credentials' ? VIEW_STATES.credentials : failure === 'unreachable' ? VIEW_STATES.unreachable : VIEW_STATES.notReady;
  return { state: viewState, reason: message || state };
}

/** A peer's view of the others, as the viewer's controller recorded it on its entry of the peer, which the viewer sees in the state `reach`. */
function secondHand(viewer: string, peer: Cluster, reach: ViewState, isMember: (name: string) => boolean): Views {
  const from = name(peer);
  const unknown = (reason: string): Views => ({ every: { state: VIEW_STATES.unknown, reason } });
  if (!peer.status?.state) return unknown(`not observable here yet: ${viewer} has not checked ${from} yet`);
  if (reach !== VIEW_STATES.ready) return unknown(`not observable here: ${viewer} does not read ${from}'s registry (${reach})`);
  const conditions = peer.status.conditions;
  // Compared with part of the peer's Clusters, the rest would show as missing there.
  const budget = condition(conditions, CLUSTER_CONDITIONS.peerCacheWithinBudget.type);
  if (budget?.status === 'False') return unknown(`not observable here: ${viewer}'s caches of ${from} are over their budget, so it reads only part of ${from}'s registry (${budget.message ?? ''})`);
  const synced = condition(conditions, CLUSTER_CONDITIONS.clustersSynced.type);
  if (synced?.status === 'True') return { notReady: new Map() };
  if (synced?.status !== 'False') return unknown(`not observable here yet: ${viewer} has not compared ${from}'s registry with its own`);
  const message = synced.message ?? '';
  const findings = groupSyncFindings(message);
  // A False that names no member (upstream's "could not get remote clusters: …", a wording not
  // known here) says nothing of any: none of its arrows may be drawn Ready.
  if (findings.missing.size + findings.renamed.size + findings.notReady.size === 0) {
    return unknown(`not observable here: ${viewer} could not compare ${from}'s registry with its own: ${message || 'no message'}`);
  }
  const views = new Map<string, View>();
  const view = (to: string, state: ViewState, reason: string) => void (to !== from && isMember(to) && views.set(to, { state, reason }));
  for (const to of findings.notReady) view(to, VIEW_STATES.notReady, `${from}'s Cluster of ${to} is not Ready there (its status there says why)`);
  for (const [to, remoteName] of findings.renamed) {
    view(to, VIEW_STATES.notSynced, `${from} knows ${to} as ${remoteName}${findings.notReady.has(to) ? ', and its Cluster of it is not Ready there' : ''}`);
  }
  for (const to of findings.missing) view(to, VIEW_STATES.notSynced, `${from} has no Cluster of ${to}`);
  return { notReady: views };
}

/** The views not Ready, in the order of `names`. */
function* notReadyViews(from: string, views: Views, names: readonly string[], order: ReadonlyMap<string, number>): Generator<[string, View]> {
  if ('every' in views) {
    for (const to of names) if (to !== from) yield [to, views.every];
  } else {
    yield* [...views.notReady].sort(([a], [b]) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  }
}

/** Takes an item's JSON bytes (and its comma) from what is left of MAX_GRAPH_BYTES, if they fit. */
function byteBudget(): (item: object) => boolean {
  let left = MAX_GRAPH_BYTES - ENVELOPE_BYTES;
  return (item) => {
    const bytes = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (bytes > left) return false;
    left -= bytes;
    return true;
  };
}

const NO_LOCAL = 'no Cluster here is marked Local yet: the controller has not reported on this cluster, so no views are drawn';

export function groupGraph(clusters: readonly Cluster[]): GroupGraph {
  const sorted = [...clusters].sort((a, b) => byCodeUnit(name(a), name(b)));
  const names = sorted.map(name);
  const order = new Map(names.map((n, i) => [n, i]));
  // Of several Clusters claiming to be this one (a conflict their status reports), the first speaks.
  const local = sorted.find((c) => c.status?.type === CLUSTER_TYPES.local);
  const members = sorted.map((cluster) => ({ cluster, node: { name: name(cluster), local: cluster === local, allViews: false } }));
  const nodes = members.map((m) => m.node);
  const fits = byteBudget();
  if (!nodes.every(fits)) return { nodes: [], edges: [], omitted: `${nodes.length} members: their names alone take more than the picture's ${MAX_GRAPH_BYTES / 1024} KiB` };
  if (!local) return { nodes, edges: [], omitted: NO_LOCAL };

  const own = new Map<string, View>();
  for (const peer of sorted) if (peer !== local) own.set(name(peer), firstHand(peer));
  const viewer = name(local);
  const withViews = members.map((m) => ({
    ...m,
    views: m.cluster === local ? { notReady: new Map([...own].filter(([, v]) => v.state !== VIEW_STATES.ready)) } : secondHand(viewer, m.cluster, own.get(m.node.name)?.state ?? VIEW_STATES.unknown, (n) => order.has(n)),
  }));
  const count = (v: Views) => ('every' in v ? names.length - 1 : v.notReady.size);
  const others = withViews.filter((m) => m.cluster !== local);
  // The viewer's views first, then what the others' name, then the others' that are all one.
  const turns = [...withViews.filter((m) => m.cluster === local), ...others.filter((m) => !('every' in m.views)), ...others.filter((m) => 'every' in m.views)];

  const wide = sorted.length > MAX_GRAPH_MEMBERS;
  const edges: GraphEdge[] = [];
  let othersSent = 0;
  let stop = '';
  for (const { cluster, node, views } of turns) {
    const first = cluster === local;
    let sent = 0;
    for (const [to, view] of notReadyViews(node.name, views, names, order)) {
      if (!stop && !first && wide && othersSent >= MAX_OTHERS_VIEWS) stop = `past ${MAX_GRAPH_MEMBERS} members at most ${MAX_OTHERS_VIEWS} of the others' views are sent`;
      const edge: GraphEdge = { from: node.name, to, state: view.state, reason: cut(view.reason, MAX_REASON) };
      if (!stop && !fits(edge)) stop = `the picture takes at most ${MAX_GRAPH_BYTES / 1024} KiB`;
      if (stop) break;
      edges.push(edge);
      sent++;
      if (!first) othersSent++;
    }
    node.allViews = sent === count(views) && (first || !wide);
  }
  edges.sort((a, b) => (order.get(a.from) ?? 0) - (order.get(b.from) ?? 0) || (order.get(a.to) ?? 0) - (order.get(b.to) ?? 0));

  const omitted: string[] = [];
  if (wide) omitted.push(`${names.length} members: past ${MAX_GRAPH_MEMBERS}, this cluster's views are drawn, and of the others' only those not Ready`);
  if (stop) omitted.push(`${withViews.reduce((n, m) => n + count(m.views), 0) - edges.length} views not Ready are left out: ${stop}`);
  return { nodes, edges, omitted: omitted.join('; ') };
}

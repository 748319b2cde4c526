import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../core/api/keys.ts';
import type { Cluster, ClusterCondition } from '../core/api/types.ts';
import { groupGraph, MAX_GRAPH_BYTES, MAX_GRAPH_MEMBERS, MAX_OTHERS_VIEWS, MAX_REASON, type GroupGraph } from './group-graph.ts';

const synced = (status: 'True' | 'False' | 'Unknown', message = ''): ClusterCondition => ({ type: 'ClustersSynced', status, message });
const UNREACHABLE = 'peer unreachable since 2026-01-01T00:00:00.000Z: cannot reach the peer: ECONNREFUSED';

function cluster(name: string, status?: Cluster['status'], annotations?: Record<string, string>): Cluster {
  return {
    apiVersion: 'clusterregistry.k8s.cisco.com/v1alpha1',
    kind: 'Cluster',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { clusterID: `${name}-id` },
    ...(status ? { status } : {}),
  };
}

const viewer = cluster('a', { type: 'Local', state: 'Ready' });
const peer = (name: string, state: string, message = '', conditions: ClusterCondition[] = [synced('True')]) =>
  cluster(name, { type: 'Peer', state: state as NonNullable<Cluster['status']>['state'], message, conditions });

/** Every view the page draws, as `from>to state` with its reason where asked: those sent, and the Ready ones a member with all its views sent implies. */
function drawn(g: GroupGraph, withReasons = false): string[] {
  const sent = new Map(g.edges.map((e) => [`${e.from}>${e.to}`, e]));
  const views = [...g.edges];
  for (const from of g.nodes) {
    if (!from.allViews) continue;
    for (const to of g.nodes) if (to !== from && !sent.has(`${from.name}>${to.name}`)) views.push({ from: from.name, to: to.name, state: 'Ready', reason: '' });
  }
  const at = new Map(g.nodes.map((n, i) => [n.name, i]));
  return views
    .sort((x, y) => (at.get(x.from) ?? 0) - (at.get(y.from) ?? 0) || (at.get(x.to) ?? 0) - (at.get(y.to) ?? 0))
    .map((e) => `${e.from}>${e.to} ${e.state}${withReasons && e.reason ? ` ${e.reason}` : ''}`);
}

const edges = (clusters: Cluster[], withReasons = false) => drawn(groupGraph(clusters), withReasons);
const bytes = (g: GroupGraph) => Buffer.byteLength(JSON.stringify(g));

describe('group graph', () => {
  it("draws the viewer's view of each peer from its entry of the peer", () => {
    const cases: [string, Cluster, string][] = [
      ['Ready', peer('p', 'Ready'), 'Ready'],
      ['no credentials', peer('p', 'MissingAuthInfo', 'spec.authInfo.secretRef must name the credentials Secret'), 'CredentialsInvalid'],
      ['unusable credentials', peer('p', 'InvalidAuthInfo', 'credentials Secret cr/p not found'), 'CredentialsInvalid'],
      ['credentials whose client key cannot be used', peer('p', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: unusable connection settings: the client key is not a PEM private key'), 'CredentialsInvalid'],
      ['no answer', peer('p', 'Failed', UNREACHABLE), 'Unreachable'],
      ['a slow answer', peer('p', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: the peer did not answer within 5s'), 'Unreachable'],
      ['our token refused', peer('p', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: the peer rejected our credentials (401 Unauthorized)'), 'CredentialsInvalid'],
      ['our token without rights', peer('p', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: our credentials may not read the kube-system namespace (403 Forbidden)'), 'CredentialsInvalid'],
      ['another cluster', peer('p', 'Failed', 'invalid cluster ID: the credentials reach cluster x, but spec.clusterID is p-id; nothing is synced from it'), 'NotReady'],
      ["upstream's words for a dead peer", peer('p', 'Failed', 'Get "https://p:6443/api": dial tcp: connection refused'), 'NotReady'],
      ['disabled here', cluster('p', { type: 'Peer', state: 'Ready' }, { [ANNOTATIONS.clusterDisabled]: '' }), 'Disabled'],
      ['disabled, as written', peer('p', 'Disabled'), 'Disabled'],
      ['not checked yet', cluster('p'), 'Unknown'],
    ];
    for (const [what, p, want] of cases) {
      const g = groupGraph([viewer, p]);
      const [edge] = g.edges;
      assert.equal(drawn(g)[0], `a>p ${want}`, what);
      assert.equal(edge === undefined, want === 'Ready', `${what}: only a view that is not Ready is sent`);
      const message = p.status?.message;
      if (message && edge?.state !== 'Disabled') assert.equal(edge?.reason, message, `${what}: the entry's message says why`);
    }
    const [long] = groupGraph([viewer, peer('p', 'Failed', 'x'.repeat(40_000))]).edges;
    assert.equal(long?.reason.length, MAX_REASON, 'an entry message is cut short');
  });

  it("draws a peer's view of the others from the ClustersSynced its entry here carries", () => {
    const q = peer('q', 'Ready');
    const notYet = "not observable here yet: a has not compared p's registry with its own";
    const cases: [string, Cluster, string[]][] = [
      ['in sync', peer('p', 'Ready'), ['p>a Ready', 'p>q Ready']],
      ['lacks one', peer('p', 'Ready', '', [synced('False', "cluster 'q' not found at remote side")]), ['p>a Ready', 'p>q NotSynced p has no Cluster of q']],
      [
        "upstream's wording, joined as upstream joins it",
        peer('p', 'Ready', '', [synced('False', "cluster 'a' status is not ready; cluster name mismatch q != q2")]),
        ['p>a NotReady p\'s Cluster of a is not Ready there (its status there says why)', 'p>q NotSynced p knows q as q2'],
      ],
      [
        "upstream's wording for a member it knows by another name and does not see Ready: it names the peer's Cluster",
        peer('p', 'Ready', '', [synced('False', "cluster name mismatch q != q2; cluster 'q2' status is not ready")]),
        ['p>a Ready', 'p>q NotSynced p knows q as q2, and its Cluster of it is not Ready there'],
      ],
      [
        "upstream's words when it cannot list the peer's Clusters: nothing said of any member",
        peer('p', 'Ready', '', [synced('False', 'could not get remote clusters: clusters.clusterregistry.k8s.cisco.com is forbidden')]),
        [
          "p>a Unknown not observable here: a could not compare p's registry with its own: could not get remote clusters: clusters.clusterregistry.k8s.cisco.com is forbidden",
          "p>q Unknown not observable here: a could not compare p's registry with its own: could not get remote clusters: clusters.clusterregistry.k8s.cisco.com is forbidden",
        ],
      ],
      [
        'a wording not known here',
        peer('p', 'Ready', '', [synced('False', 'something else went wrong')]),
        ["p>a Unknown not observable here: a could not compare p's registry with its own: something else went wrong", "p>q Unknown not observable here: a could not compare p's registry with its own: something else went wrong"],
      ],
      ['naming only itself and clusters gone from here', peer('p', 'Ready', '', [synced('False', "cluster 'p' not found at remote side, cluster 'gone' not found at remote side")]), ['p>a Ready', 'p>q Ready']],
      ['not compared yet', peer('p', 'Ready', '', []), [`p>a Unknown ${notYet}`, `p>q Unknown ${notYet}`]],
      ['unknown comparison', peer('p', 'Ready', '', [synced('Unknown')]), [`p>a Unknown ${notYet}`, `p>q Unknown ${notYet}`]],
      [
        'read only in part: our caches of it are over their budget',
        peer('p', 'Ready', '', [synced('False', "cluster 'q' not found at remote side"), { type: 'PeerCacheWithinBudget', status: 'False', message: 'over 60000 objects' }]),
        [
          "p>a Unknown not observable here: a's caches of p are over their budget, so it reads only part of p's registry (over 60000 objects)",
          "p>q Unknown not observable here: a's caches of p are over their budget, so it reads only part of p's registry (over 60000 objects)",
        ],
      ],
      [
        'not read from here: its last comparison says nothing now',
        peer('p', 'Failed', UNREACHABLE, [synced('False', 'peer unreachable')]),
        ["p>a Unknown not observable here: a does not read p's registry (Unreachable)", "p>q Unknown not observable here: a does not read p's registry (Unreachable)"],
      ],
      [
        'disabled here',
        cluster('p', { type: 'Peer', state: 'Ready', conditions: [synced('True')] }, { [ANNOTATIONS.clusterDisabled]: '' }),
        ["p>a Unknown not observable here: a does not read p's registry (Disabled)", "p>q Unknown not observable here: a does not read p's registry (Disabled)"],
      ],
      ['not checked yet', cluster('p'), ['p>a Unknown not observable here yet: a has not checked p yet', 'p>q Unknown not observable here yet: a has not checked p yet']],
    ];
    for (const [what, p, want] of cases) {
      assert.deepEqual(edges([viewer, p, q], true).filter((e) => e.startsWith('p>')), want, what);
    }
    // Upstream names the peer's Cluster, so a member here that bears that name is not the one meant.
    const mixed = [viewer, peer('p', 'Ready', '', [synced('False', "cluster name mismatch q != q2; cluster 'q2' status is not ready")]), q, peer('q2', 'Ready')];
    assert.deepEqual(edges(mixed).filter((e) => e.startsWith('p>')), ['p>a Ready', 'p>q NotSynced', 'p>q2 Ready']);
  });

  it('sends the views not Ready by name, members with all theirs sent marked; no views without a local Cluster', () => {
    const group = [peer('c', 'Ready'), viewer, peer('b', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: cannot reach the peer: ETIMEDOUT')];
    const g = groupGraph(group);
    assert.deepEqual(g.nodes, [
      { name: 'a', local: true, allViews: true },
      { name: 'b', local: false, allViews: true },
      { name: 'c', local: false, allViews: true },
    ]);
    assert.deepEqual(g.edges.map((e) => `${e.from}>${e.to} ${e.state}`), ['a>b Unreachable', 'b>a Unknown', 'b>c Unknown']);
    assert.deepEqual(drawn(g), ['a>b Unreachable', 'a>c Ready', 'b>a Unknown', 'b>c Unknown', 'c>a Ready', 'c>b Ready']);
    assert.equal(g.omitted, '');
    assert.deepEqual(groupGraph([cluster('a'), peer('b', 'Ready')]), {
      nodes: [
        { name: 'a', local: false, allViews: false },
        { name: 'b', local: false, allViews: false },
      ],
      edges: [],
      omitted: 'no Cluster here is marked Local yet: the controller has not reported on this cluster, so no views are drawn',
    });
  });

  it('keeps the picture within its bytes, the viewer first, and says what it left out', () => {
    // The longest names there are, and every peer knowing every other member by another long name.
    const long = (i: number) => `p${String(i).padStart(2, '0')}${'x'.repeat(250)}`;
    const names = Array.from({ length: MAX_GRAPH_MEMBERS - 1 }, (_, i) => long(i));
    const renamedAll = names.map((n) => `cluster name mismatch ${n} != ${'y'.repeat(253)}`).join(', ');
    const group = [viewer, ...names.map((n, i) => (i === 0 ? peer(n, 'Failed', 'x'.repeat(40_000)) : peer(n, 'Ready', '', [synced('False', renamedAll)])))];
    const g = groupGraph(group);
    assert.ok(bytes(g) <= MAX_GRAPH_BYTES, `${bytes(g)} bytes`);
    assert.ok(g.edges.every((e) => e.reason.length <= MAX_REASON));
    assert.equal(g.edges.filter((e) => e.from === 'a').length, 1, "the viewer's view not Ready");
    const [own, unreachable, second, ...rest] = g.nodes;
    assert.deepEqual(
      [own?.allViews, second?.allViews, rest.at(-1)?.allViews, unreachable?.allViews],
      [true, true, false, false],
      "the viewer's views whole, then what the peers name by name until the bytes run out, and last what this cluster cannot observe",
    );
    const sent = g.edges.length - 1;
    const all = (MAX_GRAPH_MEMBERS - 1) + (MAX_GRAPH_MEMBERS - 2) * (MAX_GRAPH_MEMBERS - 2);
    assert.equal(g.omitted, `${all - sent} views not Ready are left out: the picture takes at most ${MAX_GRAPH_BYTES / 1024} KiB`);

    // A group in sync sends its members' names and nothing more.
    const healthy = groupGraph([viewer, ...names.map((n) => peer(n, 'Ready'))]);
    assert.deepEqual([healthy.edges, healthy.omitted], [[], '']);
    assert.ok(bytes(healthy) < 12 * 1024, `${bytes(healthy)} bytes`);
  });

  it("past its members' cap, still draws the viewer's views, and the others' not Ready up to a number, what they name first", () => {
    const size = 3 * MAX_GRAPH_MEMBERS;
    const peers = Array.from({ length: size - 1 }, (_, i) => `p${String(i).padStart(3, '0')}`);
    const group = [
      viewer,
      ...peers.map((n, i) => {
        if (i < 5) return peer(n, 'Failed', UNREACHABLE);
        if (i === peers.length - 1) return peer(n, 'Ready', '', [synced('False', `cluster '${peers[0] ?? ''}' not found at remote side`)]);
        return peer(n, 'Ready');
      }),
    ];
    const g = groupGraph(group);
    assert.equal(g.nodes.length, size);
    assert.deepEqual(g.nodes.filter((n) => n.allViews).map((n) => n.name), ['a'], "only the viewer's views are all there");
    assert.deepEqual(drawn(g).filter((e) => e.startsWith('a>') && !e.endsWith('Ready')), peers.slice(0, 5).map((p) => `a>${p} Unreachable`));
    assert.equal(drawn(g).filter((e) => e.startsWith('a>')).length, size - 1);
    const others = g.edges.filter((e) => e.from !== 'a');
    assert.equal(others.length, MAX_OTHERS_VIEWS);
    assert.ok(others.some((e) => e.from === peers.at(-1) && e.to === peers[0] && e.state === 'NotSynced'), 'what a peer names comes before the views not observable here');
    const all = 5 * (size - 1) + 1;
    assert.equal(
      g.omitted,
      `${size} members: past ${MAX_GRAPH_MEMBERS}, this cluster's views are drawn, and of the others' only those not Ready; ${all - MAX_OTHERS_VIEWS} views not Ready are left out: past ${MAX_GRAPH_MEMBERS} members at most ${MAX_OTHERS_VIEWS} of the others' views are sent`,
    );
  });
});

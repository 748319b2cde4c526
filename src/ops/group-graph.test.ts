import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANNOTATIONS } from '../core/api/keys.ts';
import type { Cluster, ClusterCondition } from '../core/api/types.ts';
import { groupGraph, MAX_GRAPH_MEMBERS } from './group-graph.ts';
import { MAX_TEXT } from './group-view.ts';

const synced = (status: 'True' | 'False' | 'Unknown', message = ''): ClusterCondition => ({ type: 'ClustersSynced', status, message });

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

/** Each edge as `from>to state`, with its reason where asked. */
function edges(clusters: Cluster[], withReasons = false): string[] {
  return groupGraph(clusters).edges.map((e) => `${e.from}>${e.to} ${e.state}${withReasons && e.reason ? ` ${e.reason}` : ''}`);
}

describe('group graph', () => {
  it("draws the viewer's view of each peer from its entry of the peer", () => {
    const cases: [string, Cluster, string][] = [
      ['Ready', peer('p', 'Ready'), 'Ready'],
      ['no credentials', peer('p', 'MissingAuthInfo', 'spec.authInfo.secretRef must name the credentials Secret'), 'CredentialsInvalid'],
      ['unusable credentials', peer('p', 'InvalidAuthInfo', 'credentials Secret cr/p not found'), 'CredentialsInvalid'],
      ['no answer', peer('p', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: cannot reach the peer: ECONNREFUSED'), 'Unreachable'],
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
      const [edge] = groupGraph([viewer, p]).edges;
      assert.deepEqual([edge?.from, edge?.to, edge?.state], ['a', 'p', want], what);
      const message = p.status?.message;
      if (message) assert.equal(edge?.reason, want === 'Ready' || want === 'Disabled' ? '' : message, `${what}: the entry's message says why`);
    }
    const [long] = groupGraph([viewer, peer('p', 'Failed', 'x'.repeat(40_000))]).edges;
    assert.equal(long?.reason.length, MAX_TEXT, 'an entry message is cut as the tables cut it');
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
      ['not compared yet', peer('p', 'Ready', '', []), [`p>a Unknown ${notYet}`, `p>q Unknown ${notYet}`]],
      ['unknown comparison', peer('p', 'Ready', '', [synced('Unknown')]), [`p>a Unknown ${notYet}`, `p>q Unknown ${notYet}`]],
      [
        'not read from here: its last comparison says nothing now',
        peer('p', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: cannot reach the peer: ECONNREFUSED', [synced('False', 'peer unreachable')]),
        ["p>a Unknown not observable here: a does not read p's registry (Unreachable)", "p>q Unknown not observable here: a does not read p's registry (Unreachable)"],
      ],
    ];
    for (const [what, p, want] of cases) {
      assert.deepEqual(edges([viewer, p, q], true).filter((e) => e.startsWith('p>')), want, what);
    }
  });

  it('draws every ordered pair once, by name, with the viewer marked; nothing first-hand without a local Cluster', () => {
    const group = [peer('c', 'Ready'), viewer, peer('b', 'Failed', 'peer unreachable since 2026-01-01T00:00:00.000Z: cannot reach the peer: ETIMEDOUT')];
    const g = groupGraph(group);
    assert.deepEqual(g.nodes, [
      { name: 'a', local: true },
      { name: 'b', local: false },
      { name: 'c', local: false },
    ]);
    assert.deepEqual(edges(group), ['a>b Unreachable', 'a>c Ready', 'b>a Unknown', 'b>c Unknown', 'c>a Ready', 'c>b Ready']);
    assert.deepEqual(
      edges([cluster('a'), peer('b', 'Ready')], true),
      ['a>b Unknown no Cluster here is marked Local yet: the controller has not reported on this cluster', 'b>a Unknown no Cluster here is marked Local yet: the controller has not reported on this cluster'],
    );
  });

  it('draws no group larger than the picture holds, and says so', () => {
    const big = [viewer, ...Array.from({ length: MAX_GRAPH_MEMBERS }, (_, i) => peer(`p${i}`, 'Ready'))];
    assert.deepEqual(groupGraph(big), { nodes: [], edges: [], omitted: `${MAX_GRAPH_MEMBERS + 1} members: the picture is drawn for at most ${MAX_GRAPH_MEMBERS}` });
    assert.equal(groupGraph(big.slice(1)).edges.length, MAX_GRAPH_MEMBERS * (MAX_GRAPH_MEMBERS - 1));
  });
});

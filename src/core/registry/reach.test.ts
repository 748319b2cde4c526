import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster } from '../api/types.ts';
import { REACH_FRESHNESS_MS, reachedIDs, registryReaches } from './reach.ts';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const at = (msAgo: number): string => new Date(NOW - msAgo).toISOString();

function entry(id: string, state: string, heartbeats: string[]): Cluster {
  return { metadata: { name: id }, spec: { clusterID: id }, status: { state, conditions: heartbeats.map((t, i) => ({ type: `C${i}`, status: 'True', lastHeartbeatTime: t })) } } as Cluster;
}

describe('registryReaches', () => {
  // [what, entries, lost at, reaches]
  const rows: [string, Cluster[], number, boolean][] = [
    ['Ready with a fresh heartbeat', [entry('c', 'Ready', [at(60_000)])], -Infinity, true],
    ['Ready, its newest heartbeat of any condition fresh', [entry('c', 'Ready', [at(REACH_FRESHNESS_MS * 2), at(1_000)])], -Infinity, true],
    ['Ready with a stale heartbeat', [entry('c', 'Ready', [at(REACH_FRESHNESS_MS + 1)])], -Infinity, false],
    ['Ready without any heartbeat', [entry('c', 'Ready', [])], -Infinity, false],
    ['not Ready', [entry('c', 'Failed', [at(1_000)])], -Infinity, false],
    ['another cluster', [entry('d', 'Ready', [at(1_000)])], -Infinity, false],
    ['heard of before we lost it', [entry('c', 'Ready', [at(60_000)])], NOW - 30_000, false],
    ['heard of since we lost it', [entry('c', 'Ready', [at(10_000)])], NOW - 30_000, true],
    ['an unparsable heartbeat', [entry('c', 'Ready', ['yesterday'])], -Infinity, false],
  ];
  for (const [what, clusters, lost, want] of rows) {
    it(`${want ? 'vouches' : 'does not vouch'} for a cluster ${what}`, () => assert.equal(registryReaches(clusters, 'c', lost, NOW), want));
  }
});

describe('reachedIDs', () => {
  it('holds the IDs registryReaches vouches for, in one pass', () => {
    const clusters = [entry('a', 'Ready', [at(1_000)]), entry('b', 'Ready', [at(REACH_FRESHNESS_MS + 1)]), entry('c', 'Failed', [at(1_000)]), entry('d', 'Ready', ['yesterday', at(2_000)])];
    assert.deepEqual(reachedIDs(clusters, -Infinity, NOW), new Set(['a', 'd']));
    for (const c of clusters) assert.equal(reachedIDs(clusters, -Infinity, NOW).has(c.spec.clusterID), registryReaches(clusters, c.spec.clusterID, -Infinity, NOW));
  });

  it('takes a peer’s registry of any size in time linear in it, conditions included', () => {
    const many = Array.from({ length: 40_000 }, (_, i) => entry(`id-${i}`, 'Ready', [at(1_000)]));
    const started = performance.now();
    assert.equal(reachedIDs(many, -Infinity, NOW).size, 40_000);
    assert.ok(performance.now() - started < 1_000, 'one pass');
    const heartbeats = Array.from({ length: 300_000 }, () => at(1_000));
    assert.deepEqual(reachedIDs([entry('x', 'Ready', heartbeats)], -Infinity, NOW), new Set(['x']), 'no spread of a peer-sized array');
  });
});

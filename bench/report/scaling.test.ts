import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateLines, fits, growthLines, linearFit, scalingRows, type MemberFigures, type ScalingSamples } from './scaling.ts';

/** A member whose figures grow exactly as a + b·N with the group's size n. */
function member(n: number): MemberFigures {
  return {
    idleControllerCpu: (5 + 2 * n) / 1000, // over a 1 s window: 5 + 2·N millicores
    idleApiserverCpu: 0.02,
    syncControllerCpu: 0.3, // 100 objects: 3 ms per copy
    syncApiserverCpu: 0.5,
    rawApiserverCpu: 0.1,
    controllerRssMiB: 90 + 4 * n,
    controllerAnonMiB: 70,
    controllerRestRssMiB: 60 + 3 * n,
    apiserverRssMiB: 280,
    idleRequests: { own: 1, peers: n - 1 },
    syncRequests: { own: 200, peers: 0 },
    idleRequestsServed: 1 + (n - 1) * 0.5,
    connectionsServed: { own: 10, peers: 3 * (n - 1) },
  };
}

const samples: ScalingSamples = {
  objects: 100,
  idleMs: 1000,
  points: [2, 4, 8].map((n) => ({ clusters: n, convergeMs: 1000 * n, rawMs: 500 * n, members: Array.from({ length: n }, () => member(n)) })),
};

describe('linearFit', () => {
  it('finds the line through points on a line', () => {
    const f = linearFit([2, 3, 4], [7, 9, 11]);
    assert.ok(Math.abs(f.a - 3) < 1e-9 && Math.abs(f.b - 2) < 1e-9);
    assert.equal(f.r2, 1);
  });

  it('is the least-squares line through scattered points', () => {
    const f = linearFit([0, 1, 2, 3], [1, 3, 2, 4]);
    assert.ok(Math.abs(f.b - 0.8) < 1e-9 && Math.abs(f.a - 1.3) < 1e-9);
    assert.ok(f.r2 > 0 && f.r2 < 1);
  });

  it('is flat for a constant or a single size', () => {
    assert.deepEqual(linearFit([2, 3], [5, 5]), { a: 5, b: 0, r2: 1 });
    assert.equal(linearFit([4, 4], [1, 3]).b, 0);
  });
});

describe('scalingRows', () => {
  const rows = scalingRows(samples);

  it('gives per-cluster figures per size', () => {
    const r = rows[1]!;
    assert.equal(r.clusters, 4);
    assert.equal(r.convergeS, 4);
    assert.equal(r.rawS, 2);
    assert.ok(Math.abs(r.controllerMsPerCopy - 3) < 1e-9);
    assert.ok(Math.abs(r.apiserverMsPerCreate - 1) < 1e-9);
    assert.ok(Math.abs(r.idleControllerMillicores - 13) < 1e-9);
    assert.ok(Math.abs(r.syncControllerCpuTotal - 1.2) < 1e-9);
    assert.equal(r.syncApiserverCpu, 0.5);
    assert.equal(r.controllerRssMiB, 106);
    assert.equal(r.idleRequestsPerSecond, 4);
    assert.equal(r.connectionsPerApiserver, 19);
    assert.equal(r.connectionsPerPeer, 3);
    // Three receiving controllers sent 200 requests each for 300 copies.
    assert.equal(r.requestsPerCopy, 2);
  });

  it('fits the lines each figure grows along', () => {
    const f = fits(rows);
    assert.ok(Math.abs(f.idleControllerMillicores.a - 5) < 1e-9 && Math.abs(f.idleControllerMillicores.b - 2) < 1e-9);
    assert.ok(Math.abs(f.controllerRssMiB.b - 4) < 1e-9);
    assert.ok(Math.abs(f.controllerRestRssMiB.a - 60) < 1e-9 && Math.abs(f.controllerRestRssMiB.b - 3) < 1e-9);
    assert.ok(Math.abs(f.connectionsPerApiserver.a - 7) < 1e-9 && Math.abs(f.connectionsPerApiserver.b - 3) < 1e-9);
    assert.match(growthLines(rows).join('\n'), /controller CPU at idle: 5\.00 \+ 2\.000·N millicores \(r² 1\.00\)/);
  });

  it('carries the lines out to a large group', () => {
    const text = estimateLines(rows, 100, 100).join('\n');
    // 5 + 2·100 millicores and 60 + 3·100 MiB per controller at rest (90 + 4·100 right after converging); 7 + 3·100 connections per API server.
    assert.match(text, /about 205 millicores \(0\.2\d cores\) and 360 MiB with 100 synced objects \(490 MiB right after they converged\)/);
    assert.match(text, /whole group about 20\.5 cores and 35\.2 GiB/);
    assert.match(text, /about 307 connections from the 100 controllers \(3\.0 from each other member's\)/);
    assert.match(text, /99 copies.*about 3\.00 ms.*about 0\.30 CPU seconds per change/);
  });

  it('carries the reading right after converging, and says so, for results of runs that read none at rest', () => {
    const old: ScalingSamples = { ...samples, points: samples.points.map((p) => ({ ...p, members: p.members.map(({ controllerRestRssMiB: _, ...m }) => m) })) };
    assert.match(estimateLines(scalingRows(old), 100, 100).join('\n'), /490 MiB with 100 synced objects \(read right after they converged: this run read none at rest\)/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderReport, type Results } from './report.ts';
import { COMPARED, type MemberFigures } from './scaling.ts';

const member: MemberFigures = {
  idleControllerCpu: 0.1,
  idleApiserverCpu: 0.2,
  syncControllerCpu: 0.3,
  syncApiserverCpu: 0.5,
  rawApiserverCpu: 0.1,
  controllerRssMiB: 100,
  controllerAnonMiB: 70,
  controllerRestRssMiB: 80,
  apiserverRssMiB: 280,
  idleRequests: { own: 1, peers: 2 },
  syncRequests: { own: 200, peers: 0 },
  idleRequestsServed: 3,
  connectionsServed: { own: 10, peers: 3 },
};

const base: Results = {
  at: '2026-01-01T00:00:00.000Z',
  node: 'v24.0.0',
  machine: '2 × test CPU, 8 GiB',
  results: [
    { name: 'a | b', ours: 1, baseline: 2, unit: 'ms', ratio: 0.5 },
    { name: 'no baseline', ours: 1234.5, baseline: 0, unit: 's', ratio: NaN, note: 'x' },
  ],
  samples: {},
};

const full: Results = {
  ...base,
  samples: {
    propagation: { clusters: 3, ours: [9, 10, 11, 12, 40], raw: [3, 4, 5] },
    convergence: [
      { objects: 500, oursMs: 2000, rawMs: 1500 },
      { objects: 1000, oursMs: 4000, rawMs: 3000 },
    ],
    scaling: {
      objects: 100,
      idleMs: 10_000,
      points: [2, 3].map((n) => ({ clusters: n, convergeMs: 1000 * n, rawMs: 800 * n, members: Array.from({ length: n }, () => member) })),
      // Go's members: twice our RSS growth per added cluster.
      upstream: [2, 3].map((n) => ({ clusters: n, convergeMs: 1000 * n, rawMs: 800 * n, members: Array.from({ length: n }, () => ({ ...member, controllerRssMiB: 50 + 10 * n })) })),
    },
  },
};

describe('renderReport', () => {
  it('shows every figure of the run in a table, pipes escaped and missing ratios as a dash', () => {
    const md = renderReport(base).get('report.md') ?? '';
    assert.match(md, /Node v24\.0\.0 on 2 × test CPU, 8 GiB/);
    assert.ok(md.includes('| a \\| b | 1.00 | 2.00 | ms | 0.50 |  |'));
    assert.ok(md.includes('| no baseline | 1,235 | 0.00 | s | - | x |'));
  });

  it('leaves out the sections of benchmarks that did not run', () => {
    const files = renderReport(base);
    assert.deepEqual([...files.keys()], ['report.md']);
    assert.doesNotMatch(files.get('report.md') ?? '', /## (Propagation|Convergence|Cost|Estimate)/);
  });

  it('writes every chart the report shows, and shows every chart it writes', () => {
    const files = renderReport(full);
    const md = files.get('report.md') ?? '';
    const shown = [...md.matchAll(/!\[[^\]]*\]\(([^)]+)\)/g)].map((m) => m[1]).sort();
    const charts = [...files.keys()].filter((k) => k.endsWith('.svg')).sort();
    assert.deepEqual(shown, charts);
    assert.equal(charts.length, 8 + COMPARED.length);
    for (const c of charts) assert.match(files.get(c) ?? '', /^<svg [^]*<\/svg>\n$/);
  });

  it('gives the ratios to the raw baselines and the estimate', () => {
    const md = renderReport(full).get('report.md') ?? '';
    assert.ok(md.includes('| p50 | 11.0 | 4.0 | 2.75 |'), 'the percentiles of both, and their ratio');
    assert.ok(md.includes('| 500 | 2.00 | 1.50 | 1.33 | 250 |'));
    assert.match(md, /\| 2 \| 2\.0 \| 1\.6 \| 1\.25 \| 3\.00 \| 1\.00 \| 3\.00 \|/);
    assert.match(md, /## Estimate for 100 clusters[^]*99 copies/);
  });

  it('says which benchmarks failed in the run', () => {
    assert.match(renderReport({ ...base, failed: ['versus-upstream.bench.ts'] }).get('report.md') ?? '', /Failed in this run, their figures missing:\*\* versus-upstream\.bench\.ts/);
    assert.doesNotMatch(renderReport(base).get('report.md') ?? '', /Failed in this run/);
  });

  it('leaves out what results of an earlier run did not measure, drawing nothing from NaN', () => {
    const scaling = full.samples.scaling!;
    const earlier = (points: typeof scaling.points) => points.map((p) => ({ ...p, members: p.members.map(({ controllerRestRssMiB: _, ...m }) => m) }));
    const files = renderReport({ ...full, samples: { ...full.samples, scaling: { ...scaling, points: earlier(scaling.points), upstream: earlier(scaling.upstream ?? []) } } });
    assert.ok(!files.has('scaling-vs-go-controllerRestRssMiB.svg'));
    for (const [name, text] of files) if (name.endsWith('.svg')) assert.doesNotMatch(text, /NaN/, name);
    assert.doesNotMatch(files.get('report.md') ?? '', /memory at rest \(RSS\) \|/);
  });

  it("sets each figure's per-cluster slope beside Go's, with their ratio", () => {
    const md = renderReport(full).get('report.md') ?? '';
    // Ours: the same RSS at 2 and 3 clusters (slope 0); Go's grows 10 MiB per cluster.
    assert.match(md, /\| controller memory \(RSS\) \| MiB \| [^|]+ \+ 0\.000·N [^|]+\| 50\.00 \+ 10\.000·N \(r² 1\.00\) \| 0\.00 \|/);
  });
});

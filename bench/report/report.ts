// The benchmark report: from one run's results (the table's rows and the raw samples behind the
// charts) to the files of .cache/bench/report/: SVG charts and a report.md that shows them with
// their figures, their ratios to the raw baselines measured in the same run, and the estimate for a
// large group. Pure: results in, file names and contents out.
import type { BenchResult } from '../informer.bench.ts';
import { percentile } from '../support.ts';
import { compareSlopes, COMPARED, estimateLines, growthLines, linearFit, num, scalingRows, type ScalingRow, type ScalingSamples } from './scaling.ts';
import { cdfChart, histogram, lineChart, type Series } from './svg.ts';

/** New objects synced from cluster1 to both peers of a 3-cluster group, beside creating them on cluster1. */
export interface ConvergencePoint {
  objects: number;
  oursMs: number;
  rawMs: number;
}

/** What the benchmarks keep for the charts, beyond the table's rows; each part only when its benchmark ran. */
export interface Samples {
  /** Single changes from cluster1 to each peer, and raw watch delivery on one API server (ms). */
  propagation?: { clusters: number; ours: number[]; raw: number[] };
  convergence?: ConvergencePoint[];
  scaling?: ScalingSamples;
}

export interface Results {
  at: string;
  node: string;
  /** The machine everything ran on: all clusters, controllers and clients share it. */
  machine: string;
  results: BenchResult[];
  samples: Samples;
  /** Benchmarks that failed in this run: their figures and charts are missing. */
  failed?: string[];
}

/** The group size the report estimates for. */
export const ESTIMATE_FOR = 100;

const ratio = (ours: number, base: number) => num(ours / base, 2);

function table(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  // A pipe in a cell would split it.
  const cells = (r: readonly string[]) => `| ${r.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  return [cells(head), cells(head.map(() => '---')), ...rows.map(cells)];
}

function propagationSection(p: NonNullable<Samples['propagation']>, files: Map<string, string>): string[] {
  const series = [
    { label: `ours: cluster1 to a peer (${p.ours.length} samples)`, values: p.ours },
    { label: `raw: watch delivery on one API server (${p.raw.length})`, values: p.raw },
  ];
  // The slowest 1% would stretch the axis over a handful of outliers; the table has p99.9.
  const chart = { x: { label: 'latency (ms)', min: 0 }, series, upTo: Math.max(percentile(p.ours, 99), percentile(p.raw, 99)) };
  files.set('propagation-cdf.svg', cdfChart({ title: `Propagation latency, ${p.clusters} clusters (up to p99)`, ...chart }));
  files.set('propagation-histogram.svg', histogram({ title: `Propagation latency, ${p.clusters} clusters (up to p99)`, ...chart }));
  const ps = [50, 90, 99, 99.9];
  return [
    '## Propagation latency',
    '',
    `A change to one object on cluster1 until a peer's watch sees the copy change, beside a change on one API server until a watch on the same API server sees it (the floor any sync stands on).`,
    '',
    '![Propagation latency, cumulative](propagation-cdf.svg)',
    '![Propagation latency, histogram](propagation-histogram.svg)',
    '',
    ...table(
      ['percentile', 'ours (ms)', 'raw (ms)', 'ratio'],
      ps.map((q) => [`p${q}`, num(percentile(p.ours, q), 1), num(percentile(p.raw, q), 1), ratio(percentile(p.ours, q), percentile(p.raw, q))]),
    ),
    '',
  ];
}

function convergenceSection(points: readonly ConvergencePoint[], files: Map<string, string>): string[] {
  const xy = (pick: (c: ConvergencePoint) => number) => points.map((c) => [c.objects, pick(c) / 1000] as const);
  files.set(
    'convergence.svg',
    lineChart({
      title: 'Convergence time versus object count, 3 clusters',
      x: { label: 'new objects on cluster1', min: 0 },
      y: { label: 'seconds' },
      series: [
        { label: 'ours: until both peers hold every copy', points: xy((c) => c.oursMs) },
        { label: 'raw: creating them on cluster1', points: xy((c) => c.rawMs) },
      ],
    }),
  );
  return [
    '## Convergence time versus object count',
    '',
    'New objects created on cluster1 (32 clients at once) until both peers hold a copy of each, beside the time the same clients took to create them on cluster1, in the same moment.',
    '',
    '![Convergence time versus object count](convergence.svg)',
    '',
    ...table(
      ['objects', 'ours (s)', 'raw create (s)', 'ratio', 'ours (objects/s)'],
      points.map((c) => [num(c.objects), num(c.oursMs / 1000, 2), num(c.rawMs / 1000, 2), ratio(c.oursMs, c.rawMs), num((c.objects / c.oursMs) * 1000)]),
    ),
    '',
  ];
}

/** Measured points of one per-cluster figure, with its fitted line when it has one. */
function measuredWithFit(rows: readonly ScalingRow[], label: string, pick: (r: ScalingRow) => number): Series[] {
  const xs = rows.map((r) => r.clusters);
  const f = linearFit(xs, rows.map(pick));
  const ends = [Math.min(...xs), Math.max(...xs)];
  return [
    { label, points: rows.map((r) => [r.clusters, pick(r)] as const) },
    { label: `fit: ${num(f.a, 1)} + ${num(f.b, 2)}·N`, points: ends.map((n) => [n, f.a + f.b * n] as const), dashed: true },
  ];
}

function scalingSection(s: ScalingSamples, files: Map<string, string>): string[] {
  const rows = scalingRows(s);
  const x = { label: 'clusters in the full mesh (N)', integer: true };
  const xy = (pick: (r: ScalingRow) => number) => rows.map((r) => [r.clusters, pick(r)] as const);
  files.set(
    'scaling-convergence.svg',
    lineChart({
      title: `Convergence of ${num(s.objects)} ConfigMaps to N-1 peers`,
      x,
      y: { label: 'seconds' },
      series: [
        { label: 'ours: until every peer holds every copy', points: xy((r) => r.convergeS) },
        { label: 'raw: the same writes by raw clients', points: xy((r) => r.rawS) },
      ],
    }),
  );
  /** A controller's figure, with its line, beside its API server's. */
  const besideApiserver = (file: string, title: string, unit: string, ours: (r: ScalingRow) => number, apiserver: (r: ScalingRow) => number) =>
    files.set(file, lineChart({ title, x, y: { label: unit }, series: [...measuredWithFit(rows, 'ours: controller', ours), { label: 'raw: its API server', points: xy(apiserver) }] }));
  besideApiserver('scaling-idle-cpu.svg', 'CPU at idle, per cluster', 'millicores', (r) => r.idleControllerMillicores, (r) => r.idleApiserverMillicores);
  besideApiserver('scaling-memory.svg', 'Memory per cluster (RSS)', 'MiB', (r) => r.controllerRssMiB, (r) => r.apiserverRssMiB);
  files.set(
    'scaling-sync-cpu.svg',
    lineChart({
      title: `CPU per cluster for ${num(s.objects)} new ConfigMaps`,
      x,
      y: { label: 'CPU seconds' },
      series: [
        { label: 'ours: controller, while converging', points: xy((r) => r.syncControllerCpu) },
        { label: 'ours: its API server, while converging', points: xy((r) => r.syncApiserverCpu) },
        { label: 'raw: API server, for the raw writes', points: xy((r) => r.rawApiserverCpu) },
      ],
    }),
  );
  files.set(
    'scaling-ratios.svg',
    lineChart({
      title: 'Ours over the raw baseline',
      x,
      y: { label: 'ratio' },
      series: [
        { label: 'convergence time', points: xy((r) => r.convergeS / r.rawS) },
        { label: 'CPU per copy (vs API server per create)', points: xy((r) => r.controllerMsPerCopy / r.apiserverMsPerCreate) },
        { label: 'idle CPU (vs its API server)', points: xy((r) => r.idleControllerMillicores / r.idleApiserverMillicores) },
        { label: 'RSS (vs its API server)', points: xy((r) => r.controllerRssMiB / r.apiserverRssMiB) },
      ],
    }),
  );
  return [
    '## Cost versus cluster count',
    '',
    `A fresh full mesh of N clusters for each N, one rule syncing ConfigMaps from any member to all others. Per N: ${num(s.idleMs / 1000)} s at idle, then ${num(s.objects)} ConfigMaps created on cluster1 until every other member holds a copy (memory read seconds later, and again a minute later: at rest), then raw clients making the same writes at once (the objects on cluster1 and a copy on each other member). Figures are per cluster (means over members) unless said otherwise; every cluster shares this machine, so the group's total work, and with it the convergence time, grows with N here.`,
    '',
    '![Convergence versus cluster count](scaling-convergence.svg)',
    '![CPU at idle versus cluster count](scaling-idle-cpu.svg)',
    '![CPU for the workload versus cluster count](scaling-sync-cpu.svg)',
    '![Memory versus cluster count](scaling-memory.svg)',
    '![Ratios to the raw baselines versus cluster count](scaling-ratios.svg)',
    '',
    ...table(
      ['N', 'converge (s)', 'raw (s)', 'ratio', 'controller ms/copy', 'API server ms/create', 'ratio', 'controller CPU s (all members)', 'idle controller mcores', 'idle API server mcores', 'controller RSS MiB', 'controller RSS MiB at rest', 'API server RSS MiB', 'idle req/s per controller', 'idle req/s per API server', 'requests per copy', 'connections per API server (from each peer)'],
      rows.map((r) => [
        String(r.clusters),
        num(r.convergeS, 1),
        num(r.rawS, 1),
        ratio(r.convergeS, r.rawS),
        num(r.controllerMsPerCopy, 2),
        num(r.apiserverMsPerCreate, 2),
        ratio(r.controllerMsPerCopy, r.apiserverMsPerCreate),
        `${num(r.syncControllerCpu, 1)} (${num(r.syncControllerCpuTotal, 1)})`,
        num(r.idleControllerMillicores),
        num(r.idleApiserverMillicores),
        num(r.controllerRssMiB),
        num(r.controllerRestRssMiB),
        num(r.apiserverRssMiB),
        num(r.idleRequestsPerSecond, 1),
        num(r.idleRequestsServedPerSecond, 1),
        num(r.requestsPerCopy, 2),
        `${num(r.connectionsPerApiserver)} (${num(r.connectionsPerPeer, 1)})`,
      ]),
    ),
    '',
    'How per-cluster cost grows with N (least-squares lines over the sizes measured):',
    '',
    ...growthLines(rows).map((l) => `- ${l}`),
    '',
    `## Estimate for ${ESTIMATE_FOR} clusters`,
    '',
    `On paper, from the lines above, for ${ESTIMATE_FOR} clusters in a full mesh, each on its own machine:`,
    '',
    ...estimateLines(rows, s.objects, ESTIMATE_FOR).map((l) => `- ${l}`),
    '',
  ];
}

/** Each compared figure drawn for both controllers with their lines, and the slopes side by side. */
function besideUpstreamSection(s: ScalingSamples, files: Map<string, string>): string[] {
  const ours = scalingRows(s);
  const go = scalingRows(s, s.upstream);
  const x = { label: 'clusters in the full mesh (N)', integer: true };
  // A figure results from an earlier run did not measure is left out, not drawn from nothing.
  const measured = COMPARED.filter((m) => [...ours, ...go].some((r) => Number.isFinite(r[m.key])));
  const charts = measured.map((m) => {
    const file = `scaling-vs-go-${m.key}.svg`;
    const pick = (r: ScalingRow) => r[m.key];
    files.set(file, lineChart({ title: `${m.what}, per cluster`, x, y: { label: m.unit }, series: [...measuredWithFit(ours, 'ours', pick), ...measuredWithFit(go, 'Go v0.2.12', pick)] }));
    return `![${m.what} versus cluster count, ours and Go's](${file})`;
  });
  const slopes = compareSlopes(ours, go);
  return [
    "## Side by side with upstream's Go controller",
    '',
    "The same workload on the same sizes with upstream's v0.2.12 in every member. Each line is fitted per cluster as a + b·N; the slope b is what each added cluster costs every member, and the ratio is ours over Go's (below 1, ours grows more slowly). Memory at rest is read a minute after converging, when Go's runtime may still hold the burst's garbage (it collects at its next GC, forced every two minutes when little is allocated): its slope ratio is shown, not judged; the one right after converging is where neither has given anything back.",
    '',
    ...charts,
    '',
    ...table(
      ['figure', 'unit', 'ours a + b·N', 'Go a + b·N', 'slope ratio'],
      slopes.filter((c) => measured.some((m) => m.key === c.key)).map((c) => [c.what, c.unit, `${num(c.ours.a, 2)} + ${num(c.ours.b, 3)}·N (r² ${num(c.ours.r2, 2)})`, `${num(c.upstream.a, 2)} + ${num(c.upstream.b, 3)}·N (r² ${num(c.upstream.r2, 2)})`, num(c.slopeRatio, 2)]),
    ),
    '',
  ];
}

/** The report's files by name: report.md and the SVG charts it shows. */
export function renderReport(r: Results): Map<string, string> {
  const files = new Map<string, string>();
  const md = [
    '# Benchmark report',
    '',
    `Run ${r.at} with Node ${r.node} on ${r.machine}. Every cluster, controller and client of a benchmark shares this machine. A ratio is ours over the baseline measured in the same run; compare ratios between runs, not absolute figures.`,
    '',
    ...(r.failed?.length ? [`**Failed in this run, their figures missing:** ${r.failed.join(', ')}.`, ''] : []),
    '## All figures',
    '',
    ...table(
      ['benchmark', 'ours', 'baseline', 'unit', 'ratio', 'note'],
      r.results.map((x) => [x.name, num(x.ours, Math.abs(x.ours) >= 100 ? 0 : 2), num(x.baseline, Math.abs(x.baseline) >= 100 ? 0 : 2), x.unit, num(x.ratio, 2), x.note ?? '']),
    ),
    '',
    ...(r.samples.propagation ? propagationSection(r.samples.propagation, files) : []),
    ...(r.samples.convergence?.length ? convergenceSection(r.samples.convergence, files) : []),
    ...(r.samples.scaling?.points.length ? scalingSection(r.samples.scaling, files) : []),
    ...(r.samples.scaling?.upstream?.length ? besideUpstreamSection(r.samples.scaling, files) : []),
  ];
  files.set('report.md', md.join('\n'));
  return files;
}

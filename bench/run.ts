// `make bench`: runs every benchmark and prints, for each, our figure, the baseline measured in
// the same run, and their ratio (machines here are noisy; ratios within one run are what count).
// The figures and the raw samples behind the charts go to .cache/bench/report/results.json, with
// the report rendered from them (report.md and its SVG charts); `--report-only` renders it again
// from the results already there, running nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { fileURLToPath } from 'node:url';
import { controllerAllocatorEnv } from '../src/testbed/group.ts';
import type { BenchResult } from './informer.bench.ts';
import { renderReport, type Results, type Samples } from './report/report.ts';

const args = process.argv.slice(2);
const reportOnly = args.includes('--report-only');
const only = args.filter((a) => a !== '--report-only');
const dir = fileURLToPath(new URL('.', import.meta.url));
const reportDir = fileURLToPath(new URL('../.cache/bench/report/', import.meta.url));
const resultsPath = join(reportDir, 'results.json');

/** Benchmarks that threw: their rows are missing, and the run exits non-zero once the rest is written. */
const failed: string[] = [];

async function runAll(): Promise<Results> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bench.ts'))
    .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
    .sort();

  // The controllers run on the allocator the image preloads: figures taken on another are not the product's.
  if (!controllerAllocatorEnv()) throw new Error("bench: jemalloc, which the controller's image preloads, is not on this machine; `make bench` installs Debian's libjemalloc2");

  // The controllers run from dist/, as they ship: build it from the sources under test first.
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  if (build.status !== 0) throw new Error('bench: npm run build failed');

  const rows: BenchResult[] = [];
  const samples: Samples = {};
  for (const f of files) {
    process.stderr.write(`bench: ${f} ...\n`);
    const t0 = performance.now();
    // Its samples join the report's only if it finished: a failed benchmark draws no charts.
    const own: Samples = {};
    try {
      const mod = (await import(`./${f}`)) as { run: (samples: Samples) => Promise<BenchResult[]> };
      rows.push(...(await mod.run(own)));
      Object.assign(samples, own);
    } catch (err) {
      // The others' figures are still written (a long run is not lost to its last benchmark); the run fails.
      process.stderr.write(`bench: ${f} failed: ${inspect(err)}\n`);
      failed.push(f);
    }
    process.stderr.write(`bench: ${f} took ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
  }

  const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
  const table = [['BENCHMARK', 'OURS', 'BASELINE', 'UNIT', 'RATIO', 'NOTE'], ...rows.map((r) => [r.name, fmt(r.ours), fmt(r.baseline), r.unit, Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : '-', r.note ?? ''])];
  const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? [];
  for (const row of table) process.stdout.write(row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd() + '\n');

  const cpus = os.cpus();
  const machine = `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`;
  return { at: new Date().toISOString(), node: process.version, machine, results: rows, samples, ...(failed.length ? { failed } : {}) };
}

const results = reportOnly ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Results) : await runAll();
mkdirSync(reportDir, { recursive: true });
if (!reportOnly) writeFileSync(resultsPath, JSON.stringify(results, null, 2) + '\n');
for (const [name, text] of renderReport(results)) writeFileSync(join(reportDir, name), text);
process.stderr.write(`bench: results and report written to ${reportDir} (report.md)\n`);
if (failed.length > 0) process.stderr.write(`bench: failed, their figures missing: ${failed.join(', ')}\n`);
// Whatever a failed benchmark left open must not keep the run from ending.
process.exit(failed.length > 0 ? 1 : 0);

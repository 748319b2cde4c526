// `make bench`: runs every benchmark and prints, for each, our figure, the baseline measured in
// the same run, and their ratio (machines here are noisy; ratios within one run are what count).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BenchResult } from './informer.bench.ts';

const only = process.argv.slice(2);
const dir = fileURLToPath(new URL('.', import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();

// The controllers run from dist/, as they ship: build it from the sources under test first.
const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
if (build.status !== 0) throw new Error('bench: npm run build failed');

const rows: BenchResult[] = [];
for (const f of files) {
  process.stderr.write(`bench: ${f} ...\n`);
  const mod = (await import(`./${f}`)) as { run: () => Promise<BenchResult[]> };
  rows.push(...(await mod.run()));
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
const table = [['BENCHMARK', 'OURS', 'BASELINE', 'UNIT', 'RATIO', 'NOTE'], ...rows.map((r) => [r.name, fmt(r.ours), fmt(r.baseline), r.unit, Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : '-', r.note ?? ''])];
const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => (row[i] ?? '').length))) ?? [];
for (const row of table) process.stdout.write(row.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd() + '\n');

// The same figures as JSON, for charts and for comparing runs.
const out = fileURLToPath(new URL('../.cache/bench/results.json', import.meta.url));
mkdirSync(fileURLToPath(new URL('../.cache/bench/', import.meta.url)), { recursive: true });
writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), node: process.version, results: rows }, null, 2) + '\n');
process.stderr.write(`bench: results written to ${out}\n`);

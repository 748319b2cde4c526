// `make chaos`: the long randomised fault run. Seeded from $CHAOS_SEED (a fresh seed otherwise,
// printed first so the run can be replayed), $CHAOS_FAULTS faults (default 500). Prints a line per
// round and the figures at the end; every fault and user action goes to .cache/chaos/<seed>.log,
// the figures to .cache/chaos/<seed>.json and .cache/chaos/latest.json. Exits 1 on any violation.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runChaos } from './engine.ts';
import { positiveFromEnv, seedFromEnv } from '../support/env.ts';

// Interrupted, it still exits through the exit hooks that kill the sandbox's processes and remove its files.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

const seed = seedFromEnv('CHAOS_SEED', 32);
const faults = positiveFromEnv('CHAOS_FAULTS', 500);
const dir = fileURLToPath(new URL('../../.cache/chaos/', import.meta.url));
mkdirSync(dir, { recursive: true });
const logFile = `${dir}${seed}.log`;
writeFileSync(logFile, '');

console.log(`chaos seed ${seed} (replay: CHAOS_SEED=${seed} make chaos), ${faults} faults; details in ${logFile}`);
const report = await runChaos({
  seed,
  faults,
  name: 'chaos',
  log: (line) => {
    appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
    if (!line.startsWith(' ')) console.log(line);
  },
});

const json = JSON.stringify(report, null, 2);
writeFileSync(`${dir}${seed}.json`, json + '\n');
writeFileSync(`${dir}latest.json`, json + '\n');
const byKind = Object.entries(report.faultsByKind)
  .map(([k, n]) => `${k} ${n}`)
  .join(', ');
console.log(
  [
    '',
    `seed               ${report.seed}`,
    `duration           ${(report.durationMs / 60_000).toFixed(1)} min (${report.rounds} rounds)`,
    `faults injected    ${report.faults} (${byKind})`,
    `user actions       ${report.workloadOps} (${report.sourcesCreated} sources made)`,
    `objects checked    ${report.objectsChecked}`,
    `convergence        p50 ${report.convergenceMs.p50} ms, p95 ${report.convergenceMs.p95} ms, max ${report.convergenceMs.max} ms`,
    `max copy writes    ${report.maxCopyWrites.writes} in a round (for ${report.maxCopyWrites.changes} changes)`,
    `late bookkeeping   ${report.lateBookkeepingWrites} copies (fields moved or source handed over after convergence)`,
    `violations         ${report.violations}`,
    `lost objects       ${report.lostObjects}`,
    `wrongful deletions ${report.wrongfulDeletions}`,
    ...report.violationDetails.map((v) => `  round ${v.round} ${v.kind}: ${v.detail}`),
    `figures in ${dir}${seed}.json`,
  ].join('\n'),
);
process.exitCode = report.violations > 0 ? 1 : 0;

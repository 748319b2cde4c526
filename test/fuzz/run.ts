// `make fuzz`: the long bad-input run against two real joined clusters. Seeded from $FUZZ_SEED (a
// fresh seed otherwise, printed first so the run can be replayed), $FUZZ_CASES cases (default
// 10,000) in batches of $FUZZ_BATCH (default 150), the hostile peer rewriting its own registry
// entry after every $FUZZ_ENTRY_EVERY batches (default 5), its copy of another's after every
// $FUZZ_REWRITE_EVERY (default 1), serving more than the victim's cache of it may hold after every
// $FUZZ_OVERSIZE_EVERY (default 10) and holding slow requests against the victim's webhook during
// every $FUZZ_LISTENER_EVERY (default 3). Prints a line per batch and the
// figures at the end; every line goes to .cache/fuzz/<seed>.log, the figures to
// .cache/fuzz/<seed>.json and .cache/fuzz/latest.json. Exits 1 on any violation.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { positiveFromEnv, seedFromEnv } from '../support/env.ts';
import { FuzzRun, type FuzzReport, type Tally } from './engine.ts';

// fast-check takes a 31-bit seed.
const seed = seedFromEnv('FUZZ_SEED', 31);
const cases = positiveFromEnv('FUZZ_CASES', 10_000);
const batchSize = positiveFromEnv('FUZZ_BATCH', 150);
const entryEvery = positiveFromEnv('FUZZ_ENTRY_EVERY', 5);
const rewriteEvery = positiveFromEnv('FUZZ_REWRITE_EVERY', 1);
const oversizeEvery = positiveFromEnv('FUZZ_OVERSIZE_EVERY', 10);
const listenerEvery = positiveFromEnv('FUZZ_LISTENER_EVERY', 3);
// The weight of rules with costly templates among the trust-boundary cases.
const costly = positiveFromEnv('FUZZ_COSTLY', 2);
// 1 logs what the controllers do at debug level, Events they rate-limit included.
const verbosity = process.env['FUZZ_LOG_VERBOSITY'];
const dir = fileURLToPath(new URL('../../.cache/fuzz/', import.meta.url));
mkdirSync(dir, { recursive: true });
const logFile = `${dir}${seed}.log`;
writeFileSync(logFile, '');
const log = (line: string): void => {
  appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`);
  console.log(line);
};

const every = `FUZZ_ENTRY_EVERY=${entryEvery} FUZZ_REWRITE_EVERY=${rewriteEvery} FUZZ_OVERSIZE_EVERY=${oversizeEvery} FUZZ_LISTENER_EVERY=${listenerEvery} FUZZ_COSTLY=${costly}`;
log(`fuzz seed ${seed} (replay: FUZZ_SEED=${seed} FUZZ_CASES=${cases} FUZZ_BATCH=${batchSize} ${every} make fuzz), ${cases} cases in batches of ${batchSize}; details in ${logFile}`);
const run = await FuzzRun.start({ seed, cases, batchSize, name: 'fuzz', entryEvery, rewriteEvery, oversizeEvery, listenerEvery, costly, ...(verbosity ? { controllerArgs: [`--log-verbosity=${verbosity}`] } : {}), log, detail: (line) => appendFileSync(logFile, `  ${line}\n`) });
let report: FuzzReport;
try {
  report = await run.run();
} finally {
  // Stopping runs the group's security checks (credentials in logs, writes to peers): a failure there fails the run.
  await run.stop();
}

const json = JSON.stringify(report, null, 2);
writeFileSync(`${dir}${seed}.json`, json + '\n');
writeFileSync(`${dir}latest.json`, json + '\n');
const t = report.trust;
const row = (name: string, t: Tally): string => `  ${name.padEnd(28)} ${String(t.tried).padStart(6)} tried ${String(t.accepted).padStart(6)} accepted ${String(t.rejected).padStart(6)} rejected ${String(t.bad).padStart(6)} bad ${String(t.reported).padStart(6)} reported${t.rateLimited ? ` (+${t.rateLimited} rate-limited)` : ''}${t.waiting ? `, ${t.waiting} waiting` : ''}`;
log(
  [
    '',
    `seed                 ${report.seed}`,
    `duration             ${(report.durationMs / 60_000).toFixed(1)} min (${report.batches} batches, ${report.casesPerSecond} cases/s)`,
    '(bad, reported, rate-limited and waiting count verdicts: a rule from the peer is judged on both members)',
    `cases tried          ${report.cases} (${report.accepted} accepted, ${report.rejected} rejected: ${Object.entries(report.rejectedBy).map(([k, n]) => `${k} ${n}`).join(', ')})`,
    'by kind',
    ...Object.entries(report.byKind).map(([k, t]) => row(k, t)),
    'by generator branch',
    ...Object.entries(report.byLabel).sort(([a], [b]) => a.localeCompare(b)).map(([k, t]) => row(k, t)),
    `hostile entry rounds ${report.hostileEntryRounds} (${report.hostileEntryRateLimited} refused in status only: the Cluster's Warnings were rate-limited; ${report.hostileEntryHealedByOwner} undone by the attacker's own controller after the refusal)`,
    `error-level logs     ${report.errorLogs} (faults the controllers retried)${report.errorLogSamples.map((l) => `\n  ${l}`).join('')}`,
    `attacker's servers   ${report.attackerTlsRequests} requests to the TLS one (inline tokens only), no connection to the plain one unless a violation says so`,
    `trust rounds         ${t.rewriteRounds} rewrites of another's entry (${t.rewritesRefused} refused and said so, ${t.rewritesTakenSameServer} fresh tokens for the server held taken); ${t.oversizeRounds} oversize; ${t.listenerRounds} slow-listener (${t.listenerRefused} requests refused or cut off)`,
    `squats               ${t.squatsTaken} taken (IDs no one described), ${t.squatsRefused} left out; ${t.copiesChecked} copies checked`,
    `victim's controller  event loop held ${t.maxEventLoopMs} ms at most, /healthz within ${t.maxHealthzMs} ms; ${t.peakRssMiB} MiB resident at most (bound ${t.rssBoundMiB} MiB)`,
    `crashes              ${report.crashes}`,
    `stalls               ${report.stalls}`,
    `violations           ${report.violations}`,
    ...report.violationDetails.map((v) => `  batch ${v.batch} ${v.kind}: ${v.detail}`),
    `figures in ${dir}${seed}.json`,
  ].join('\n'),
);
process.exitCode = report.violations > 0 ? 1 : 0;

// Logging throughput, ours against plain pino in the same run: the same options and lines into the
// same sink, so the difference is what redaction costs. Rounds alternate between the two; the
// ratio is the median of the rounds' ratios, which a machine whose load drifts disturbs least.
import { pino } from 'pino';
import { createLogger, type Logger } from '../src/kube/log.ts';
import type { BenchResult } from './informer.bench.ts';
import { median } from './support.ts';

const ROUNDS = 9;
const ROUND_MS = 200;
let bytes = 0;
// It encodes each line as a real destination does. Dropping lines unread would bill the redacting
// side for flattening pino's concatenated string, which any real write pays anyway.
const sink = { write: (line: string): void => void (bytes += Buffer.byteLength(line)) };

/** Lines per second of `line` during one round. */
function linesPerSecond(line: (i: number) => void): number {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ROUND_MS) {
    for (let k = 0; k < 500; k++) line(n++);
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

function compare(name: string, note: string, write: (log: Logger, i: number) => void): BenchResult {
  const child = (log: Logger): Logger => log.child({ controller: 'clusters', cluster: 'cluster-1' });
  const ours = child(createLogger({ destination: sink }));
  // createLogger's options without the redaction.
  const plain = child(pino({ base: null, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } }, sink));
  const oursRuns: number[] = [];
  const plainRuns: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    oursRuns.push(linesPerSecond((i) => write(ours, i)));
    plainRuns.push(linesPerSecond((i) => write(plain, i)));
  }
  const ratio = median(oursRuns.map((o, r) => o / (plainRuns[r] ?? NaN)));
  return { name, ours: Math.round(median(oursRuns)), baseline: Math.round(median(plainRuns)), unit: 'lines/s', ratio, note };
}

export async function run(): Promise<BenchResult[]> {
  const err = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:6443'), { code: 'ECONNREFUSED' });
  return [
    compare('log line (child logger, 3 fields)', 'ours (redacting) vs plain pino, same options', (log, i) =>
      log.info({ key: `ns/object-${i % 100}`, resourceVersion: String(i), generation: 3 }, 'reconciled'),
    ),
    compare('log line with an error', 'err with stack and a field', (log) => log.error({ err, key: 'ns/object' }, 'reconcile failed')),
  ];
}

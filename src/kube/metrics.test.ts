import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram as PromHistogram, Registry, type Metric } from 'prom-client';
import { Histogram } from './metrics.ts';

/** The text a registry holding only `metric` exports. */
async function exported(metric: Metric | Histogram): Promise<string> {
  const r = new Registry();
  r.registerMetric(metric as Metric);
  return r.metrics();
}

const BUCKETS = [0.001, 0.01, 0.1, 1];
/** Values on, between, below and past the bounds, for two label sets. */
const OBSERVATIONS: [Record<string, string>, number][] = [
  [{ verb: 'GET' }, 0.0005],
  [{ verb: 'GET' }, 0.001],
  [{ verb: 'GET' }, 0.05],
  [{ verb: 'GET' }, 7],
  [{ verb: 'POST' }, 0.01],
  [{ verb: 'POST' }, 1],
  [{ verb: 'POST' }, 0],
];

describe('Histogram', () => {
  it("exports what prom-client's histogram exports for the same observations", async () => {
    const ours = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['verb'], buckets: BUCKETS });
    const theirs = new PromHistogram({ name: 'h_seconds', help: 'h', labelNames: ['verb'], buckets: BUCKETS, registers: [] });
    for (const [labels, v] of OBSERVATIONS) {
      ours.observe(labels, v);
      theirs.observe(labels, v);
    }
    // Label order within a line may differ; the set of lines may not.
    const lines = (text: string) => text.split('\n').map((l) => l.replace(/\{([^}]*)\}/, (_, inner: string) => `{${inner.split(',').sort().join(',')}}`)).sort();
    assert.deepEqual(lines(await exported(ours)), lines(await exported(theirs)));
  });

  it('exports zeros before its first observation when it has no labels, as prom-client does, and again after a reset', async () => {
    const ours = new Histogram({ name: 'p_seconds', help: 'p', buckets: [1] });
    const theirs = new PromHistogram({ name: 'p_seconds', help: 'p', buckets: [1], registers: [] });
    assert.equal(await exported(ours), await exported(theirs));
    ours.observe(0.5);
    assert.match(await exported(ours), /^p_seconds_count 1$/m);
    ours.reset();
    assert.equal(await exported(ours), await exported(theirs));
  });

  it('counts each value in the first bucket whose bound is at least it, and only in +Inf past the last', async () => {
    const h = new Histogram({ name: 'b', help: 'b', labelNames: ['k'], buckets: [2, 1] });
    for (const v of [1, 1.5, 2, 3]) h.observe({ k: 'x' }, v);
    const values = (await h.get()).values.map((v) => [v.metricName, v.labels['le'], v.value]);
    assert.deepEqual(values, [
      ['b_bucket', 1, 1],
      ['b_bucket', 2, 3],
      ['b_bucket', '+Inf', 4],
      ['b_sum', undefined, 7.5],
      ['b_count', undefined, 4],
    ]);
  });

  it('forgets a removed label set, and refuses a label it was not given or a value that is not finite', async () => {
    const h = new Histogram({ name: 'r', help: 'r', labelNames: ['verb', 'host'], buckets: [1] });
    h.observe({ verb: 'GET', host: 'a' }, 1);
    h.observe({ verb: 'GET', host: 'b' }, 1);
    h.remove({ verb: 'GET', host: 'a' });
    assert.deepEqual(new Set((await h.get()).values.map((v) => v.labels['host'])), new Set(['b']));
    assert.throws(() => h.observe({ verb: 'GET', other: 'x' } as Record<string, string>, 1), /label "other"/);
    assert.throws(() => h.observe({ verb: 'GET' }, Number.NaN), /not a finite number/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram as PromHistogram, Registry, type Metric } from 'prom-client';
import { Histogram } from './histogram.ts';

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

  it('exports zeros before its first observation when it has no labels, and forgets every series on a reset, as prom-client does', async () => {
    const ours = new Histogram({ name: 'p_seconds', help: 'p', buckets: [1] });
    const theirs = new PromHistogram({ name: 'p_seconds', help: 'p', buckets: [1], registers: [] });
    assert.equal(await exported(ours), await exported(theirs));
    ours.observe(0.5);
    theirs.observe(0.5);
    assert.match(await exported(ours), /^p_seconds_count 1$/m);
    ours.reset();
    theirs.reset();
    assert.equal(await exported(ours), await exported(theirs));
  });

  it("takes prom-client's buckets when given none", async () => {
    const ours = new Histogram({ name: 'd_seconds', help: 'd' });
    const theirs = new PromHistogram({ name: 'd_seconds', help: 'd', registers: [] });
    for (const v of [0.001, 0.007, 0.3, 3, 30]) {
      ours.observe(v);
      theirs.observe(v);
    }
    assert.equal(await exported(ours), await exported(theirs));
  });

  it('keeps one series per label values, whatever order the labels are given in', async () => {
    const h = new Histogram({ name: 'o', help: 'o', labelNames: ['verb', 'host'], buckets: [1] });
    h.observe({ verb: 'GET', host: 'a' }, 1);
    h.observe({ host: 'a', verb: 'GET' }, 1);
    assert.deepEqual(
      (await h.get()).values.filter((v) => v.metricName === 'o_count').map((v) => v.value),
      [2],
    );
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

  it('forgets a removed label set, and refuses a label it was not given, a value that is not finite, or a bad name', async () => {
    const h = new Histogram({ name: 'r', help: 'r', labelNames: ['verb', 'host'], buckets: [1] });
    h.observe({ verb: 'GET', host: 'a' }, 1);
    h.observe({ verb: 'GET', host: 'b' }, 1);
    h.remove({ verb: 'GET', host: 'a' });
    assert.deepEqual(new Set((await h.get()).values.map((v) => v.labels['host'])), new Set(['b']));
    // Refused for a series it has as for a new one, and by remove too.
    assert.throws(() => h.observe({ verb: 'GET', host: 'b', other: 'x' } as Record<string, string>, 1), /label "other"/);
    assert.throws(() => h.remove({ verb: 'GET', host: 'b', other: 'x' } as Record<string, string>), /label "other"/);
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) assert.throws(() => h.observe({ verb: 'GET' }, v), /not a finite number/);
    assert.throws(() => new Histogram({ name: 'bad-name', help: 'x' }), /invalid metric name/);
    assert.throws(() => new Histogram({ name: 'x', help: 'x', labelNames: ['le'] }), /invalid label name/);
  });
});

// A histogram exported as prom-client's are, cheaper per observation: the sync observes several
// per copy, and prom-client's hashes the label set and turns the bucket's bound into a string key
// on each. Here a series is found by its label values joined, and a bucket by comparing numbers.
import type { LabelValues, MetricObjectWithValues, MetricType, MetricValueWithName } from 'prom-client';

/** prom-client's default buckets, for a histogram that names none. */
const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export interface HistogramSettings<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
  /** Upper bounds, in any order; prom-client's defaults when absent. */
  readonly buckets?: readonly number[];
}

/** One label set's observations: a count per bucket (not cumulative), then the sum and count. */
interface Series<L extends string> {
  readonly labels: LabelValues<L>;
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

export class Histogram<L extends string = string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, Series<L>>();

  constructor(s: HistogramSettings<L>) {
    if (!METRIC_NAME.test(s.name)) throw new Error(`invalid metric name: ${s.name}`);
    for (const label of s.labelNames ?? []) {
      if (!LABEL_NAME.test(label) || label === 'le') throw new Error(`${s.name}: invalid label name: ${label}`);
    }
    this.name = s.name;
    this.help = s.help;
    this.labelNames = s.labelNames ?? [];
    this.bounds = [...(s.buckets ?? DEFAULT_BUCKETS)].sort((a, b) => a - b);
    // As prom-client's: one without labels exports its zeros before its first observation.
    if (this.labelNames.length === 0) this.seriesOf({});
  }

  observe(value: number): void;
  observe(labels: LabelValues<L>, value: number): void;
  observe(labelsOrValue: LabelValues<L> | number, value?: number): void {
    const v = typeof labelsOrValue === 'number' ? labelsOrValue : (value ?? NaN);
    if (!Number.isFinite(v)) throw new TypeError(`${this.name}: value is not a finite number: ${v}`);
    const series = this.seriesOf(typeof labelsOrValue === 'number' ? {} : labelsOrValue);
    series.sum += v;
    series.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (v <= bounds[i]!) {
        series.buckets[i]!++;
        break;
      }
    }
  }

  remove(labels: LabelValues<L>): void {
    this.series.delete(this.keyOf(labels));
  }

  /** Forgets every series, as prom-client's reset does (one without labels too, until observed again). */
  reset(): void {
    this.series.clear();
  }

  /** The series as prom-client's histogram gives them: cumulative buckets with `le`, then the sum and count. */
  get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: MetricValueWithName<string>[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      for (const [i, le] of this.bounds.entries()) {
        cumulative += s.buckets[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    // prom-client's typings declare `type` an enum and require `collect`; its own metrics hold the
    // type's name as a string, and the registry reads no `collect` from what get() returns.
    return Promise.resolve({ name: this.name, help: this.help, type: this.type as unknown as MetricType, aggregator: this.aggregator, collect: () => undefined, values });
  }

  private seriesOf(labels: LabelValues<L>): Series<L> {
    const key = this.keyOf(labels);
    let series = this.series.get(key);
    if (!series) this.series.set(key, (series = { labels: { ...labels }, buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    return series;
  }

  /** The series' key, once every label is known to be one of this histogram's (prom-client refuses others too). */
  private keyOf(labels: LabelValues<L>): string {
    for (const name in labels) {
      if (!this.labelNames.includes(name)) throw new Error(`${this.name}: label "${name}" is not one of ${this.labelNames.join(', ')}`);
    }
    let key = '';
    const names = this.labelNames;
    for (let i = 0; i < names.length; i++) key += `${i > 0 ? '\u0000' : ''}${labels[names[i]!] ?? ''}`;
    return key;
  }
}

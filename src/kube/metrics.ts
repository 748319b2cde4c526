// One prom-client registry for the whole process. Every module registers its metrics here through
// the get-or-create helpers, so a module evaluated twice (tests, several clusters) never throws
// "metric already registered" and all instances share one series family.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration, LabelValues, Metric, MetricObjectWithValues, MetricType, MetricValueWithName } from 'prom-client';

export const registry = new Registry();

let defaultsCollected = false;

/** Adds the Node process metrics (CPU, memory, event loop lag); idempotent. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry });
}

function getOrCreate<M>(name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

export function counter<L extends string>(cfg: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
  return getOrCreate(cfg.name, () => new Counter<L>({ ...cfg, registers: [registry] }));
}

export function gauge<L extends string>(cfg: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
  return getOrCreate(cfg.name, () => new Gauge<L>({ ...cfg, registers: [registry] }));
}

/** One label set's observations: a count per bucket (not cumulative), then the sum and count. */
interface Series<L extends string> {
  readonly labels: LabelValues<L>;
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram exported as prom-client's are, cheaper per observation: the sync observes several
 * per copy, and prom-client's hashes the label set and turns the bucket's bound into a string key
 * on each. Here a series is found by its label values joined, and a bucket by comparing numbers.
 */
export class Histogram<L extends string = string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, Series<L>>();

  constructor(cfg: { name: string; help: string; labelNames?: readonly L[]; buckets?: readonly number[] }) {
    this.name = cfg.name;
    this.help = cfg.help;
    this.labelNames = cfg.labelNames ?? [];
    this.bounds = [...(cfg.buckets ?? DEFAULT_BUCKETS)].sort((a, b) => a - b);
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

  reset(): void {
    this.series.clear();
    if (this.labelNames.length === 0) this.seriesOf({});
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
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    // prom-client's own metrics say their type as a string too; its declared enum is never what they hold.
    return Promise.resolve({ name: this.name, help: this.help, type: this.type as unknown as MetricType, aggregator: this.aggregator, collect: () => undefined, values });
  }

  private seriesOf(labels: LabelValues<L>): Series<L> {
    const key = this.keyOf(labels);
    let series = this.series.get(key);
    if (!series) {
      for (const name of Object.keys(labels)) if (!this.labelNames.includes(name as L)) throw new Error(`${this.name}: label "${name}" is not one of ${this.labelNames.join(', ')}`);
      this.series.set(key, (series = { labels: { ...labels }, buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    }
    return series;
  }

  private keyOf(labels: LabelValues<L>): string {
    return this.labelNames.map((n) => String(labels[n] ?? '')).join('\u0000');
  }
}

/** prom-client's default buckets, for a histogram that names none. */
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function histogram<L extends string>(cfg: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
  return getOrCreate(cfg.name, () => {
    const h = new Histogram<L>(cfg);
    // The registry reads a metric through its name, help, type and get(); this one is not a prom-client class.
    registry.registerMetric(h as unknown as Metric);
    return h;
  });
}

/** Exponential buckets like Prometheus' Go client `ExponentialBuckets(start, factor, count)`. */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

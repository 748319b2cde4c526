// One prom-client registry for the whole process. Every module registers its metrics here through
// the get-or-create helpers, so a module evaluated twice (tests, several clusters) never throws
// "metric already registered" and all instances share one series family.
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, Metric } from 'prom-client';
import { Histogram, type HistogramSettings } from './histogram.ts';

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

export function histogram<L extends string>(cfg: HistogramSettings<L>): Histogram<L> {
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

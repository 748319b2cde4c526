// Charts for the benchmark report as standalone SVG text, written by hand so that the report needs
// nothing beyond Node: line charts (measurements, fits), cumulative distributions and histograms,
// with ticked axes, axis labels and a legend. Everything here is pure: data in, markup out.

export interface Axis {
  label: string;
  /** Bounds the axis must include; by default the data's, widened to round ticks (y from 0). */
  min?: number;
  max?: number;
  /** Counts (clusters, objects): no ticks between whole numbers. */
  integer?: boolean;
}

export interface Series {
  label: string;
  points: readonly (readonly [number, number])[];
  /** A fit or a model of the series before it rather than measurements: in its colour, dashed, without markers. */
  dashed?: boolean;
}

export interface LineChart {
  title: string;
  x: Axis;
  y: Axis;
  series: readonly Series[];
  /** Hold each value until the next point (a cumulative distribution) instead of joining points straight. */
  steps?: boolean;
}

/** Samples of one quantity, for the distribution charts. */
export interface Samples {
  label: string;
  values: readonly number[];
}

export interface Distribution {
  title: string;
  x: Axis;
  series: readonly Samples[];
  /** Samples above are left out of the drawing (a few outliers would squeeze the rest) but still counted. */
  upTo?: number;
}

const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 72, right: 24, top: 44, bottom: 56 };
const TICKS = 6;
const HISTOGRAM_BINS = 30;
/** Colour-blind-safe (Okabe–Ito), in the order series are drawn. */
const PALETTE = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9'];

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Maps `domain` linearly onto `range` (either may run backwards, as a y axis does). */
export function linearScale(domain: readonly [number, number], range: readonly [number, number]): (v: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/**
 * Round tick values covering [min, max], about `count` of them, a step of 1, 2 or 5 times a power
 * of ten; the first tick is at or below min and the last at or above max.
 */
export function niceTicks(min: number, max: number, count = TICKS, minStep = 0): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  if (min === max) [min, max] = min === 0 ? [0, 1] : [Math.min(0, min), Math.max(0, max)];
  const raw = Math.max(minStep, (max - min) / Math.max(1, count - 1));
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const first = Math.floor(min / step + 1e-9);
  const last = Math.ceil(max / step - 1e-9);
  // Multiples of an integer step count, so 0.1 + 0.2 never prints as 0.30000000000000004.
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return Array.from({ length: last - first + 1 }, (_, i) => Number(((first + i) * step).toFixed(decimals)));
}

/** A tick label: thousands grouped, no more decimals than the step between ticks needs. */
export function tickLabel(v: number, ticks: readonly number[]): string {
  const step = ticks.length > 1 ? Math.abs((ticks[1] ?? 0) - (ticks[0] ?? 0)) : 1;
  const decimals = step >= 1 || step === 0 ? 0 : Math.min(6, Math.ceil(-Math.log10(step) - 1e-9));
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

const fixed = (v: number) => Number(v.toFixed(2)).toString();

interface Frame {
  x: (v: number) => number;
  y: (v: number) => number;
  body: string[];
}

interface LegendEntry {
  label: string;
  color: string;
  dashed?: boolean;
}

const LEGEND_ROW = 18;
const legendSize = (entries: readonly LegendEntry[]) => ({ width: 34 + Math.max(...entries.map((e) => e.label.length)) * 6.6, height: entries.length * LEGEND_ROW + 4 });

/** The frame every chart shares: title, axes with ticks, grid lines and labels; scales for the plot. */
function frame(title: string, x: Axis, y: Axis, xs: readonly number[], ys: readonly number[]): Frame {
  const xTicks = niceTicks(Math.min(x.min ?? Infinity, ...xs), Math.max(x.max ?? -Infinity, ...xs), TICKS, x.integer ? 1 : 0);
  const yTicks = niceTicks(Math.min(y.min ?? 0, ...ys), Math.max(y.max ?? -Infinity, ...ys));
  const left = MARGIN.left;
  const right = WIDTH - MARGIN.right;
  const top = MARGIN.top;
  const bottom = HEIGHT - MARGIN.bottom;
  const sx = linearScale([xTicks[0] ?? 0, xTicks.at(-1) ?? 1], [left, right]);
  const sy = linearScale([yTicks[0] ?? 0, yTicks.at(-1) ?? 1], [bottom, top]);
  const body = [
    `<text x="${WIDTH / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    ...xTicks.map((t) => `<line x1="${fixed(sx(t))}" y1="${top}" x2="${fixed(sx(t))}" y2="${bottom}" stroke="#e5e5e5"/><text x="${fixed(sx(t))}" y="${bottom + 18}" text-anchor="middle">${escapeXml(tickLabel(t, xTicks))}</text>`),
    ...yTicks.map((t) => `<line x1="${left}" y1="${fixed(sy(t))}" x2="${right}" y2="${fixed(sy(t))}" stroke="#e5e5e5"/><text x="${left - 8}" y="${fixed(sy(t) + 4)}" text-anchor="end">${escapeXml(tickLabel(t, yTicks))}</text>`),
    `<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="#333"/>`,
    `<text x="${(left + right) / 2}" y="${HEIGHT - 14}" text-anchor="middle">${escapeXml(x.label)}</text>`,
    `<text transform="translate(18 ${(top + bottom) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(y.label)}</text>`,
  ];
  return { x: sx, y: sy, body };
}

/**
 * The inner corner of the plot where a legend box of `size` covers the fewest of `marks` (points in
 * SVG coordinates, lines sampled along their length), top left on a tie.
 */
export function legendCorner(marks: readonly (readonly [number, number])[], size: { width: number; height: number }): { x: number; y: number } {
  const pad = 8;
  const corners = [
    { x: MARGIN.left + pad, y: MARGIN.top + pad },
    { x: WIDTH - MARGIN.right - pad - size.width, y: MARGIN.top + pad },
    { x: WIDTH - MARGIN.right - pad - size.width, y: HEIGHT - MARGIN.bottom - pad - size.height },
    { x: MARGIN.left + pad, y: HEIGHT - MARGIN.bottom - pad - size.height },
  ];
  const covered = (c: { x: number; y: number }) => marks.filter(([mx, my]) => mx >= c.x && mx <= c.x + size.width && my >= c.y && my <= c.y + size.height).length;
  return corners.reduce((best, c) => (covered(c) < covered(best) ? c : best));
}

/** Points along each polyline, closer than a legend row, so that a legend is not put across a line between two points. */
function sampled(lines: readonly (readonly (readonly [number, number])[])[]): [number, number][] {
  return lines.flatMap((line) =>
    line.flatMap(([x1, y1], k) => {
      const next = line[k + 1];
      if (!next) return [[x1, y1] as [number, number]];
      const steps = Math.max(1, Math.ceil(Math.hypot(next[0] - x1, next[1] - y1) / (LEGEND_ROW / 2)));
      return Array.from({ length: steps }, (_, s) => [x1 + ((next[0] - x1) * s) / steps, y1 + ((next[1] - y1) * s) / steps] as [number, number]);
    }),
  );
}

/** One line per series, in the corner where it hides the least data, on a white ground. */
function legend(entries: readonly LegendEntry[], marks: readonly (readonly [number, number])[]): string[] {
  const size = legendSize(entries);
  const corner = legendCorner(marks, size);
  const x = corner.x + 6;
  const y = corner.y + 8;
  return [
    `<rect x="${fixed(corner.x)}" y="${fixed(corner.y)}" width="${fixed(size.width)}" height="${size.height}" fill="#fff" fill-opacity="0.85" stroke="#ccc"/>`,
    ...entries.map((e, i) => {
      const ly = y + i * LEGEND_ROW + 4;
      return `<line x1="${x}" y1="${ly}" x2="${x + 20}" y2="${ly}" stroke="${e.color}" stroke-width="2.5"${e.dashed ? ' stroke-dasharray="6 4"' : ''}/><text x="${x + 26}" y="${ly + 4}">${escapeXml(e.label)}</text>`;
    }),
  ];
}

function document(body: readonly string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

const colorOf = (i: number) => PALETTE[i % PALETTE.length] ?? '#000';

/** Each series' colour: the next of the palette, or for a dashed series the colour of the one it models. */
function seriesColors(series: readonly Series[]): string[] {
  let next = 0;
  return series.map((s, i) => colorOf(s.dashed && i > 0 ? next - 1 : next++));
}

export function lineChart(spec: LineChart): string {
  const points = spec.series.flatMap((s) => s.points);
  const f = frame(
    spec.title,
    spec.x,
    spec.y,
    points.map((p) => p[0]),
    points.map((p) => p[1]),
  );
  // Each series as the polyline drawn, in SVG coordinates: a step chart holds a value until the next point.
  const polylines = spec.series.map((s) =>
    s.points.flatMap(([px, py], k) => {
      const prev = s.points[k - 1];
      const at = [f.x(px), f.y(py)] as const;
      return spec.steps && prev ? [[at[0], f.y(prev[1])] as const, at] : [at];
    }),
  );
  const colors = seriesColors(spec.series);
  const lines = spec.series.flatMap((s, i) => {
    const color = colors[i] ?? '#000';
    const path = (polylines[i] ?? []).map(([px, py], k) => `${k === 0 ? 'M' : 'L'}${fixed(px)} ${fixed(py)}`).join(' ');
    const markers = s.dashed || spec.steps ? [] : s.points.map(([px, py]) => `<circle cx="${fixed(f.x(px))}" cy="${fixed(f.y(py))}" r="3.5" fill="${color}"/>`);
    return [`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`, ...markers];
  });
  const entries = spec.series.map((s, i) => ({ label: s.label, color: colors[i] ?? '#000', ...(s.dashed ? { dashed: true } : {}) }));
  return document([...f.body, ...lines, ...legend(entries, sampled(polylines))]);
}

/** The empirical cumulative distribution of each series: the fraction of samples at or below x. */
export function cdfChart(spec: Distribution): string {
  return lineChart({
    title: spec.title,
    x: spec.x,
    y: { label: 'fraction of samples at or below', min: 0, max: 1 },
    steps: true,
    series: spec.series.map((s) => {
      const sorted = [...s.values].sort((a, b) => a - b);
      return { label: s.label, points: sorted.map((v, i) => [v, (i + 1) / sorted.length] as const).filter(([v]) => v <= (spec.upTo ?? Infinity)) };
    }),
  });
}

/** Bins shared by every series over the span of all samples; each series' bars show the share of its own samples per bin. */
export function histogram(spec: Distribution): string {
  const all = spec.series.flatMap((s) => s.values).filter((v) => v <= (spec.upTo ?? Infinity));
  const lo = Math.min(spec.x.min ?? Infinity, ...all);
  const hi = Math.max(spec.x.max ?? -Infinity, ...all);
  const width = (hi - lo) / HISTOGRAM_BINS || 1;
  const shares = spec.series.map((s) => {
    const counts = new Array<number>(HISTOGRAM_BINS).fill(0);
    for (const v of s.values) {
      if (v > hi) continue;
      const bin = Math.min(HISTOGRAM_BINS - 1, Math.max(0, Math.floor((v - lo) / width)));
      counts[bin] = (counts[bin] ?? 0) + 1;
    }
    return counts.map((c) => c / Math.max(1, s.values.length));
  });
  const f = frame(spec.title, { ...spec.x, min: lo, max: hi }, { label: 'share of samples', min: 0 }, [lo, hi], shares.flat());
  // Side by side within each bin, so that no series hides another.
  const barWidth = (f.x(lo + width) - f.x(lo)) / Math.max(1, spec.series.length);
  const rects = shares.flatMap((bins, i) => bins.flatMap((share, b) => (share === 0 ? [] : [{ x: f.x(lo + b * width) + i * barWidth, top: f.y(share), color: colorOf(i) }])));
  const bars = rects.map((r) => `<rect x="${fixed(r.x)}" y="${fixed(r.top)}" width="${fixed(Math.max(0.5, barWidth - 0.5))}" height="${fixed(f.y(0) - r.top)}" fill="${r.color}"/>`);
  // A bar is covered anywhere along its height.
  const marks = sampled(rects.map((r) => [[r.x, r.top], [r.x, f.y(0)]] as const));
  return document([...f.body, ...bars, ...legend(spec.series.map((s, i) => ({ label: s.label, color: colorOf(i) })), marks)]);
}

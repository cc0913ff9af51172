import { html, type SafeHtml } from './html.ts';

/** One stacked layer of a bar chart: a value per bucket, in the buckets' order. */
export interface ChartSeries {
  readonly label: string;
  readonly values: readonly number[];
}

export interface BarChart {
  readonly title: string;
  readonly buckets: readonly Date[];
  /** The x axis' text for a bucket. */
  readonly bucketLabel: (at: Date) => string;
  readonly series: readonly ChartSeries[];
  /** A value as the axis and tooltips write it. */
  readonly format: (value: number) => string;
}

/** Distinct on light backgrounds; the last, grey, is for `other`. */
export const PALETTE = ['#2f5bea', '#18a0a0', '#e0822d', '#8a4fd8', '#d2437a', '#5a9e2f', '#c9a227', '#8b95a5'] as const;
const [WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM] = [640, 220, 60, 8, 10, 22];

/**
 * A stacked bar chart as inline SVG, drawn on the server: no script and no chart library (the CSP
 * allows neither). Each bar segment has a `<title>`, which browsers show on hover.
 */
export function barChart(chart: BarChart): SafeHtml {
  const n = chart.buckets.length;
  const totals = chart.buckets.map((_, i) => chart.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const top = niceCeiling(Math.max(0, ...totals));
  // No data is not zero (operations.md §3.2): say so rather than draw an empty axis.
  if (top === 0 || n === 0) return html`<section class="chart"><h2>${chart.title}</h2><p class="empty">No requests in this period.</p></section>`;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const step = plotWidth / n;
  const barWidth = Math.max(1, step * 0.72);
  const y = (value: number): number => TOP + plotHeight - (value / top) * plotHeight;
  const grid = [0, top / 2, top].map(
    (v) => html`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${fixed(y(v))}" y2="${fixed(y(v))}" stroke="#dde2ea"/><text x="${LEFT - 6}" y="${fixed(y(v) + 4)}" text-anchor="end">${chart.format(v)}</text>`,
  );
  const bars = chart.buckets.map((at, i) => {
    let base = 0;
    const x = LEFT + i * step + (step - barWidth) / 2;
    return chart.series.map((s, j) => {
      const value = s.values[i] ?? 0;
      if (value <= 0) return '';
      const [from, to] = [y(base), y(base + value)];
      base += value;
      return html`<rect x="${fixed(x)}" y="${fixed(to)}" width="${fixed(barWidth)}" height="${fixed(Math.max(0.5, from - to))}" fill="${colour(j, s.label)}"><title>${s.label} · ${chart.bucketLabel(at)}: ${chart.format(value)}</title></rect>`;
    });
  });
  // The first and last labels are anchored at their bar's outer edge, so neither runs off the chart.
  const ticks = [...new Set([0, Math.floor(n / 2), n - 1])].map((i) => {
    const at = chart.buckets[i];
    const [x, anchor] = i === 0 ? [LEFT + i * step, 'start'] : i === n - 1 ? [LEFT + (i + 1) * step, 'end'] : [LEFT + i * step + step / 2, 'middle'];
    return at ? html`<text x="${fixed(x)}" y="${HEIGHT - 6}" text-anchor="${anchor}">${chart.bucketLabel(at)}</text>` : '';
  });
  const legend = chart.series.map(
    (s, j) => html`<li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill="${colour(j, s.label)}"/></svg>${s.label}</li>`,
  );
  return html`<section class="chart"><h2>${chart.title}</h2>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${chart.title}">${grid}${bars}${ticks}</svg>
<ul class="legend">${legend}</ul></section>`;
}

const colour = (index: number, label: string): string => (label === 'other' ? '#8b95a5' : (PALETTE[index % (PALETTE.length - 1)] ?? '#8b95a5'));
const fixed = (value: number): string => value.toFixed(1);

/** The axis' top: 1, 2 or 5 times a power of ten, at or above `value`. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 0;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((m) => m * power >= value * (1 - 1e-9)) ?? 10;
  return step * power;
}

import { picoToUsdNumber } from '../billing/money.ts';
import type { GatewayMiddleware } from '../http/state.ts';
import type { SeriesPoint, Store } from '../store/store.ts';
import { barChart, PALETTE, type ChartSeries } from './charts.ts';
import { queryText } from './forms.ts';
import { count, percent, usd, usdShort } from './format.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

/** The periods the page offers: bucket width, how many buckets, and how the axis writes one. */
const RANGES = {
  '24h': { seconds: 3600, buckets: 24, label: (at: Date) => `${at.toISOString().slice(11, 13)}:00` },
  '7d': { seconds: 6 * 3600, buckets: 28, label: (at: Date) => `${at.toISOString().slice(5, 10)} ${at.toISOString().slice(11, 13)}h` },
  '30d': { seconds: 86400, buckets: 30, label: (at: Date) => at.toISOString().slice(5, 10) },
} as const;
type Range = keyof typeof RANGES;

/** GET /dashboard/usage?range=24h|7d|30d: spend and requests over time, by model and by key. */
export function createUsagePage(store: Store): GatewayMiddleware {
  return async (ctx) => {
    const asked = queryText(ctx, 'range');
    const range: Range = asked in RANGES ? (asked as Range) : '7d';
    const { seconds, buckets: n, label } = RANGES[range];
    const width = seconds * 1000;
    const since = (Math.floor(Date.now() / width) - (n - 1)) * width;
    const buckets = Array.from({ length: n }, (_, i) => new Date(since + i * width));
    const [byModel, byKey] = await Promise.all([
      store.usageSeries({ since: new Date(since), bucketSeconds: seconds, by: 'model' }),
      store.usageSeries({ since: new Date(since), bucketSeconds: seconds, by: 'key' }),
    ]);
    const spend = (p: SeriesPoint): number => picoToUsdNumber(p.charged);
    const requests = (p: SeriesPoint): number => p.requests;
    const chart = (title: string, points: readonly SeriesPoint[], value: (p: SeriesPoint) => number, format: (v: number) => string) =>
      barChart({ title, buckets, bucketLabel: label, series: seriesOf(points, buckets, value), format });
    const total = byModel.reduce((t, p) => ({ requests: t.requests + p.requests, failed: t.failed + p.failed, charged: t.charged + p.charged, tokens: t.tokens + p.tokens }), {
      requests: 0, failed: 0, charged: 0n, tokens: 0,
    });
    ctx.type = 'html';
    ctx.body = page({ title: 'Usage', active: 'usage', body: html`<div class="tabs">${(Object.keys(RANGES) as Range[]).map(
      (r) => html`<a href="/dashboard/usage?range=${r}"${r === range ? html` aria-current="page"` : ''}>Last ${r}</a>`,
    )}</div>
<div class="totals">
  <div>Spend<b>${usd(total.charged)}</b></div><div>Requests<b>${count(total.requests)}</b></div>
  <div>Failed<b>${count(total.failed)}</b><span class="muted">${percent(total.failed, total.requests)}</span></div><div>Tokens<b>${count(total.tokens)}</b></div>
</div>
<div class="charts">
${chart('Spend by model', byModel, spend, usdShort)}
${chart('Requests by model', byModel, requests, count)}
${chart('Spend by key', byKey, spend, usdShort)}
${chart('Requests by key', byKey, requests, count)}
</div>
<p class="muted">From the ledger, in UTC buckets of ${seconds / 3600} h. Spend is what keys were charged.</p>` });
  };
}

/** One series per group, largest first; beyond the palette's colours, the rest as `other`. */
export function seriesOf(points: readonly SeriesPoint[], buckets: readonly Date[], value: (p: SeriesPoint) => number): ChartSeries[] {
  const index = new Map(buckets.map((at, i) => [at.getTime(), i]));
  const groups = new Map<string, number[]>();
  for (const point of points) {
    const i = index.get(point.bucket.getTime());
    if (i === undefined) continue;
    const values = groups.get(point.group) ?? buckets.map(() => 0);
    values[i] = (values[i] ?? 0) + value(point);
    groups.set(point.group, values);
  }
  const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
  const ranked = [...groups].filter(([, v]) => sum(v) > 0).sort((a, b) => sum(b[1]) - sum(a[1]));
  const room = PALETTE.length - 1;
  if (ranked.length <= room) return ranked.map(([label, values]) => ({ label, values }));
  const other = buckets.map((_, i) => ranked.slice(room - 1).reduce((t, [, v]) => t + (v[i] ?? 0), 0));
  return [...ranked.slice(0, room - 1).map(([label, values]) => ({ label, values })), { label: 'other', values: other }];
}

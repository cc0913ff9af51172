import { expect } from 'chai';
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../src/metrics/series.ts';

/**
 * The request series are kept in cells resolved once per label set (issue #17), and must read
 * exactly as prom-client's own Counter and Histogram do: the scrape text, the JSON the cluster's
 * aggregation reads, and that aggregation itself.
 */
const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const SETS = [
  { endpoint: 'messages', route_kind: 'native' },
  { endpoint: 'chat_completions', route_kind: 'translated' },
  { endpoint: 'responses', route_kind: 'native' },
];

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The same observations into prom-client's metrics and into the series. */
function fill(seed: number): { theirs: Registry; ours: Registry } {
  const theirs = new Registry();
  const ours = new Registry();
  const counter = new Counter({ name: 'c_total', help: 'A counter.', labelNames: ['endpoint', 'route_kind'], registers: [theirs] });
  const histogram = new Histogram({ name: 'h_seconds', help: 'A histogram.', labelNames: ['endpoint', 'route_kind'], buckets: BOUNDS, registers: [theirs] });
  const seriesCounter = new SeriesCounter('c_total', 'A counter.', ours);
  const seriesHistogram = new SeriesHistogram('h_seconds', 'A histogram.', BOUNDS, ours);
  const random = prng(seed);
  for (let i = 0; i < 2000; i++) {
    const labels = SETS[Math.floor(random() * SETS.length)] as (typeof SETS)[number];
    const key = `${labels.endpoint}\u0000${labels.route_kind}`;
    // Values on the bounds, between them, at zero and past the last one.
    const pick = random();
    const value = pick < 0.3 ? (BOUNDS[Math.floor(random() * BOUNDS.length)] as number) : pick < 0.35 ? 0 : pick < 0.45 ? 3 + random() * 100 : random() * 2.5;
    const by = Math.floor(random() * 5) + 1;
    counter.inc(labels, by);
    seriesCounter.cell(key, () => labels).value += by;
    histogram.observe(labels, value);
    seriesHistogram.observe(seriesHistogram.cell(key, () => labels), value);
  }
  return { theirs, ours };
}

describe('request series (cells resolved once)', () => {
  it('scrape as prom-client\'s Counter and Histogram do, text and JSON, on 2,000 seeded observations', async () => {
    const { theirs, ours } = fill(17);
    const text = await ours.metrics();
    expect(text).to.equal(await theirs.metrics());
    expect(text).to.include('h_seconds_bucket{le="+Inf",endpoint="messages",route_kind="native"}');
    // As the cluster's IPC carries it (JSON), less prom-client's `exemplar: null` (exemplars are off).
    const plain = (metrics: unknown): unknown => JSON.parse(JSON.stringify(metrics, (name, value: unknown) => (name === 'exemplar' ? undefined : value)));
    expect(plain(await ours.getMetricsAsJSON())).to.deep.equal(plain(await theirs.getMetricsAsJSON()));
  });

  it('aggregate across workers as prom-client\'s own metrics do (serve --workers)', async () => {
    const a = fill(1);
    const b = fill(2);
    const theirs = AggregatorRegistry.aggregate([await a.theirs.getMetricsAsJSON(), await b.theirs.getMetricsAsJSON()]);
    const ours = AggregatorRegistry.aggregate([await a.ours.getMetricsAsJSON(), await b.ours.getMetricsAsJSON()]);
    expect(await ours.metrics()).to.equal(await theirs.metrics());
  });

  it('reset to zero in place: a cell a caller holds keeps counting', async () => {
    const registry = new Registry();
    const counter = new SeriesCounter('c_total', 'A counter.', registry);
    const histogram = new SeriesHistogram('h_seconds', 'A histogram.', BOUNDS, registry);
    const cell = counter.cell('a', () => ({ endpoint: 'a' }));
    const timed = histogram.cell('a', () => ({ endpoint: 'a' }));
    cell.value += 5;
    histogram.observe(timed, 0.2);
    registry.resetMetrics();
    cell.value += 2;
    histogram.observe(timed, 0.01);
    // Not a finite number: not counted (prom-client threw).
    histogram.observe(timed, Number.NaN);
    histogram.observe(timed, Number.POSITIVE_INFINITY);
    const text = await registry.metrics();
    expect(text).to.include('c_total{endpoint="a"} 2\n');
    expect(text).to.include('h_seconds_count{endpoint="a"} 1\n').and.include('h_seconds_bucket{le="0.01",endpoint="a"} 1\n').and.include('h_seconds_bucket{le="0.005",endpoint="a"} 0\n');
  });
});

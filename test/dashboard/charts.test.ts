import { expect } from 'chai';
import { barChart, niceCeiling } from '../../src/dashboard/charts.ts';
import { seriesOf } from '../../src/dashboard/usage-page.ts';

const buckets = [0, 1, 2].map((h) => new Date(Date.UTC(2026, 10, 22, h)));
const label = (at: Date) => `${at.getUTCHours()}h`;
const point = (hour: number, group: string, requests: number) => ({ bucket: buckets[hour] as Date, group, requests, failed: 0, charged: 0n, tokens: 0 });

describe('dashboard charts', () => {
  it('draws stacked bars as inline SVG, with an escaped title per segment and a legend', () => {
    const svg = barChart({ title: 'Requests', buckets, bucketLabel: label, format: String, series: [
      { label: '<m>', values: [1, 0, 3] },
      { label: 'n', values: [1, 2, 0] },
    ] }).text;
    expect(svg).to.include('<svg viewBox="0 0 640 220" role="img" aria-label="Requests">');
    expect(svg.match(/<rect x=/g)).to.have.length(4); // zero values draw nothing
    expect(svg).to.include('<title>&lt;m&gt; · 2h: 3</title>');
    expect(svg).to.include('&lt;m&gt;</li>');
    expect(svg).not.to.include('<m>');
    expect(svg).not.to.match(/NaN|Infinity/);
  });

  it('says there is no data rather than drawing an empty axis', () => {
    expect(barChart({ title: 'Spend', buckets, bucketLabel: label, format: String, series: [] }).text).to.include('No requests in this period.');
  });

  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 7, 10, 11, 0.0031, 240].map(niceCeiling)).to.deep.equal([0, 1, 5, 10, 10, 20, 0.005, 500]);
  });

  it('puts the largest groups first and the rest under other', () => {
    const points = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((g, i) => point(i % 3, g, i + 1));
    const series = seriesOf(points, buckets, (p) => p.requests);
    expect(series.map((s) => s.label)).to.deep.equal(['i', 'h', 'g', 'f', 'e', 'd', 'other']);
    expect(series.at(-1)?.values).to.deep.equal([1, 2, 3]); // a, b and c
  });
});

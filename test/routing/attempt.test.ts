import { expect } from 'chai';
import { retryAfterMs, retryClassOf } from '../../src/routing/attempt.ts';

describe('attempt classification', () => {
  it('retries transient statuses, moves on from rate limits, never retries request errors', () => {
    expect([500, 502, 503, 504, 408].map(retryClassOf)).to.deep.equal(['same', 'same', 'same', 'same', 'same']);
    expect([429, 529].map(retryClassOf)).to.deep.equal(['rate', 'rate']);
    expect([400, 401, 403, 404, 413, 422].map(retryClassOf)).to.deep.equal(['never', 'never', 'never', 'never', 'never', 'never']);
  });

  it('reads retry-after as seconds, an HTTP date, or retry-after-ms first', () => {
    const headers = (h: Record<string, string>) => (name: string) => h[name];
    expect(retryAfterMs(headers({ 'retry-after': '2' }))).to.equal(2000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }))).to.equal(500);
    expect(retryAfterMs(headers({ 'retry-after-ms': '150', 'retry-after': '9' }))).to.equal(150);
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryAfterMs(headers({ 'retry-after': 'Sun, 22 Nov 2026 10:00:05 GMT' }), now)).to.equal(5000);
    expect(retryAfterMs(headers({}))).to.equal(null);
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).to.equal(null);
    expect(retryAfterMs(headers({ 'retry-after': '-3' }))).to.equal(null);
  });
});

import { expect } from 'chai';
import { isoTime } from '../../src/util/iso-time.ts';

describe('isoTime', () => {
  it('writes what toISOString writes, across seconds, years and signs', () => {
    // A seeded generator: the same 20,000 times every run.
    let seed = 17;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const times: number[] = [0, -0, 1, -1, 999, 1000, -999, -1000, -1001, 1.7, -1.7, 253402300799999, 253402300800000, -62167219200000, -62167219200001, 8.64e15, -8.64e15];
    for (let i = 0; i < 20000; i++) {
      const base = (random() * 2 - 1) * (i % 2 === 0 ? 4e12 : 8.64e15);
      times.push(Math.round(base), Math.round(base) + Math.floor(random() * 3)); // often the same second twice
    }
    for (const ms of times) expect(isoTime(ms), String(ms)).to.equal(new Date(ms).toISOString());
  });

  it('runs through a second in order, as a clock does', () => {
    const start = Date.UTC(2026, 10, 29, 5, 59, 59, 0);
    for (let ms = start; ms < start + 2500; ms++) expect(isoTime(ms)).to.equal(new Date(ms).toISOString());
  });

  it('throws as toISOString does outside the date range', () => {
    for (const ms of [NaN, Infinity, 8.64e15 + 1]) expect(() => isoTime(ms)).to.throw(RangeError);
  });
});

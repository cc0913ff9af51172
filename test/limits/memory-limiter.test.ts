import { expect } from 'chai';
import type { RateLimits } from '../../src/limits/limiter.ts';
import { duration } from '../../src/limits/headers.ts';
import { MemoryRateLimiter } from '../../src/limits/memory-limiter.ts';

const limits = (set: Partial<RateLimits>): RateLimits => ({ rpm: null, tpm: null, concurrency: null, ...set });

describe('in-memory rate limiter', () => {
  let now: number;
  let limiter: MemoryRateLimiter;
  beforeEach(() => {
    now = 1_000_000;
    limiter = new MemoryRateLimiter({ now: () => now });
  });

  describe('rpm', () => {
    it('admits a burst of the whole minute, then refuses with the wait for one request', async () => {
      const rpm = limits({ rpm: 3 });
      for (const remaining of [2, 1, 0]) {
        const admitted = await limiter.admit(1, rpm, 0);
        expect(admitted).to.deep.include({ ok: true, blocked: null, retryAfterS: 0 });
        expect(admitted.requests).to.deep.include({ limit: 3, remaining });
      }
      const refused = await limiter.admit(1, rpm, 0);
      // One request refills every 60/3 = 20 s.
      expect(refused).to.deep.include({ ok: false, blocked: 'rpm', retryAfterS: 20 });
      expect(refused.requests).to.deep.equal({ limit: 3, remaining: 0, resetMs: 60_000 });
      expect(refused.tokens).to.equal(null);
    });

    it('refills continuously at rpm/60 per second', async () => {
      const rpm = limits({ rpm: 60 });
      for (let i = 0; i < 60; i++) expect((await limiter.admit(1, rpm, 0)).ok).to.equal(true);
      now += 500;
      // Half a request refilled: the rest comes in 0.5 s, rounded up to whole seconds.
      expect(await limiter.admit(1, rpm, 0)).to.deep.include({ ok: false, retryAfterS: 1 });
      now += 500;
      expect((await limiter.admit(1, rpm, 0)).ok).to.equal(true);
      expect((await limiter.admit(1, rpm, 0)).ok).to.equal(false);
      now += 30_000;
      const admitted = await limiter.admit(1, rpm, 0);
      expect(admitted.requests).to.deep.equal({ limit: 60, remaining: 29, resetMs: 31_000 });
    });

    it('keeps keys apart', async () => {
      const rpm = limits({ rpm: 1 });
      expect((await limiter.admit(1, rpm, 0)).ok).to.equal(true);
      expect((await limiter.admit(2, rpm, 0)).ok).to.equal(true);
      expect((await limiter.admit(1, rpm, 0)).ok).to.equal(false);
    });
  });

  describe('tpm', () => {
    it('debits the input estimate at admission and settles the difference when the request ends', async () => {
      const tpm = limits({ tpm: 1000 });
      expect((await limiter.admit(1, tpm, 400)).tokens).to.deep.include({ limit: 1000, remaining: 600 });
      // Used 100 of the 400 estimated: 300 come back.
      await limiter.release(1, tpm, 400, 100);
      expect((await limiter.admit(1, tpm, 0)).tokens).to.deep.include({ remaining: 900 });
      // Used 700 more than estimated: debited.
      await limiter.release(1, tpm, 0, 700);
      expect((await limiter.admit(1, tpm, 0)).tokens).to.deep.include({ remaining: 200 });
    });

    it('never credits a bucket past its capacity', async () => {
      const tpm = limits({ tpm: 1000 });
      await limiter.admit(1, tpm, 500);
      await limiter.release(1, tpm, 500, 0);
      now += 60_000;
      await limiter.release(1, tpm, 5000, 0);
      expect((await limiter.admit(1, tpm, 0)).tokens).to.deep.equal({ limit: 1000, remaining: 1000, resetMs: 0 });
    });

    it('refuses a prompt larger than what is left, with the wait until it fits', async () => {
      const tpm = limits({ tpm: 600 }); // 10 tokens a second
      expect((await limiter.admit(1, tpm, 600)).ok).to.equal(true);
      const refused = await limiter.admit(1, tpm, 100);
      expect(refused).to.deep.include({ ok: false, blocked: 'tpm', retryAfterS: 10 });
      expect(refused.tokens).to.deep.equal({ limit: 600, remaining: 0, resetMs: 60_000 });
      now += 9_000;
      expect((await limiter.admit(1, tpm, 100)).ok).to.equal(false);
      now += 1_000;
      expect((await limiter.admit(1, tpm, 100)).ok).to.equal(true);
    });

    it('admits a prompt larger than the whole bucket once the bucket is full, and the debt delays what follows', async () => {
      const tpm = limits({ tpm: 1000 });
      await limiter.admit(1, tpm, 10);
      // Not full: a 5000-token prompt waits for the bucket's whole capacity.
      expect(await limiter.admit(1, tpm, 5000)).to.deep.include({ ok: false, blocked: 'tpm', retryAfterS: 1 });
      now += 1_000;
      const admitted = await limiter.admit(1, tpm, 5000);
      expect(admitted.ok).to.equal(true);
      expect(admitted.tokens).to.deep.include({ remaining: 0, resetMs: 300_000 });
      // 4000 in debt: even an empty prompt waits until the bucket is back to zero (4 minutes).
      expect(await limiter.admit(1, tpm, 0)).to.deep.include({ ok: false, blocked: 'tpm', retryAfterS: 240 });
    });

    it('goes into debt when a request used far more than estimated', async () => {
      const tpm = limits({ tpm: 1000 });
      await limiter.admit(1, tpm, 400);
      await limiter.release(1, tpm, 400, 3000);
      // 1000 - 3000 = -2000; 10 more tokens take (2000 + 10) / (1000/60) s.
      expect(await limiter.admit(1, tpm, 10)).to.deep.include({ ok: false, blocked: 'tpm', retryAfterS: 121 });
    });
  });

  describe('concurrency', () => {
    it('refuses past the limit with retry-after 1 and admits again once a request ends', async () => {
      const two = limits({ concurrency: 2 });
      expect((await limiter.admit(1, two, 0)).ok).to.equal(true);
      expect((await limiter.admit(1, two, 0)).ok).to.equal(true);
      expect(await limiter.admit(1, two, 0)).to.deep.include({ ok: false, blocked: 'concurrency', retryAfterS: 1 });
      await limiter.release(1, two, 0, 0);
      expect((await limiter.admit(1, two, 0)).ok).to.equal(true);
      expect((await limiter.admit(1, two, 0)).ok).to.equal(false);
    });
  });

  describe('refusals', () => {
    it('take nothing from any bucket', async () => {
      const both = limits({ rpm: 2, tpm: 100, concurrency: 5 });
      expect((await limiter.admit(1, both, 80)).ok).to.equal(true);
      // Refused by tpm: the rpm bucket and the concurrency slots are untouched.
      expect(await limiter.admit(1, both, 50)).to.deep.include({ ok: false, blocked: 'tpm' });
      const admitted = await limiter.admit(1, both, 20);
      expect(admitted.ok).to.equal(true);
      expect(admitted.requests).to.deep.include({ remaining: 0 });
      expect(admitted.tokens).to.deep.include({ remaining: 0 });

      const one = limits({ rpm: 10, concurrency: 1 });
      expect((await limiter.admit(2, one, 0)).ok).to.equal(true);
      for (let i = 0; i < 5; i++) expect((await limiter.admit(2, one, 0)).blocked).to.equal('concurrency');
      await limiter.release(2, one, 0, 0);
      expect((await limiter.admit(2, one, 0)).requests).to.deep.include({ remaining: 8 });
    });

    it('name the limit with the longest wait, so a retry after retry-after is not refused by another', async () => {
      const both = limits({ rpm: 1, tpm: 60, concurrency: 1 });
      expect((await limiter.admit(1, both, 120)).ok).to.equal(true);
      // rpm frees in 60 s, the tpm debt (-60, needing 60) in 120 s, concurrency is unknowable (1 s).
      expect(await limiter.admit(1, both, 120)).to.deep.include({ ok: false, blocked: 'tpm', retryAfterS: 120 });
      await limiter.release(1, both, 120, 0);
      now += 30_000;
      // Credited back to a full bucket: rpm now blocks, for the 30 s it still needs.
      expect(await limiter.admit(1, both, 10)).to.deep.include({ ok: false, blocked: 'rpm', retryAfterS: 30 });
    });
  });

  describe('changed limits', () => {
    it('clamps a bucket to a lowered capacity and starts a newly set limit full', async () => {
      await limiter.admit(1, limits({ rpm: 10 }), 0);
      expect((await limiter.admit(1, limits({ rpm: 5 }), 0)).requests).to.deep.include({ limit: 5, remaining: 4 });
      expect((await limiter.admit(1, limits({ rpm: 5, tpm: 100 }), 30)).tokens).to.deep.include({ limit: 100, remaining: 70 });
    });
  });

  describe('memory', () => {
    it('drops keys whose buckets refilled, and keeps those with requests in flight or in debt', async () => {
      for (let key = 0; key < 100; key++) {
        await limiter.admit(key, limits({ rpm: 10 }), 0);
        await limiter.release(key, limits({ rpm: 10 }), 0, 0);
      }
      await limiter.admit(500, limits({ concurrency: 1 }), 0);
      await limiter.admit(501, limits({ tpm: 100 }), 1000); // 900 in debt: 10 minutes to refill
      await limiter.release(501, limits({ tpm: 100 }), 1000, 1000);
      expect(limiter.size).to.equal(102);
      now += 61_000;
      await limiter.admit(1000, limits({ rpm: 10 }), 0);
      await limiter.release(1000, limits({ rpm: 10 }), 0, 0);
      expect(limiter.size).to.equal(3);
      // A dropped key starts again from full buckets: the same as if it had been kept.
      expect((await limiter.admit(7, limits({ rpm: 10 }), 0)).requests).to.deep.include({ remaining: 9 });
      await limiter.release(7, limits({ rpm: 10 }), 0, 0);
      await limiter.release(500, limits({ concurrency: 1 }), 0, 0);
      now += 600_000;
      await limiter.admit(1001, limits({ rpm: 10 }), 0);
      expect(limiter.size).to.equal(1);
    });

    it('keeps a key with a request in flight even without a concurrency limit, so its tpm settles', async () => {
      const tpm = limits({ tpm: 10_000 });
      await limiter.admit(9, tpm, 1_000);
      now += 61_000;
      await limiter.admit(10, limits({ rpm: 10 }), 0); // runs the sweep
      await limiter.release(9, tpm, 1_000, 51_000); // the long request used far more than estimated
      const next = await limiter.admit(9, tpm, 100);
      expect(next.blocked).to.equal('tpm');
    });

    it('holds nothing for a release of a key it never saw', async () => {
      await limiter.release(42, limits({ tpm: 100, concurrency: 1 }), 10, 20);
      expect(limiter.size).to.equal(0);
    });
  });
});

describe('rate-limit reset durations (OpenAI style)', () => {
  it('writes Go-style durations', () => {
    expect([0, 120, 999.2, 1000, 1500, 60_000, 360_000, 3_723_000].map(duration)).to.deep.equal([
      '0s', '120ms', '1s', '1s', '1.5s', '1m0s', '6m0s', '1h2m3s',
    ]);
  });
});

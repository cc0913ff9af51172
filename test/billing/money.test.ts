import { expect } from 'chai';
import { parseConfig } from '../../src/config/load.ts';
import { picoToUsdNumber, picoToUsdText, perMillionToPicoPerToken, usdToPico } from '../../src/billing/money.ts';
import { audioCostOf, compilePrices, costOf, imagePriceOf, maxCostOf } from '../../src/billing/pricing.ts';

const usage = (u: Partial<{ input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number }>) => ({
  input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, ...u,
});
const pricing = (p: Partial<{ input: number; output: number; cacheRead: number | null; cacheWrite: number | null; reasoning: number | null; request: number | null; inputImage: number | null; outputImage: number | null; image: number | Record<string, number> | null; audioMinute: number | null }>) => ({
  input: 0, output: 0, cacheRead: null, cacheWrite: null, reasoning: null, request: null, inputAudio: null, outputAudio: null, inputImage: null, outputImage: null, image: null, characters: null, audioMinute: null, ...p,
});

describe('money in integer pico-dollars', () => {
  it('parses USD amounts exactly, from numbers and strings', () => {
    expect(usdToPico(1)).to.equal(1_000_000_000_000n);
    expect(usdToPico(0.3)).to.equal(300_000_000_000n);
    expect(usdToPico('0.000000000001')).to.equal(1n);
    expect(usdToPico(1e-7)).to.equal(100_000n);
    expect(usdToPico('12.50')).to.equal(12_500_000_000_000n);
    expect(() => usdToPico('0.0000000000001')).to.throw(RangeError);
    expect(() => usdToPico('ten')).to.throw(RangeError);
  });

  it('turns per-million prices into exact per-token prices', () => {
    expect(perMillionToPicoPerToken(3)).to.equal(3_000_000n);
    expect(perMillionToPicoPerToken(0.3)).to.equal(300_000n);
    expect(perMillionToPicoPerToken(3.75)).to.equal(3_750_000n);
    expect(perMillionToPicoPerToken(0.0375)).to.equal(37_500n);
    expect(perMillionToPicoPerToken(0.000001)).to.equal(1n);
    expect(() => perMillionToPicoPerToken(0.0000001)).to.throw(RangeError);
  });

  it('prints amounts exactly', () => {
    expect(picoToUsdText(1_234_500_000n)).to.equal('0.0012345');
    expect(picoToUsdText(100_000_000_000_000n)).to.equal('100');
    expect(picoToUsdText(-1n)).to.equal('-0.000000000001');
  });

  it('gives amounts as the number their exact text parses to, small and large (issue #17)', () => {
    // A seeded generator: the same 20,000 amounts every run, of 1 to 19 digits, either sign.
    let seed = 17;
    const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    const amounts = [0n, 1n, -1n, 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, 2n ** 53n + 1n, 10n ** 18n + 7n, 123_456_789_012_345n];
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + (next() % 19);
      let pico = 0n;
      for (let d = 0; d < digits; d++) pico = pico * 10n + BigInt(next() % 10);
      amounts.push(next() % 4 === 0 ? -pico : pico);
    }
    for (const pico of amounts) expect(picoToUsdNumber(pico), String(pico)).to.equal(Number(picoToUsdText(pico)));
    expect(picoToUsdNumber(12_345_000_000n)).to.equal(0.012345);
  });

  it('refuses a price with more than 6 decimals at its YAML path', () => {
    const yaml = 'providers: [{ id: p, plugin: mock }]\nmodels: [{ id: m, routes: [{ provider: p }], pricing: { input: 0.0000001, output: 1 } }]';
    expect(() => parseConfig(yaml, '/x.yaml', {})).to.throw(/models\[0\]\.pricing\.input: must have at most 6 decimal places/);
  });
});

describe('per-image prices (issue #13)', () => {
  const table = compilePrices(pricing({ image: { '1024x1024': 0.04, '1024x1024/hd': 0.08, '1792x1024/hd': 0.12, auto: 0.05 } }));

  it('match size/quality, then size, then the one price; an unnamed size pays the dearest', () => {
    expect(imagePriceOf(table, '1024x1024', 'hd')).to.equal(usdToPico(0.08));
    expect(imagePriceOf(table, '1024x1024', 'standard')).to.equal(usdToPico(0.04));
    expect(imagePriceOf(table, '1024x1024', undefined)).to.equal(usdToPico(0.04));
    expect(imagePriceOf(table, undefined, undefined)).to.equal(usdToPico(0.05)); // "auto"
    expect(imagePriceOf(table, '512x512', 'low')).to.equal(usdToPico(0.12));
    expect(imagePriceOf(compilePrices(pricing({ image: 0.02 })), '1536x1024', 'high')).to.equal(usdToPico(0.02));
    expect(imagePriceOf(compilePrices(pricing({})), '1024x1024', 'hd')).to.equal(0n);
  });

  it('charges images and image tokens at their own prices', () => {
    const prices = compilePrices(pricing({ input: 5, output: 10, inputImage: 10, outputImage: 40 }));
    const usage = { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0, inputImage: 40, outputImage: 50, images: 2 };
    expect(costOf(usage, prices, usdToPico(0.011))).to.equal(usdToPico((10 * 5 + 2 * 10 + 40 * 10 + 50 * 40) / 1e6 + 2 * 0.011));
  });
});

describe('per-minute audio prices (issue #13)', () => {
  it('charges audio to the millisecond at the minute price, rounded up to the pico-dollar', () => {
    const prices = compilePrices(pricing({ audioMinute: 0.006 }));
    expect(costOf({ ...usage({}), audioMs: 60_000 }, prices)).to.equal(usdToPico(0.006));
    expect(costOf({ ...usage({}), audioMs: 3_000 }, prices)).to.equal(usdToPico(0.0003));
    // $0.0001 a minute is 1666.66… pico-dollars a millisecond: one millisecond costs 1667.
    expect(costOf({ ...usage({}), audioMs: 1 }, compilePrices(pricing({ audioMinute: 0.0001 })))).to.equal(1667n);
    expect(audioCostOf(0, prices)).to.equal(0n);
  });

  it('a price with no minute price charges nothing for the minutes', () => {
    expect(costOf({ ...usage({ input: 1 }), audioMs: 60_000 }, compilePrices(pricing({ input: 1 })))).to.equal(usdToPico(1e-6));
  });
});

describe('cost of a request', () => {
  // Claude Sonnet's prices: $3 in, $15 out, $0.30 cache read, $3.75 cache write (per million).
  const sonnet = compilePrices(pricing({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }));

  it('charges every token kind at its price', () => {
    // 1000×$3 + 2000×$0.30 + 100×$3.75 + 500×$15, per million = $0.003 + $0.0006 + $0.000375 + $0.0075
    expect(picoToUsdText(costOf(usage({ input: 1000, cacheRead: 2000, cacheWrite: 100, output: 500 }), sonnet))).to.equal('0.011475');
  });

  it('prices cache tokens at the input price when no cache price is set', () => {
    const plain = compilePrices(pricing({ input: 2, output: 8 }));
    // (100 + 50 + 25)×$2 + 10×$8 per million = $0.00035 + $0.00008
    expect(picoToUsdText(costOf(usage({ input: 100, cacheRead: 50, cacheWrite: 25, output: 10 }), plain))).to.equal('0.00043');
  });

  it('prices reasoning tokens, part of the output, at the reasoning price when set', () => {
    const prices = compilePrices(pricing({ input: 1, output: 4, reasoning: 8 }));
    // 600 plain output × $4 + 400 reasoning × $8, per million = $0.0024 + $0.0032
    expect(picoToUsdText(costOf(usage({ output: 1000, reasoning: 400 }), prices))).to.equal('0.0056');
    const noReasoningPrice = compilePrices(pricing({ input: 1, output: 4 }));
    expect(picoToUsdText(costOf(usage({ output: 1000, reasoning: 400 }), noReasoningPrice))).to.equal('0.004');
  });

  it('adds the flat per-request price', () => {
    const prices = compilePrices(pricing({ input: 1, output: 1, request: 0.01 }));
    // $0.01 + 1000×$1 per million
    expect(picoToUsdText(costOf(usage({ input: 1000 }), prices))).to.equal('0.011');
  });

  it('is exact for a single token at the cheapest price', () => {
    const cheapest = compilePrices(pricing({ input: 0.000001, output: 0.000001 }));
    expect(costOf(usage({ input: 1 }), cheapest)).to.equal(1n);
  });

  it('charges every kind at once as the term-by-term sum does, zero counts included (issue #17)', () => {
    // costOf skips the zero counts; the reference below multiplies every term, as it did before.
    const prices = compilePrices({ ...pricing({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, reasoning: 20, request: 0.002, inputImage: 5, outputImage: 40, audioMinute: 0.006 }), inputAudio: 32, outputAudio: 64, characters: 15 });
    const reference = (u: Parameters<typeof costOf>[0], imagePrice: bigint): bigint => {
      const reasoning = BigInt(Math.min(u.reasoning, u.output));
      return BigInt(u.input) * prices.input + BigInt(u.cacheRead) * prices.cacheRead + BigInt(u.cacheWrite) * prices.cacheWrite +
        (BigInt(u.output) - reasoning) * prices.output + reasoning * prices.reasoning + BigInt(u.inputAudio ?? 0) * prices.inputAudio +
        BigInt(u.outputAudio ?? 0) * prices.outputAudio + BigInt(u.inputImage ?? 0) * prices.inputImage + BigInt(u.outputImage ?? 0) * prices.outputImage +
        BigInt(u.images ?? 0) * imagePrice + BigInt(u.characters ?? 0) * prices.characters + audioCostOf(u.audioMs ?? 0, prices) + prices.request;
    };
    let seed = 4;
    const count = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % 3 === 0 ? 0 : seed % 1_000_000;
    };
    for (let i = 0; i < 2_000; i++) {
      const u = { ...usage({ input: count(), output: count(), cacheRead: count(), cacheWrite: count(), reasoning: count() }), inputAudio: count(), outputAudio: count(), inputImage: count(), outputImage: count(), images: count() % 5, characters: count(), audioMs: count() };
      expect(costOf(u, prices, 40_000_000_000n)).to.equal(reference(u, 40_000_000_000n));
    }
    expect(costOf(usage({}), prices)).to.equal(prices.request);
  });

  it('holds the most a request can cost: inputs at the dearest input price, all output at the dearest output price', () => {
    // 1000 × $3.75 (cache write is dearest) + 2000 × $15, per million = $0.00375 + $0.03
    expect(picoToUsdText(maxCostOf(1000, 2000, sonnet))).to.equal('0.03375');
  });
});

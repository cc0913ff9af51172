import type { Pricing } from '../config/types.ts';
import type { TokenUsage } from '../formats/wire.ts';
import { perMillionToPicoPerToken, type Pico } from './money.ts';

/** A model's prices in pico-dollars per token (and per request), compiled once at start-up. */
export interface Prices {
  readonly input: Pico;
  readonly output: Pico;
  readonly cacheRead: Pico;
  readonly cacheWrite: Pico;
  readonly reasoning: Pico;
  readonly request: Pico;
}

/** Absent cache and reasoning prices fall back to the input and output prices. */
export function compilePrices(pricing: Pricing): Prices {
  const input = perMillionToPicoPerToken(pricing.input);
  const output = perMillionToPicoPerToken(pricing.output);
  return {
    input,
    output,
    cacheRead: pricing.cacheRead === null ? input : perMillionToPicoPerToken(pricing.cacheRead),
    cacheWrite: pricing.cacheWrite === null ? input : perMillionToPicoPerToken(pricing.cacheWrite),
    reasoning: pricing.reasoning === null ? output : perMillionToPicoPerToken(pricing.reasoning),
    // `request` is USD per request, not per million: × 10^6 turns the per-token conversion back.
    request: pricing.request === null ? 0n : perMillionToPicoPerToken(pricing.request) * 1_000_000n,
  };
}

/**
 * What a request cost. Reasoning tokens are part of the output count (both formats report them
 * that way) and are priced at the reasoning price when one is set.
 */
export function costOf(usage: TokenUsage, prices: Prices): Pico {
  const reasoning = BigInt(Math.min(usage.reasoning, usage.output));
  const plainOutput = BigInt(usage.output) - reasoning;
  return (
    BigInt(usage.input) * prices.input +
    BigInt(usage.cacheRead) * prices.cacheRead +
    BigInt(usage.cacheWrite) * prices.cacheWrite +
    plainOutput * prices.output +
    reasoning * prices.reasoning +
    prices.request
  );
}

/**
 * The most a request can cost, held before it goes upstream: every input token at the dearest
 * input price (a cache write can cost more than plain input), every possible output token at the
 * dearest output price, and the flat fee.
 */
export function maxCostOf(inputTokens: number, maxOutputTokens: number, prices: Prices): Pico {
  const inputPrice = [prices.input, prices.cacheRead, prices.cacheWrite].reduce((a, b) => (b > a ? b : a));
  const outputPrice = prices.reasoning > prices.output ? prices.reasoning : prices.output;
  return BigInt(inputTokens) * inputPrice + BigInt(maxOutputTokens) * outputPrice + prices.request;
}

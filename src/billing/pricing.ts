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
  readonly inputAudio: Pico;
  readonly outputAudio: Pico;
  readonly inputImage: Pico;
  readonly outputImage: Pico;
  /** Per image, by `size/quality` and `size` (`*` for one price for every size); empty: none. */
  readonly image: ReadonlyMap<string, Pico>;
  /** The dearest per-image price: what an image of a size the table does not name is held at and charged. */
  readonly dearestImage: Pico;
  /** The dearest price any input token may have (plain, cache, audio, image): what a hold charges each at. */
  readonly dearestInput: Pico;
  /** The dearest price any output token may have (plain, reasoning, audio, image). */
  readonly dearestOutput: Pico;
  /** Per character of speech input. */
  readonly characters: Pico;
  /** Per minute of audio transcribed (not per millisecond: a minute's price is exact, a millisecond's may not be). */
  readonly audioMinute: Pico;
}

/** Absent cache and reasoning prices fall back to the input and output prices. */
export function compilePrices(pricing: Pricing): Prices {
  const input = perMillionToPicoPerToken(pricing.input);
  const output = perMillionToPicoPerToken(pricing.output);
  const cacheRead = pricing.cacheRead === null ? input : perMillionToPicoPerToken(pricing.cacheRead);
  const cacheWrite = pricing.cacheWrite === null ? input : perMillionToPicoPerToken(pricing.cacheWrite);
  const reasoning = pricing.reasoning === null ? output : perMillionToPicoPerToken(pricing.reasoning);
  const inputAudio = pricing.inputAudio === null ? input : perMillionToPicoPerToken(pricing.inputAudio);
  const outputAudio = pricing.outputAudio === null ? output : perMillionToPicoPerToken(pricing.outputAudio);
  const inputImage = pricing.inputImage === null ? input : perMillionToPicoPerToken(pricing.inputImage);
  const outputImage = pricing.outputImage === null ? output : perMillionToPicoPerToken(pricing.outputImage);
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    reasoning,
    // `request` is USD per request, not per million: × 10^6 turns the per-token conversion back.
    request: pricing.request === null ? 0n : perMillionToPicoPerToken(pricing.request) * 1_000_000n,
    inputAudio,
    outputAudio,
    inputImage,
    outputImage,
    ...imagePrices(pricing.image),
    // Any input token may be audio or image, any output token audio or image (issue #13). Picked
    // here, once per model, not by every request's hold (issue #17).
    dearestInput: dearestOf([input, cacheRead, cacheWrite, inputAudio, inputImage]),
    dearestOutput: dearestOf([output, reasoning, outputAudio, outputImage]),
    characters: pricing.characters === null ? 0n : perMillionToPicoPerToken(pricing.characters),
    audioMinute: pricing.audioMinute === null ? 0n : perMillionToPicoPerToken(pricing.audioMinute) * 1_000_000n,
  };
}

/** USD per image, as written, in pico-dollars: × 10^6 turns the per-million conversion back. */
function imagePrices(image: Pricing['image']): { image: ReadonlyMap<string, Pico>; dearestImage: Pico } {
  const entries: [string, number][] =
    image === null ? [] : typeof image === 'number' ? [['*', image]] : Object.entries(image);
  const table = new Map(entries.map(([key, usd]) => [key, perMillionToPicoPerToken(usd) * 1_000_000n]));
  return { image: table, dearestImage: dearestOf([...table.values()]) };
}

/** The dearest of some prices; 0 for none. */
function dearestOf(prices: readonly Pico[]): Pico {
  return prices.reduce((a, b) => (b > a ? b : a), 0n);
}

/**
 * The per-image price of a request (issue #13): its `size/quality`, then its `size`, then the one
 * price for every size. A size the table does not name (or `auto`) pays the dearest: never less
 * than the image could cost.
 */
export function imagePriceOf(prices: Prices, size: unknown, quality: unknown): Pico {
  if (prices.image.size === 0) return 0n;
  const s = typeof size === 'string' ? size : 'auto';
  const q = typeof quality === 'string' ? quality : 'auto';
  return prices.image.get(`${s}/${q}`) ?? prices.image.get(s) ?? prices.image.get('*') ?? prices.dearestImage;
}

/**
 * What a request cost. Reasoning tokens are part of the output count (both formats report them
 * that way) and are priced at the reasoning price when one is set.
 */
export function costOf(usage: TokenUsage, prices: Prices, imagePrice: Pico = 0n): Pico {
  // Only the counts a request has: most are zero (audio, images, characters), and each term was
  // three BigInt allocations, about 40 in all per call (issue #17: twice per Chat answer).
  const reasoning = Math.min(usage.reasoning, usage.output);
  const plainOutput = usage.output - reasoning;
  let cost = prices.request;
  if (usage.input !== 0) cost += BigInt(usage.input) * prices.input;
  if (usage.cacheRead !== 0) cost += BigInt(usage.cacheRead) * prices.cacheRead;
  if (usage.cacheWrite !== 0) cost += BigInt(usage.cacheWrite) * prices.cacheWrite;
  if (plainOutput !== 0) cost += BigInt(plainOutput) * prices.output;
  if (reasoning !== 0) cost += BigInt(reasoning) * prices.reasoning;
  if (usage.inputAudio) cost += BigInt(usage.inputAudio) * prices.inputAudio;
  if (usage.outputAudio) cost += BigInt(usage.outputAudio) * prices.outputAudio;
  if (usage.inputImage) cost += BigInt(usage.inputImage) * prices.inputImage;
  if (usage.outputImage) cost += BigInt(usage.outputImage) * prices.outputImage;
  if (usage.images) cost += BigInt(usage.images) * imagePrice;
  if (usage.characters) cost += BigInt(usage.characters) * prices.characters;
  if (usage.audioMs) cost += audioCostOf(usage.audioMs, prices);
  return cost;
}

const MS_PER_MINUTE = 60_000n;

/** Audio at the per-minute price, to the millisecond, rounded up to the next pico-dollar. */
export function audioCostOf(audioMs: number, prices: Prices): Pico {
  const scaled = BigInt(Math.ceil(audioMs)) * prices.audioMinute;
  return (scaled + MS_PER_MINUTE - 1n) / MS_PER_MINUTE;
}

/**
 * The most a request can cost, held before it goes upstream: every input token at the dearest
 * input price (a cache write can cost more than plain input), every possible output token at the
 * dearest output price, and the flat fee.
 */
export function maxCostOf(inputTokens: number, maxOutputTokens: number, prices: Prices): Pico {
  return BigInt(inputTokens) * prices.dearestInput + BigInt(maxOutputTokens) * prices.dearestOutput + prices.request;
}

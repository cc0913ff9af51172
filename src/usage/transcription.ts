import { audioCostOf } from '../billing/pricing.ts';
import type { Pico } from '../billing/money.ts';
import type { TokenUsage } from '../formats/wire.ts';
import type { Upload } from '../http/multipart/upload.ts';
import type { ResolvedRoute } from '../http/state.ts';
import { emptyUsage } from './normalize.ts';
import { wavDurationMs } from './wav.ts';

/**
 * The leanest audio an upload is held as, in bytes per second: 6 kbps, the floor of speech codecs
 * (Opus and AMR-WB at their lowest rates). A hold is a bound: no real upload plays longer than this
 * (media.md §8.5).
 */
export const HOLD_BYTES_PER_SECOND = 750;
/**
 * What a transcript that reports no length is charged when the upload's header does not say: 16
 * kbps, leaner than speech is usually sent (mp3 and m4a uploads run at 32–128 kbps). An estimate,
 * marked so in the ledger; only WAV uploads are timed exactly (media.md §3.4).
 */
export const CHARGE_BYTES_PER_SECOND = 2_000;
/** Audio tokens per second: OpenAI's transcribe models bill about 1,000 a minute; held with margin. */
export const AUDIO_TOKENS_PER_SECOND = 20;
/** Text tokens written per second of speech, held: fast speech runs at about 4. */
export const TEXT_TOKENS_PER_SECOND = 10;

/**
 * How long the upload's audio is: exact from a WAV header, else its size at `bytesPerSecond`. A
 * file still arriving is measured by the whole body's declared size (or the limit, for a chunked
 * body); a whole one by its own size.
 */
export function uploadAudioMs(upload: Upload, bytesPerSecond: number): { readonly ms: number; readonly exact: boolean } {
  const file = upload.scanner.parts.find((part) => part.name === 'file' && part.filename !== undefined);
  const whole = file?.end !== undefined;
  const size = file && whole ? file.size : (upload.declaredLength ?? upload.limitBytes);
  const wav = file ? wavDurationMs(file.head, size) : undefined;
  if (wav !== undefined) return { ms: wav, exact: whole };
  return { ms: Math.ceil((size / bytesPerSecond) * 1000), exact: false };
}

/**
 * The most a transcription can cost (issue #13): its audio's length (or bound) at the minute
 * price, that length's audio tokens in and text tokens out at the token prices, and its prompt.
 * A model priced one way has zero prices for the other.
 */
export function transcriptionHoldOf(route: ResolvedRoute, upload: Upload, promptTokens: number): { amount: Pico; audioMs: number } {
  const { ms } = uploadAudioMs(upload, HOLD_BYTES_PER_SECOND);
  const seconds = ms / 1000;
  const { prices } = route;
  const amount =
    audioCostOf(ms, prices) +
    BigInt(Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND)) * prices.inputAudio +
    BigInt(Math.ceil(seconds * TEXT_TOKENS_PER_SECOND)) * prices.output +
    BigInt(promptTokens) * prices.input +
    prices.request;
  return { amount, audioMs: ms };
}

/**
 * The usage of a transcript that reported none (`text`, `srt`, `vtt`; media.md §3.4), or of one
 * whose client left before the answer: the WAV header's length when the upload had one, else its
 * size at CHARGE_BYTES_PER_SECOND (never more than was held), so no format goes unbilled. A model
 * priced by tokens is charged that length's audio tokens and the text that came back.
 */
export function transcriptionFallback(route: ResolvedRoute, upload: Upload | undefined, heldMs: number, textTokens: number): { usage: TokenUsage; exact: boolean } {
  const measured = upload ? uploadAudioMs(upload, CHARGE_BYTES_PER_SECOND) : undefined;
  const exact = measured?.exact === true;
  const audioMs = Math.min(measured?.ms ?? heldMs, heldMs);
  const usage: TokenUsage = { ...emptyUsage(), audioMs };
  if (route.prices.audioMinute === 0n) {
    usage.inputAudio = Math.ceil((audioMs / 1000) * AUDIO_TOKENS_PER_SECOND);
    usage.output = textTokens;
  }
  return { usage, exact };
}

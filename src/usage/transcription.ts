import { audioCostOf } from '../billing/pricing.ts';
import type { Pico } from '../billing/money.ts';
import type { TokenUsage } from '../formats/wire.ts';
import type { Upload } from '../http/multipart/upload.ts';
import type { ResolvedRoute } from '../http/state.ts';
import { emptyUsage } from './normalize.ts';
import { wavDurationMs } from './wav.ts';

/**
 * The leanest audio an upload is assumed to hold, in bytes per second (16 kbps, below any speech
 * codec's usual rate): an upload of unknown format is held as this long (media.md §8.5).
 */
export const MIN_BYTES_PER_SECOND = 2_000;
/** Audio tokens per second: OpenAI's transcribe models bill about 1,000 a minute; held with margin. */
export const AUDIO_TOKENS_PER_SECOND = 20;
/** Text tokens written per second of speech, held: fast speech runs at about 4. */
export const TEXT_TOKENS_PER_SECOND = 10;

/** How long the upload's audio is: exact from a WAV header, else bounded by its size. */
export function uploadAudioMs(upload: Upload): { readonly ms: number; readonly exact: boolean } {
  const file = upload.scanner.parts.find((part) => part.name === 'file' && part.filename !== undefined);
  const total = upload.declaredLength ?? upload.limitBytes;
  // A file still arriving is measured against the whole body: its header's data size is the bound.
  const wav = file ? wavDurationMs(file.head, file.end !== undefined ? file.size : total) : undefined;
  if (wav !== undefined) return { ms: wav, exact: file?.end !== undefined };
  return { ms: Math.ceil((total / MIN_BYTES_PER_SECOND) * 1000), exact: false };
}

/**
 * The most a transcription can cost (issue #13): its audio's length (or bound) at the minute
 * price, that length's audio tokens in and text tokens out at the token prices, and its prompt.
 * A model priced one way has zero prices for the other.
 */
export function transcriptionHoldOf(route: ResolvedRoute, upload: Upload, promptTokens: number): { amount: Pico; audioMs: number } {
  const { ms } = uploadAudioMs(upload);
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
 * The usage of a transcript that reported none (`text`, `srt`, `vtt`; media.md §3.4): the WAV
 * header's length when the upload had one, else what was held for, so no format is unbilled. A
 * model priced by tokens is charged that length's audio tokens and the text that came back.
 */
export function transcriptionFallback(route: ResolvedRoute, upload: Upload | undefined, heldMs: number, textTokens: number): { usage: TokenUsage; exact: boolean } {
  const measured = upload ? uploadAudioMs(upload) : undefined;
  const exact = measured?.exact === true;
  const audioMs = exact && measured ? measured.ms : heldMs;
  const usage: TokenUsage = { ...emptyUsage(), audioMs };
  if (route.prices.audioMinute === 0n) {
    usage.inputAudio = Math.ceil((audioMs / 1000) * AUDIO_TOKENS_PER_SECOND);
    usage.output = textTokens;
  }
  return { usage, exact };
}

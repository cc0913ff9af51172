import { ERR } from '../errors.ts';
import type { TokenUsage } from '../formats/wire.ts';
import type { GatewayContext } from '../http/state.ts';
import type { FormattedTranscription } from '../plugin-host/api.ts';
import { failed, SERVED, type Attempt, type AttemptResult } from '../routing/attempt.ts';
import { failureOf } from '../routing/failures.ts';
import { emptyUsage } from '../usage/normalize.ts';

type Segment = { readonly start: number; readonly end: number; readonly text: string };

/**
 * An in-process plugin's transcription, written in the `response_format` asked for (media.md
 * §3.2): JSON with `usage`, plain text, SubRip, WebVTT, or verbose JSON with segments; with
 * `stream: true`, `transcript.text.delta` events (one per word) and a `transcript.text.done`.
 * The ledger gets the duration heard, and the tokens when the plugin reports them.
 */
export function sendTranscription(ctx: GatewayContext, result: FormattedTranscription, provider: string, attempt: Attempt): AttemptResult {
  const { body, route } = ctx.state;
  if (!body || !route) throw ERR.internal();
  if (typeof result.text !== 'string' || !Number.isFinite(result.duration) || result.duration < 0) {
    return failed(failureOf(ERR.pluginInvalidResult(provider, 'a transcription needs text and a duration in seconds')));
  }
  const format = typeof body['response_format'] === 'string' ? body['response_format'] : 'json';
  const render = RENDER[format];
  if (render === undefined) {
    return failed(failureOf(ERR.invalidField(`response_format: "${format}" is not one of ${Object.keys(RENDER).join(', ')}`, 'response_format')));
  }
  attempt.commit();
  ctx.state.outcome.usage = usageOf(result);
  ctx.state.outcome.firstByteMs ??= performance.now() - ctx.state.startedAt;
  const segments = result.segments ?? [{ start: 0, end: result.duration, text: result.text }];
  if (body['stream'] === true && route.endpoint === 'audio_transcriptions') {
    ctx.type = 'text/event-stream';
    ctx.set('cache-control', 'no-cache');
    ctx.body = [...streamOf(result)].join('');
    return SERVED;
  }
  const translation = route.endpoint === 'audio_translations';
  // A translation's JSON is `{text}` alone (the SDK's Translation type).
  const rendered = translation && format === 'json' ? { text: result.text } : render(result, segments, translation ? 'translate' : 'transcribe');
  ctx.type = typeof rendered === 'string' ? (format === 'vtt' ? 'text/vtt' : 'text/plain') : 'application/json';
  ctx.body = rendered;
  return SERVED;
}

const RENDER: Readonly<Record<string, (result: FormattedTranscription, segments: readonly Segment[], task: string) => string | object>> = {
  json: (result) => ({ text: result.text, usage: wireUsage(result) }),
  text: (result) => `${result.text}\n`,
  srt: (_, segments) => segments.map((s, i) => `${i + 1}\n${stamp(s.start, ',')} --> ${stamp(s.end, ',')}\n${s.text.trim()}\n\n`).join(''),
  vtt: (_, segments) => `WEBVTT\n\n${segments.map((s) => `${stamp(s.start, '.')} --> ${stamp(s.end, '.')}\n${s.text.trim()}\n\n`).join('')}`,
  verbose_json: (result, segments, task) => ({
    task,
    language: result.language ?? 'english',
    duration: result.duration,
    text: result.text,
    segments: segments.map((s, id) => ({
      id,
      seek: 0,
      start: s.start,
      end: s.end,
      text: s.text,
      tokens: [],
      temperature: 0,
      avg_logprob: 0,
      compression_ratio: 0,
      no_speech_prob: 0,
    })),
    // TranscriptionVerbose's usage is the duration kind only.
    usage: { type: 'duration', seconds: Math.ceil(result.duration) },
  }),
};

/** OpenAI's usage union: tokens for a token-priced model, else the seconds heard. */
function wireUsage(result: FormattedTranscription): object {
  const tokens = result.usage;
  if (tokens === undefined) return { type: 'duration', seconds: Math.ceil(result.duration) };
  return {
    type: 'tokens',
    input_tokens: tokens.input_tokens,
    ...(tokens.input_token_details && { input_token_details: tokens.input_token_details }),
    output_tokens: tokens.output_tokens,
    total_tokens: tokens.input_tokens + tokens.output_tokens,
  };
}

function usageOf(result: FormattedTranscription): TokenUsage {
  const usage: TokenUsage = { ...emptyUsage(), audioMs: Math.round(result.duration * 1000) };
  if (result.usage) {
    const audio = result.usage.input_token_details?.audio_tokens ?? 0;
    usage.inputAudio = audio;
    usage.input = Math.max(0, result.usage.input_tokens - audio);
    usage.output = result.usage.output_tokens;
  }
  return usage;
}

/** `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT). */
function stamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/** The data-only events of OpenAI's transcription stream (media.md §3.2): no `event:` lines, no `[DONE]`. */
function* streamOf(result: FormattedTranscription): Generator<string> {
  for (const word of result.text.match(/\S+\s*/g) ?? []) yield `data: ${JSON.stringify({ type: 'transcript.text.delta', delta: word })}\n\n`;
  const usage = result.usage ? { usage: wireUsage(result) } : {};
  yield `data: ${JSON.stringify({ type: 'transcript.text.done', text: result.text, ...usage })}\n\n`;
}

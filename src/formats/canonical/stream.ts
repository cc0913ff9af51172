import type { SseEvent } from '../../plugin-host/api.ts';
import type { Json } from '../convert/json.ts';
import type { EventParser } from '../upstream-events.ts';
import { empty } from '../../util/arrays.ts';
import type { CanonicalStop, CanonicalUsage } from './answer.ts';

/**
 * The canonical stream (issue #14): an answer as it arrives, one event at a time, in no wire
 * format. The rules of canonical/answer.ts hold, and these:
 *
 * 11. **Blocks never interleave.** A block opens (`block`), takes deltas, and closes
 *    (`block_stop`) before the next opens; indices run 0, 1, 2… A decoder whose upstream
 *    interleaves (Chat's parallel tool calls) holds what it must and sends it whole, so every
 *    encoder can stay a simple mapping.
 * 12. **One `start`, one `stop`.** `start` when the upstream first speaks; `stop` once, with the
 *    stop reason and the final usage (absent when the upstream reported none). Nothing follows.
 * 13. **Decoders and encoders are synchronous**, pushing into an array the caller drains: the
 *    per-chunk path has one async step (the upstream read), however many formats it crosses.
 */
export type CanonicalStreamBlock =
  | { readonly type: 'text' }
  /** A refusal the model said instead of an answer (Chat's `refusal`, a Responses refusal part): text deltas. */
  | { readonly type: 'refusal' }
  | { readonly type: 'reasoning' }
  | { readonly type: 'opaque_reasoning'; readonly data: string }
  /** `arguments`: what a start already carried (a Messages tool_use with its input filled in). */
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments?: string };

export type CanonicalEvent =
  | { readonly type: 'start'; readonly id?: string | undefined; readonly model?: string | undefined }
  | { readonly type: 'block'; readonly index: number; readonly block: CanonicalStreamBlock }
  | { readonly type: 'text'; readonly index: number; readonly text: string }
  | { readonly type: 'reasoning'; readonly index: number; readonly text: string }
  | { readonly type: 'signature'; readonly index: number; readonly signature: string }
  | { readonly type: 'arguments'; readonly index: number; readonly json: string }
  | { readonly type: 'block_stop'; readonly index: number }
  | { readonly type: 'stop'; readonly stop: CanonicalStop; readonly stopSequence: string | undefined; readonly usage: CanonicalUsage | undefined };

/** A wire format's stream (typed events, already parsed from SSE) → canonical events. */
export interface StreamDecoder {
  push(input: Json, out: CanonicalEvent[]): void;
  /** The input ended cleanly (a parser throws on a cut stream before this). */
  end(out: CanonicalEvent[]): void;
}

/** Canonical events → a wire format's typed events. */
export interface StreamEncoder {
  /** Events to send before the upstream has said anything (Messages' message_start and ping). */
  open(out: Json[]): void;
  push(event: CanonicalEvent, out: Json[]): void;
}

/** What a caller hears as a stream passes: each input before it is decoded, and the stop. */
export interface StreamHooks {
  readonly input?: (input: Json) => void;
  readonly stop?: (event: Extract<CanonicalEvent, { type: 'stop' }>) => void;
}

/**
 * One format's stream in another's: one async step per upstream event (rule 13). The hooks are
 * calls, not async steps: the bridge reads usage from the upstream's events through `input`, and
 * from the canonical stop through `stop` for an upstream whose events it cannot read (a plugin's).
 */
export async function* translateStream(inputs: AsyncIterable<Json>, decoder: StreamDecoder, encoder: StreamEncoder, hooks: StreamHooks = {}): AsyncGenerator<Json> {
  const t = new Translation(decoder, encoder, hooks);
  for (const event of t.out) yield event;
  t.clear();
  try {
    for await (const input of inputs) {
      // After the stop the rest is read to its end, so the upstream's connection goes back to
      // the pool for the next request, but nothing of it reaches the client (rule 12).
      if (t.stopped) continue;
      t.push(input);
      for (const event of t.out) yield event;
      t.clear();
    }
  } catch (err) {
    // A fault after the client's stream ended (a reset before the upstream's own end marker)
    // must not add a second ending to it (review of issue #14).
    if (!t.stopped) throw err;
    return;
  }
  if (t.stopped) return;
  t.end();
  for (const event of t.out) yield event;
  t.clear();
}

/**
 * The same from upstream SSE, a chunk at a time both ways (issue #17): each chunk's events are
 * parsed and converted in one step, and the client's events handed on as one batch, so the only
 * async steps are per chunk. Each event is parsed, tapped and converted before the next is parsed,
 * so a parser may refill one event object for the next (`reusesEvents`: EventTemplate.match).
 * Stops exactly where translateStream does: nothing after the upstream's terminator is read, and
 * nothing after the stop reaches the hooks (events after it are parsed only to find the
 * terminator, and a fault among them is not the client's). A batch is the same array each time,
 * refilled once the consumer asks for the next: use it before then.
 * translateStream stays a loop of its own rather than this one over batches of one: that would add
 * an async step per event to the plugin paths that still go event by event.
 */
export async function* translateBatches(
  batches: AsyncIterable<readonly SseEvent[]>,
  parser: EventParser,
  decoder: StreamDecoder,
  encoder: StreamEncoder,
  hooks: StreamHooks = {},
): AsyncGenerator<readonly Json[]> {
  const t = new Translation(decoder, encoder, hooks);
  if (t.out.length > 0) yield t.out;
  t.clear();
  const inputs: Json[] = [];
  // The upstream's terminator came: its end is complete, and nothing after it is read.
  let terminated = false;
  try {
    for await (const batch of batches) {
      let failure: { readonly error: unknown } | undefined;
      for (const event of batch) {
        // What an event that then fails had made is dropped (t.cut); what those before it made goes
        // out first, as event by event (a plugin's decoder throwing on an in-band error after text
        // in the same chunk).
        const made = t.out.length;
        try {
          terminated = parser.push(event, inputs);
          for (let i = 0; i < inputs.length && !t.stopped; i++) t.push(inputs[i] as Json);
        } catch (error) {
          failure = { error };
          t.cut(made);
        }
        empty(inputs);
        if (failure || terminated) break;
      }
      if (t.out.length > 0) yield t.out;
      t.clear();
      if (failure) throw failure.error;
      if (terminated) break;
    }
    // A stream that stopped short of its terminator is cut (the parser throws).
    if (!terminated) parser.end();
  } catch (err) {
    // A fault after the client's stream ended must not add a second ending to it.
    if (!t.stopped) throw err;
    return;
  }
  if (t.stopped) return;
  t.end();
  if (t.out.length > 0) yield t.out;
  t.clear();
}

/** The synchronous part of a translated stream: inputs in, the client's events out. */
class Translation {
  readonly #decoder: StreamDecoder;
  readonly #encoder: StreamEncoder;
  readonly #hooks: StreamHooks;
  readonly #canonical: CanonicalEvent[] = [];
  /** Filled by the encoder, handed on by take(). */
  readonly #out: Json[] = [];
  stopped = false;

  constructor(decoder: StreamDecoder, encoder: StreamEncoder, hooks: StreamHooks) {
    this.#decoder = decoder;
    this.#encoder = encoder;
    this.#hooks = hooks;
    encoder.open(this.#out);
  }

  push(input: Json): void {
    this.#hooks.input?.(input);
    this.#decoder.push(input, this.#canonical);
    this.#encode();
  }

  /** The input ended cleanly. */
  end(): void {
    this.#decoder.end(this.#canonical);
    this.#encode();
  }

  /** The client's events made since the last clear(). */
  get out(): readonly Json[] {
    return this.#out;
  }

  /** Reused rather than replaced (no array per chunk): its events were all handed on. */
  clear(): void {
    empty(this.#out);
  }

  /** Drops the client's events past `length`: what an input that then failed had made. */
  cut(length: number): void {
    this.#out.length = length;
  }

  #encode(): void {
    for (const event of this.#canonical) {
      if (event.type === 'stop') {
        this.stopped = true;
        this.#hooks.stop?.(event);
      }
      this.#encoder.push(event, this.#out);
    }
    empty(this.#canonical);
  }
}

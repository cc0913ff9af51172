/**
 * THE CANONICAL FORM: read this before adding a wire format (issue #14).
 *
 * Junction speaks several wire formats (Messages, Chat Completions, Responses, and the clouds'
 * next). Converting each pair directly grows as the square of the formats, so every conversion
 * goes through one typed form instead: a format brings a decoder (its wire shape → canonical) and
 * an encoder (canonical → its wire shape), and any two formats then meet. The rules:
 *
 * 1. **Lossless for what any format can say.** A block kind exists here if one format has it and
 *    another can say it: text, reasoning (with its signature), opaque reasoning, tool calls,
 *    refusals, images. A decoder never drops content; an encoder that has no field for a block
 *    says it as text (an image as a Markdown image) or leaves it out only when it is bookkeeping
 *    of the vendor that made it (Anthropic's server-tool blocks), and says so where it does.
 * 2. **Opaque data travels as it came.** Signatures and encrypted reasoning are strings the next
 *    request must carry back byte for byte; another vendor's are wrapped (opaque-reasoning.ts) so
 *    they survive a client of a third format. Canonical never invents a signature.
 * 3. **Vocabularies are the richest format's.** Stop reasons are Messages' (`end_turn`,
 *    `max_tokens`, `stop_sequence`, `tool_use`, `pause_turn`, `refusal`,
 *    `model_context_window_exceeded`): each other format maps onto them.
 * 4. **Usage is Junction's** (`TokenUsage`'s convention): `input` excludes cached tokens, cache
 *    reads and writes apart; `reasoning` is part of `output`.
 * 5. **Tool arguments are JSON text**, as Chat and Responses carry them; a format with an object
 *    (Messages' `input`) parses it, keeping unparseable text under `raw_arguments`.
 * 6. **What belongs to one side of a translation stays there**: restoring tool names shortened
 *    for an upstream is the decoder's (it knows the upstream's names); a format's own id or
 *    naming constraints are its encoder's.
 * 7. **Encoders write what the real API writes, and nothing it never writes**: no `null` where
 *    the API leaves a field out (issue #12).
 *
 * Requests (request.ts), answers (this file) and streams (stream.ts) all go through this form;
 * codecs.ts lists each format's decoders and encoders. A new format adds an entry there: a
 * request decoder and encoder, an answer decoder and encoder, a stream decoder and encoder.
 */
import type { Json } from '../convert/json.ts';

export type CanonicalStop =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export type CanonicalBlock =
  | { readonly type: 'text'; readonly text: string }
  /** Reasoning text; `signature` as the upstream sent it (Anthropic's as is, another vendor's wrapped), absent when none. */
  | { readonly type: 'reasoning'; readonly text: string; readonly signature?: string }
  /** Reasoning the client cannot read (Anthropic's redacted thinking, an encrypted item): `data` to send back as it is. */
  | { readonly type: 'opaque_reasoning'; readonly data: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: string }
  /** A refusal the model gave instead of an answer (Chat's `refusal`). */
  | { readonly type: 'refusal'; readonly text: string }
  /** An image the model generated (OpenRouter's `images`), by URL (often a data URL). */
  | { readonly type: 'image'; readonly url: string };

export interface CanonicalUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Part of `output`. */
  readonly reasoning: number;
}

/** A whole answer, in order. */
export interface CanonicalAnswer {
  readonly id: string | undefined;
  readonly model: string;
  readonly blocks: readonly CanonicalBlock[];
  readonly stop: CanonicalStop;
  /** The stop sequence that matched, when the upstream names it. */
  readonly stopSequence: string | undefined;
  readonly usage: CanonicalUsage;
}

/** An image said as text, where a format has no image block (rule 1): a Markdown image, data and all (peers.md §2 #34). */
export const imageMarkdown = (url: string): string => `\n\n![image](${url})`;

export type { Json };

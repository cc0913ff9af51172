import type { Json } from '../convert/json.ts';

/**
 * The canonical request (issue #14): what a client asked for, in no wire format. The rules of
 * canonical/answer.ts hold here too, and three more:
 *
 * 8. **Turns are Messages' shape**: `system`, `user` and `assistant` turns of parts, tool results
 *    as parts of a user turn. A decoder keeps the order it was given (a system turn may come late);
 *    an encoder regroups (Chat's `tool` messages first, Responses' flat items, Messages' single
 *    system) as its format requires.
 * 9. **Errors name the client's field.** An encoder that cannot say something throws a 400 naming
 *    the field the client sent (`fields`), never its own format's name for it.
 * 10. **A decoder refuses what no other format can carry** (Chat's `n`, hosted tools…) only when
 *    it is asked for, and the same-format path never decodes at all: native passthrough stays as
 *    it is.
 */

export type CanonicalSource =
  | { readonly kind: 'base64'; readonly mediaType: string; readonly data: string }
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'file'; readonly fileId: string }
  /** Plain text (documents only). */
  | { readonly kind: 'text'; readonly text: string };

/** `cacheControl` is Anthropic's prompt-caching marker, kept for the upstreams that understand it. */
export type CanonicalPart =
  | { readonly type: 'text'; readonly text: string; readonly cacheControl?: Json }
  | { readonly type: 'image'; readonly source: CanonicalSource; readonly detail?: string; readonly cacheControl?: Json }
  | { readonly type: 'document'; readonly source: CanonicalSource; readonly title?: string; readonly cacheControl?: Json }
  | { readonly type: 'reasoning'; readonly text: string; readonly signature?: string }
  | { readonly type: 'opaque_reasoning'; readonly data: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: string }
  | {
      readonly type: 'tool_result';
      readonly id: string;
      /** Text, images and documents. */
      readonly content: readonly CanonicalPart[];
      readonly isError: boolean;
      readonly cacheControl?: Json;
    };

export interface CanonicalTurn {
  readonly role: 'system' | 'user' | 'assistant';
  readonly parts: CanonicalPart[];
  /**
   * The client sent the turn as a plain string rather than parts. Formats with both forms keep
   * the client's choice; upstreams are not always indifferent to it.
   */
  readonly plain?: boolean;
}

export interface CanonicalTool {
  readonly name: string;
  readonly description?: string;
  /** A JSON schema for the arguments (an object schema). */
  readonly parameters: Json;
  readonly strict?: boolean;
  /**
   * A freeform tool (Responses' `custom`, Codex's `apply_patch`): its input is one string. Formats
   * without freeform tools carry it as a function with one string argument, `input`.
   */
  readonly freeform?: boolean;
  readonly cacheControl?: Json;
}

export type CanonicalToolChoice = { readonly type: 'auto' | 'any' | 'none' } | { readonly type: 'tool'; readonly name: string };

export type CanonicalFormat =
  | { readonly type: 'json_schema'; readonly schema: Json; readonly name?: string; readonly description?: string; readonly strict?: boolean }
  | { readonly type: 'json_object' };

/** Reasoning asked for: a token budget, an effort, or both (each format maps what it lacks). */
export interface CanonicalReasoning {
  readonly budget?: number;
  readonly effort?: string;
}

/** The client's names for the fields an encoder may have to refuse (rule 9). */
export interface FieldNames {
  readonly maxTokens: string;
  readonly stop: string;
  readonly reasoning: string;
  readonly format: string;
}

export interface CanonicalRequest {
  readonly turns: CanonicalTurn[];
  readonly tools: CanonicalTool[];
  readonly toolChoice: CanonicalToolChoice | undefined;
  readonly parallelToolCalls: boolean | undefined;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
  readonly topP: number | undefined;
  readonly topK: number | undefined;
  readonly stop: readonly string[];
  /** An end-user id for the upstream's abuse monitoring. */
  readonly user: string | undefined;
  readonly stream: boolean;
  readonly reasoning: CanonicalReasoning | undefined;
  readonly format: CanonicalFormat | undefined;
  /** Anthropic's request-level automatic caching, reached from Chat through an extension field. */
  readonly cacheControl: Json | undefined;
  readonly fields: FieldNames;
}

/** Efforts as reasoning budgets (protocol.md §D.3). */
export const EFFORT_BUDGET: Readonly<Record<string, number>> = { minimal: 1024, low: 1024, medium: 2048, high: 4096, xhigh: 8192, max: 8192 };

/** A budget as an effort, bucketed as LiteLLM does (protocol.md §D.1). */
export function effortOf(reasoning: CanonicalReasoning): 'minimal' | 'low' | 'medium' | 'high' {
  const { budget, effort } = reasoning;
  if (budget !== undefined) return budget >= 4096 ? 'high' : budget >= 2048 ? 'medium' : budget >= 1024 ? 'low' : 'minimal';
  if (effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high') return effort;
  return effort === 'max' || effort === 'xhigh' ? 'high' : 'medium';
}

/** A freeform tool's arguments as a function carries them (rule in CanonicalTool.freeform). */
export const FREEFORM_PARAMETERS: Json = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The tool’s whole input, as free text.' } },
  required: ['input'],
  additionalProperties: false,
};

/** The free text back out of a freeform tool's arguments (whatever the model sent, never lost). */
export function freeformInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as Json)['input'] === 'string') return (parsed as Json)['input'] as string;
  } catch {
    // not JSON: the text itself
  }
  return args;
}

import { z } from 'zod';

/**
 * Request validation for the model endpoints. Objects are loose: fields we do not know pass
 * through untouched, so a new API field is never rejected (issue #2). Only what the gateway or a
 * client-facing guarantee depends on is checked, to keep validation cheap on the hot path.
 */

const block = z.looseObject({ type: z.string().min(1) });

// Roles include `system`: Claude Code sends one mid-conversation (real-clients.md).
const messageParam = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(block)]),
});

const messagesCommon = {
  model: z.string().min(1),
  messages: z.array(messageParam).min(1),
  system: z.union([z.string(), z.array(block)]).optional(),
  tools: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
  tool_choice: z.looseObject({ type: z.string().min(1) }).optional(),
  thinking: z.looseObject({ type: z.string().min(1) }).optional(),
};

/** POST /v1/messages (protocol.md §A.2). */
export const messagesRequestSchema = z.looseObject({
  ...messagesCommon,
  max_tokens: z.number().int().min(1),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
});

/** POST /v1/messages/count_tokens (protocol.md §A.10): no max_tokens. */
export const countTokensRequestSchema = z.looseObject(messagesCommon);

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();
const chatPart = z.looseObject({ type: z.string().min(1) });
const chatContent = z.union([z.string(), z.array(chatPart)]);

const chatMessage = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: chatContent }),
  z.looseObject({ role: z.literal('developer'), content: chatContent }),
  z.looseObject({ role: z.literal('user'), content: chatContent }),
  z.looseObject({ role: z.literal('assistant'), content: nullable(chatContent) }),
  z.looseObject({ role: z.literal('tool'), content: chatContent, tool_call_id: z.string().min(1) }),
  z.looseObject({ role: z.literal('function'), content: z.string().nullable(), name: z.string().min(1) }),
]);

const penalty = nullable(z.number().min(-2).max(2));
const tokenLimit = nullable(z.number().int().min(1));

/** POST /v1/chat/completions (protocol.md §B.2). */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(chatMessage).min(1),
  stream: nullable(z.boolean()),
  stream_options: nullable(z.looseObject({ include_usage: z.boolean().optional() })),
  temperature: nullable(z.number().min(0).max(2)),
  top_p: nullable(z.number().min(0).max(1)),
  frequency_penalty: penalty,
  presence_penalty: penalty,
  stop: nullable(z.union([z.string(), z.array(z.string()).min(1).max(4)])),
  n: nullable(z.number().int().min(1).max(128)),
  max_tokens: tokenLimit,
  max_completion_tokens: tokenLimit,
  tools: z.array(z.looseObject({ type: z.string().min(1) })).optional(),
});

/**
 * POST /v1/embeddings (media.md §4): a string, strings, token ids or arrays of token ids; never an
 * empty string or an empty array, at most 2,048 inputs. The model decides the rest upstream.
 */
const tokenIds = z.array(z.number().int().min(0)).min(1, 'must not be empty');
export const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string().min(1, 'must not be an empty string'),
    z.array(z.string().min(1, 'must not be an empty string')).min(1, 'must not be empty').max(2048, 'at most 2048 inputs'),
    tokenIds,
    z.array(tokenIds).min(1, 'must not be empty').max(2048, 'at most 2048 inputs'),
  ]),
  dimensions: z.number().int().min(1).optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
  user: z.string().optional(),
});

/**
 * POST /v1/images/generations (media.md §1.1). `n` is checked against the model's own maximum
 * after routing (resolve-model); `stream: true` asks for partial images as SSE (§1.4).
 */
export const imagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1, 'must not be empty'),
  n: z.number().int().min(1).max(10).nullable().optional(),
  size: z.string().min(1).nullable().optional(),
  quality: z.string().min(1).nullable().optional(),
  response_format: z.enum(['url', 'b64_json']).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  partial_images: z.number().int().min(0).max(3).nullable().optional(),
});

/**
 * POST /v1/audio/speech (media.md §2.1). Voices and formats are the upstream's to judge: an unknown
 * one goes upstream and its error comes back (issue #13), so only the shape is checked here.
 */
export const speechRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.string().min(1, 'must not be empty'),
  voice: z.union([z.string().min(1), z.looseObject({ id: z.string().min(1) })]),
  response_format: z.string().min(1).optional(),
  speed: z.number().positive().optional(),
  instructions: z.string().optional(),
  stream_format: z.string().min(1).optional(),
});

/**
 * The multipart endpoints (issue #13; media.md §1.2, §3.1), on the fields read before routing
 * (form-body.ts): later fields are not known yet, and go upstream as sent. The file parts are
 * checked as they stream (multipart/form-rules.ts).
 */
export const transcriptionFormSchema = z.looseObject({
  model: z.string().min(1),
  stream: z.boolean().optional(),
});

export const imagesEditFormSchema = z.looseObject({
  model: z.string().min(1),
  n: z.number().int().min(1).max(10).optional(),
  size: z.string().min(1).optional(),
  quality: z.string().min(1).optional(),
  stream: z.boolean().optional(),
});

/**
 * POST /v1/responses (issue #14; responses-api.md §2). Only the shape routing, holds and the
 * token estimate read is checked: item types and parameters go to a native upstream as sent, so a
 * new item or parameter is never refused there.
 */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().min(1).optional() }))]).optional(),
  instructions: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  max_output_tokens: z.number().int().min(1).nullable().optional(),
  previous_response_id: z.string().min(1).nullable().optional(),
});

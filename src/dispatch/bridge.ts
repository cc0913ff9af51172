import { chatToMessage } from '../formats/convert/chat-to-messages-response.ts';
import { chatChunksToMessagesEvents } from '../formats/convert/chat-to-messages-stream.ts';
import { chatToMessagesRequest } from '../formats/convert/chat-to-messages-request.ts';
import { DEFAULT_CHAT_DIALECT, DEFAULT_MESSAGES_DIALECT } from '../formats/convert/dialect.ts';
import type { Json } from '../formats/convert/json.ts';
import { messageToChat } from '../formats/convert/messages-to-chat-response.ts';
import { messagesEventsToChatChunks } from '../formats/convert/messages-to-chat-stream.ts';
import { messagesToChatRequest } from '../formats/convert/messages-to-chat-request.ts';
import { ToolNames } from '../formats/convert/tool-names.ts';
import { chatChunksFromSse, messagesEventsFromSse } from '../formats/upstream-events.ts';
import type { WireFormat } from '../formats/wire.ts';
import type { SseEvent, Translator } from '../plugin-host/api.ts';
import { asksForUsage, withUsageRequested } from '../usage/chat-stream-usage.ts';
import { applyChatChunk, applyMessagesEvent, emptyUsage } from '../usage/normalize.ts';
import type { TokenUsage } from '../formats/wire.ts';

/**
 * Everything format-specific about one translated request, decided once: the body to send
 * upstream, and how the upstream's answer (whole or streamed) comes back in the client's format.
 * Conversion state (shortened tool names, an emulated response_format) lives in the closures.
 */
export interface TranslationPlan {
  readonly upstreamBody: Json;
  answer(body: Json): Json;
  stream(events: AsyncIterable<SseEvent>): AsyncIterable<Json>;
  /**
   * The usage the upstream reported on its stream, read before conversion: what is billed, even
   * when the client did not ask to see it (issue #4).
   */
  streamUsage(): TokenUsage | undefined;
  /**
   * True once a first event came from upstream. Converters may open the client's stream before
   * that (a message_start of their own); the failover loop must not take that as the upstream's
   * answer (issue #5).
   */
  upstreamStarted(): boolean;
  /** Resolves with the upstream's first event. */
  readonly whenUpstreamStarted: Promise<void>;
}

export interface PlanInput {
  readonly clientFormat: WireFormat;
  readonly body: Json;
  readonly translator: Translator;
  readonly requestId: string;
  readonly upstreamModel: string;
  readonly maxOutputTokens: number | null;
  readonly provider: string;
  /** The hold's input estimate, shown in message_start until the upstream's real count arrives. */
  readonly inputTokensEstimate: number;
}

const idOf = (requestId: string): string => requestId.replace(/^req_/, '');

/** Chat chunks without the usage the gateway asked for: the usage-only chunk dropped, usage removed from others. */
async function* withoutUsage(chunks: AsyncIterable<Json>): AsyncGenerator<Json> {
  for await (const chunk of chunks) {
    if (!('usage' in chunk)) {
      yield chunk;
    } else if (Array.isArray(chunk['choices']) && chunk['choices'].length > 0) {
      const { usage: _, ...rest } = chunk;
      yield rest;
    }
  }
}
const now = (): number => Math.floor(Date.now() / 1000);

export function planTranslation(input: PlanInput): TranslationPlan {
  const plan = planFormats(input);
  const usage = emptyUsage();
  let seen = false;
  let started = false;
  let markStarted = (): void => undefined;
  const whenUpstreamStarted = new Promise<void>((resolve) => (markStarted = resolve));
  const apply = input.translator.upstream === 'chat' ? applyChatChunk : applyMessagesEvent;
  async function* tapped(events: AsyncIterable<Json>): AsyncGenerator<Json> {
    for await (const event of events) {
      if (!started) {
        started = true;
        markStarted();
      }
      if (apply(usage, event)) seen = true;
      yield event;
    }
  }
  return {
    upstreamBody: plan.upstreamBody,
    answer: plan.answer,
    stream: (events) => plan.convert(tapped(plan.parse(events))),
    streamUsage: () => (seen ? usage : undefined),
    upstreamStarted: () => started,
    whenUpstreamStarted,
  };
}

/** Parse upstream SSE, then convert the typed events: two steps, so usage can be read between them. */
interface FormatPlan {
  readonly upstreamBody: Json;
  answer(body: Json): Json;
  parse(events: AsyncIterable<SseEvent>): AsyncIterable<Json>;
  convert(events: AsyncIterable<Json>): AsyncIterable<Json>;
}

function planFormats(input: PlanInput): FormatPlan {
  const { body, translator, provider, upstreamModel } = input;
  const parse = (events: AsyncIterable<SseEvent>): AsyncIterable<Json> =>
    translator.upstream === 'chat' ? chatChunksFromSse(events, provider) : messagesEventsFromSse(events, provider);
  if (translator.upstream === input.clientFormat) {
    // Same format: only the model name changes; events are checked for errors and truncation.
    if (input.clientFormat === 'chat' && body['stream'] === true && !asksForUsage(body)) {
      // As on native routes: the upstream is always asked for usage, which the client did not want to see (issue #4).
      const upstreamBody = { ...body, model: upstreamModel, stream_options: withUsageRequested(body) };
      return { upstreamBody, answer: (answer) => answer, parse, convert: withoutUsage };
    }
    return { upstreamBody: { ...body, model: upstreamModel }, answer: (answer) => answer, parse, convert: (events) => events };
  }
  if (translator.upstream === 'chat') {
    const conversion = messagesToChatRequest(body, {
      model: upstreamModel,
      dialect: { ...DEFAULT_CHAT_DIALECT, ...translator.dialect },
      maxOutputTokens: input.maxOutputTokens,
    });
    return {
      upstreamBody: conversion.body,
      answer: (answer) => chatToMessage(answer, conversion.toolNames) as unknown as Json,
      parse,
      convert: (events) =>
        chatChunksToMessagesEvents(events, {
          messageId: `msg_${idOf(input.requestId)}`,
          model: upstreamModel,
          inputTokensEstimate: input.inputTokensEstimate,
          toolNames: conversion.toolNames,
          provider,
        }),
    };
  }
  const conversion = chatToMessagesRequest(body, {
    model: upstreamModel,
    dialect: { ...DEFAULT_MESSAGES_DIALECT, ...translator.dialect },
    maxOutputTokens: input.maxOutputTokens,
  });
  const created = now();
  return {
    upstreamBody: conversion.body,
    answer: (answer) => messageToChat(answer, { jsonTool: conversion.jsonTool, created }) as unknown as Json,
    parse,
    convert: (events) =>
      messagesEventsToChatChunks(events, {
        id: `chatcmpl-${idOf(input.requestId)}`,
        created,
        includeUsage: asksForUsage(body),
        jsonTool: conversion.jsonTool,
      }),
  };
}

/** A whole answer produced in-process in the other format, converted for the client. */
export function bridgeBody(from: WireFormat, body: Json): Json {
  return from === 'chat'
    ? (chatToMessage(body, new ToolNames()) as unknown as Json)
    : (messageToChat(body, { jsonTool: null, created: now() }) as unknown as Json);
}

/** Typed events produced in-process in the other format, converted for the client. */
export function bridgeEvents(
  from: WireFormat,
  events: AsyncIterable<Json>,
  context: { requestId: string; model: string; inputTokensEstimate: number; includeUsage: boolean; provider: string },
): AsyncIterable<Json> {
  return from === 'chat'
    ? chatChunksToMessagesEvents(events, {
        messageId: `msg_${idOf(context.requestId)}`,
        model: context.model,
        inputTokensEstimate: context.inputTokensEstimate,
        toolNames: new ToolNames(),
        provider: context.provider,
      })
    : messagesEventsToChatChunks(events, { id: `chatcmpl-${idOf(context.requestId)}`, created: now(), includeUsage: context.includeUsage, jsonTool: null });
}

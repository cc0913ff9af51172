import type { ChatDialect, MessagesDialect } from '../convert/dialect.ts';
import type { Json } from '../convert/json.ts';
import { ToolNames } from '../convert/tool-names.ts';
import { ChatChunkParser, chatChunksFromSse, MessagesEventParser, messagesEventsFromSse, ResponsesEventParser, responsesEventsFromSse, type EventParser } from '../upstream-events.ts';
import type { TokenUsage, WireFormat } from '../wire.ts';
import { applyChatChunk, applyMessagesEvent, applyResponsesEvent } from '../../usage/normalize.ts';
import type { SseEvent } from '../../plugin-host/api.ts';
import type { CanonicalAnswer } from './answer.ts';
import { decodeChatAnswer, encodeChatAnswer } from './chat-answer.ts';
import { decodeChatRequest } from './chat-request-decode.ts';
import { encodeChatRequest } from './chat-request-encode.ts';
import { ChatStreamDecoder } from './chat-stream-decode.ts';
import { ChatStreamEncoder } from './chat-stream-encode.ts';
import { decodeMessagesAnswer, encodeMessagesAnswer } from './messages-answer.ts';
import { decodeMessagesRequest } from './messages-request-decode.ts';
import { encodeMessagesRequest } from './messages-request-encode.ts';
import { MessagesStreamDecoder } from './messages-stream-decode.ts';
import { MessagesStreamEncoder } from './messages-stream-encode.ts';
import type { CanonicalRequest } from './request.ts';
import { decodeResponsesAnswer, encodeResponsesAnswer } from './responses-answer.ts';
import { decodeResponsesRequest } from './responses-request-decode.ts';
import { encodeResponsesRequest } from './responses-request-encode.ts';
import { ResponsesStreamDecoder } from './responses-stream-decode.ts';
import { ResponsesStreamEncoder } from './responses-stream-encode.ts';
import type { StreamDecoder, StreamEncoder } from './stream.ts';

/**
 * Every wire format as one decoder and one encoder per direction (issue #14): a client's request
 * is decoded and the upstream's encoded; the upstream's answer or stream is decoded and the
 * client's encoded. Adding a format is adding an entry here.
 */

/** What an upstream-side encoder decided that its decoders need back (canonical/answer.ts rule 6). */
export interface UpstreamSide {
  /** Tool names shortened for the upstream, restored on the way back. */
  readonly toolNames: ToolNames;
  /** The forced tool that emulates structured output on a Messages upstream. */
  readonly jsonTool: string | null;
  /** What a plugin's own format encoder handed its decoders (plugin-codec.ts). */
  readonly pluginState?: unknown;
}

export interface UpstreamEncodeOptions {
  readonly model: string;
  readonly maxOutputTokens: number | null;
  readonly chatDialect: ChatDialect;
  readonly messagesDialect: MessagesDialect;
}

/** The client side of one request: ids, the request to echo, what its answer must look like. */
export interface ClientSide {
  /** The request id without its prefix: every id minted for the answer derives from it. */
  readonly id: string;
  readonly model: string;
  readonly created: number;
  readonly request: Json;
  /** Chat: the client asked for usage in the stream. */
  readonly includeUsage: boolean;
  /** Messages: the hold's input estimate, shown in message_start until the real count arrives. */
  readonly inputTokensEstimate: number;
  /** Responses: the client's freeform tools, and its namespaced ones by their offered names. */
  readonly customTools: ReadonlySet<string>;
  readonly namespacedTools: ReadonlyMap<string, { readonly namespace: string; readonly name: string }>;
}

/** A format as an upstream speaks it: the built-in ones, or a plugin's own (plugin-codec.ts). */
export interface UpstreamCodec {
  encodeRequest(request: CanonicalRequest, options: UpstreamEncodeOptions): { readonly body: Json; readonly side: UpstreamSide };
  /** Upstream SSE → this format's typed events, checked for in-band errors and truncation. */
  parse(events: AsyncIterable<SseEvent>, provider: string): AsyncIterable<Json>;
  /**
   * The same, an event at a time and synchronously, for a chunk's events in one step (issue #17).
   * `keepText` false: the events are converted, so they need not keep their text (upstream-events.ts parse).
   * `reuseEvents` too: an event may be refilled as a later one, each used before the next is parsed.
   */
  eventParser?(provider: string, keepText?: boolean, reuseEvents?: boolean): EventParser;
  /** Folds the usage a typed event reports into `into`; true when it reported some. */
  applyUsage(into: TokenUsage, event: Json): boolean;
  decodeAnswer(body: Json, side: UpstreamSide): CanonicalAnswer;
  streamDecoder(side: UpstreamSide, provider: string): StreamDecoder;
}

/** A format as clients speak it too. */
export interface FormatCodec extends UpstreamCodec {
  decodeRequest(body: Json): CanonicalRequest;
  encodeAnswer(answer: CanonicalAnswer, client: ClientSide): Json;
  streamEncoder(client: ClientSide): StreamEncoder;
}

const responsesOptions = (client: ClientSide) => ({ id: `resp_${client.id}`, createdAt: client.created, request: client.request, customTools: client.customTools, namespacedTools: client.namespacedTools, model: client.model });

export const CODECS: Readonly<Record<WireFormat, FormatCodec>> = {
  messages: {
    decodeRequest: decodeMessagesRequest,
    encodeRequest: (request, options) => {
      const { body, jsonTool } = encodeMessagesRequest(request, { model: options.model, dialect: options.messagesDialect, maxOutputTokens: options.maxOutputTokens });
      return { body, side: { toolNames: new ToolNames(), jsonTool } };
    },
    parse: messagesEventsFromSse,
    eventParser: (provider, keepText, reuseEvents) => new MessagesEventParser(provider, keepText, reuseEvents),
    applyUsage: applyMessagesEvent,
    decodeAnswer: (body, side) => decodeMessagesAnswer(body, side.jsonTool),
    streamDecoder: (side) => new MessagesStreamDecoder(side.jsonTool),
    encodeAnswer: (answer) => encodeMessagesAnswer(answer) as unknown as Json,
    streamEncoder: (client) => new MessagesStreamEncoder({ messageId: `msg_${client.id}`, model: client.model, inputTokensEstimate: client.inputTokensEstimate }),
  },
  chat: {
    decodeRequest: decodeChatRequest,
    encodeRequest: (request, options) => {
      const { body, toolNames } = encodeChatRequest(request, { model: options.model, dialect: options.chatDialect, maxOutputTokens: options.maxOutputTokens });
      return { body, side: { toolNames, jsonTool: null } };
    },
    parse: chatChunksFromSse,
    eventParser: (provider, keepText, reuseEvents) => new ChatChunkParser(provider, keepText, reuseEvents),
    applyUsage: applyChatChunk,
    decodeAnswer: (body, side) => decodeChatAnswer(body, side.toolNames),
    streamDecoder: (side, provider) => new ChatStreamDecoder(side.toolNames, provider),
    encodeAnswer: (answer, client) => encodeChatAnswer(answer, { created: client.created }) as unknown as Json,
    streamEncoder: (client) => new ChatStreamEncoder({ id: `chatcmpl-${client.id}`, created: client.created, model: client.model, includeUsage: client.includeUsage }),
  },
  responses: {
    decodeRequest: decodeResponsesRequest,
    encodeRequest: (request, options) => {
      const { body, toolNames } = encodeResponsesRequest(request, { model: options.model, maxOutputTokens: options.maxOutputTokens });
      return { body, side: { toolNames, jsonTool: null } };
    },
    parse: responsesEventsFromSse,
    eventParser: (provider, keepText, reuseEvents) => new ResponsesEventParser(provider, keepText, reuseEvents),
    applyUsage: applyResponsesEvent,
    decodeAnswer: (body, side) => decodeResponsesAnswer(body, side.toolNames),
    streamDecoder: (side) => new ResponsesStreamDecoder(side.toolNames),
    encodeAnswer: (answer, client) => encodeResponsesAnswer(answer, responsesOptions(client)),
    streamEncoder: (client) => new ResponsesStreamEncoder(responsesOptions(client)),
  },
};

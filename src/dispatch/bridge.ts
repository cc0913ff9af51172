import { CODECS, type ClientSide, type UpstreamCodec, type UpstreamSide } from '../formats/canonical/codecs.ts';
import { pluginCodec } from '../formats/canonical/plugin-codec.ts';
import { namespaced } from '../formats/canonical/responses-request-decode.ts';
import type { ResponsesStreamEncoder } from '../formats/canonical/responses-stream-encode.ts';
import { translateBatches, translateStream, type CanonicalEvent, type StreamEncoder, type StreamHooks } from '../formats/canonical/stream.ts';
import { parsedBatches } from '../formats/upstream-events.ts';
import { DEFAULT_CHAT_DIALECT, DEFAULT_MESSAGES_DIALECT } from '../formats/convert/dialect.ts';
import { asArray, asObject, asString, type Json } from '../formats/convert/json.ts';
import { ToolNames } from '../formats/convert/tool-names.ts';
import type { TokenUsage, WireFormat } from '../formats/wire.ts';
import type { SseEvent, Translator } from '../plugin-host/api.ts';
import { asksForUsage, withUsageRequested } from '../usage/chat-stream-usage.ts';
import { emptyUsage } from '../usage/normalize.ts';

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
   * The same from the upstream's events a chunk at a time, where the conversion allows it (a
   * built-in format on both sides): one async step per chunk rather than per event (issue #17).
   */
  streamBatches?(batches: AsyncIterable<readonly SseEvent[]>): AsyncIterable<readonly Json[]>;
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
  /** For a Responses client: the stream's position and keepalive (its sequence numbers). */
  readonly responsesStream?: ResponsesStreamEncoder;
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

/** A Chat chunk without the usage the gateway asked for: the usage-only chunk dropped (undefined), usage removed from others. */
function withoutUsageOf(chunk: Json): Json | undefined {
  if (!('usage' in chunk)) return chunk;
  if (!Array.isArray(chunk['choices']) || chunk['choices'].length === 0) return undefined;
  const { usage: _, ...rest } = chunk;
  return rest;
}

async function* withoutUsage(chunks: AsyncIterable<Json>): AsyncGenerator<Json> {
  for await (const chunk of chunks) {
    const kept = withoutUsageOf(chunk);
    if (kept) yield kept;
  }
}

async function* withoutUsageBatches(batches: AsyncIterable<readonly Json[]>): AsyncGenerator<readonly Json[]> {
  for await (const batch of batches) {
    const kept: Json[] = [];
    for (const chunk of batch) {
      const left = withoutUsageOf(chunk);
      if (left) kept.push(left);
    }
    if (kept.length > 0) yield kept;
  }
}
const now = (): number => Math.floor(Date.now() / 1000);

/** Events passed on as they are, each tapped first. */
async function* tapped(events: AsyncIterable<Json>, tap: (event: Json) => void): AsyncGenerator<Json> {
  for await (const event of events) {
    tap(event);
    yield event;
  }
}

/** The same a chunk's events at a time: each tapped, then the batch passed on. */
async function* tappedBatches(batches: AsyncIterable<readonly Json[]>, tap: (event: Json) => void): AsyncGenerator<readonly Json[]> {
  for await (const batch of batches) {
    for (const event of batch) tap(event);
    yield batch;
  }
}

export function planTranslation(input: PlanInput): TranslationPlan {
  const usage = emptyUsage();
  let seen = false;
  // An upstream whose events the core reads usage from is tapped before conversion; a plugin's
  // own format reports it in the canonical stop.
  const fromStop = (stop: Extract<CanonicalEvent, { type: 'stop' }>): void => {
    if (!stop.usage) return;
    Object.assign(usage, { input: stop.usage.input, output: stop.usage.output, cacheRead: stop.usage.cacheRead, cacheWrite: stop.usage.cacheWrite, reasoning: stop.usage.reasoning });
    seen = true;
  };
  const upstream = upstreamCodecOf(input.translator);
  const plan = planFormats(input, upstream, input.translator.upstream === 'custom' ? fromStop : undefined);
  let started = false;
  let markStarted = (): void => undefined;
  const whenUpstreamStarted = new Promise<void>((resolve) => (markStarted = resolve));
  const apply = upstream.applyUsage;
  // Each upstream event, before conversion: the first one starts the stream, and usage is read.
  const tap = (event: Json): void => {
    if (!started) {
      started = true;
      markStarted();
    }
    if (apply(usage, event)) seen = true;
  };
  return {
    upstreamBody: plan.upstreamBody,
    answer: plan.answer,
    stream: (events) => plan.convert(plan.parse(events), tap),
    ...(plan.convertBatches && { streamBatches: (batches: AsyncIterable<readonly SseEvent[]>) => (plan.convertBatches as NonNullable<FormatPlan['convertBatches']>)(batches, tap) }),
    streamUsage: () => (seen ? usage : undefined),
    upstreamStarted: () => started,
    whenUpstreamStarted,
    ...(plan.responsesStream && { responsesStream: plan.responsesStream }),
  };
}

/** Plugin formats' codecs, made once per translator rather than per request. */
const pluginCodecs = new WeakMap<Translator, UpstreamCodec>();

/** The upstream half of the translation: a built-in format's codec, or the plugin's own. */
function upstreamCodecOf(translator: Translator): UpstreamCodec {
  if (translator.upstream !== 'custom') return CODECS[translator.upstream];
  let codec = pluginCodecs.get(translator);
  if (!codec) pluginCodecs.set(translator, (codec = pluginCodec(translator.format)));
  return codec;
}

/**
 * Parse upstream SSE, then convert the typed events, with usage read between the two (`tap`,
 * called with each upstream event before it is converted: a call, not another async step).
 * `convertBatches` does both in one step per chunk, an event at a time.
 */
interface FormatPlan {
  readonly upstreamBody: Json;
  answer(body: Json): Json;
  parse(events: AsyncIterable<SseEvent>): AsyncIterable<Json>;
  convert(events: AsyncIterable<Json>, tap: (event: Json) => void): AsyncIterable<Json>;
  /** Parse and convert a chunk's events at a time, when the upstream's format has a synchronous parser. */
  convertBatches?(batches: AsyncIterable<readonly SseEvent[]>, tap: (event: Json) => void): AsyncIterable<readonly Json[]>;
  readonly responsesStream?: ResponsesStreamEncoder;
}

/** The client side of a request, for the encoders of its answer. */
function clientSideOf(body: Json, context: { requestId: string; model: string; inputTokensEstimate: number }): ClientSide {
  // A Responses client's tools: which are freeform, and which were offered under a namespace.
  const customTools = new Set<string>();
  const namespacedTools = new Map<string, { namespace: string; name: string }>();
  for (const raw of asArray(body['tools'])) {
    const tool = asObject(raw);
    const namespace = tool['type'] === 'namespace' ? (asString(tool['name']) ?? '') : undefined;
    for (const inner of namespace === undefined ? [tool] : asArray(tool['tools']).map(asObject)) {
      const name = asString(inner['name']) ?? '';
      const offered = namespaced(namespace, name);
      if (namespace !== undefined) namespacedTools.set(offered, { namespace, name });
      if (inner['type'] === 'custom') customTools.add(offered);
    }
  }
  return {
    id: idOf(context.requestId),
    model: context.model,
    created: now(),
    request: body,
    includeUsage: asksForUsage(body),
    inputTokensEstimate: context.inputTokensEstimate,
    customTools,
    namespacedTools,
  };
}

function planFormats(input: PlanInput, upstream: UpstreamCodec, onStop: ((stop: Extract<CanonicalEvent, { type: 'stop' }>) => void) | undefined): FormatPlan {
  const { body, translator, provider, upstreamModel } = input;
  const parse = (events: AsyncIterable<SseEvent>): AsyncIterable<Json> => upstream.parse(events, provider);
  const eventParser = upstream.eventParser;
  if (translator.upstream === input.clientFormat) {
    // Same format: only the model name changes; events are checked for errors and truncation,
    // a chunk's at a time where the format's parser allows it (issue #17: Bedrock's Claude
    // streams are Messages in, Messages out).
    const parsed = eventParser && ((batches: AsyncIterable<readonly SseEvent[]>) => parsedBatches(batches, eventParser(provider)));
    if (input.clientFormat === 'chat' && body['stream'] === true && !asksForUsage(body)) {
      // As on native routes: the upstream is always asked for usage, which the client did not want to see (issue #4).
      const upstreamBody = { ...body, model: upstreamModel, stream_options: withUsageRequested(body) };
      return {
        upstreamBody,
        answer: (answer) => answer,
        parse,
        convert: (events, tap) => withoutUsage(tapped(events, tap)),
        ...(parsed && { convertBatches: (batches: AsyncIterable<readonly SseEvent[]>, tap: (event: Json) => void) => withoutUsageBatches(tappedBatches(parsed(batches), tap)) }),
      };
    }
    return {
      upstreamBody: { ...body, model: upstreamModel },
      answer: (answer) => answer,
      parse,
      convert: tapped,
      ...(parsed && { convertBatches: (batches: AsyncIterable<readonly SseEvent[]>, tap: (event: Json) => void) => tappedBatches(parsed(batches), tap) }),
    };
  }
  const client = CODECS[input.clientFormat];
  const encoded = upstream.encodeRequest(client.decodeRequest(body), {
    model: upstreamModel,
    maxOutputTokens: input.maxOutputTokens,
    chatDialect: { ...DEFAULT_CHAT_DIALECT, ...(translator.upstream === 'chat' ? translator.dialect : undefined) },
    messagesDialect: { ...DEFAULT_MESSAGES_DIALECT, ...(translator.upstream === 'messages' ? translator.dialect : undefined) },
  });
  const side: UpstreamSide = encoded.side;
  const clientSide = clientSideOf(body, { requestId: input.requestId, model: upstreamModel, inputTokensEstimate: input.inputTokensEstimate });
  const encoder: StreamEncoder = client.streamEncoder(clientSide);
  const hooks = (tap: (event: Json) => void): StreamHooks => ({ input: tap, ...(onStop && { stop: onStop }) });
  return {
    upstreamBody: encoded.body,
    answer: (answer) => client.encodeAnswer(upstream.decodeAnswer(answer, side), clientSide),
    parse,
    convert: (events, tap) => translateStream(events, upstream.streamDecoder(side, provider), encoder, hooks(tap)),
    ...(eventParser && {
      convertBatches: (batches: AsyncIterable<readonly SseEvent[]>, tap: (event: Json) => void) =>
        translateBatches(batches, eventParser(provider, false, true), upstream.streamDecoder(side, provider), encoder, hooks(tap)),
    }),
    ...(input.clientFormat === 'responses' && { responsesStream: encoder as ResponsesStreamEncoder }),
  };
}

/** A whole answer produced in-process in the other format, converted for the client. */
export function bridgeBody(from: WireFormat, to: WireFormat, body: Json, context: { requestId: string; model: string }): Json {
  const client = clientSideOf({}, { ...context, inputTokensEstimate: 0 });
  return CODECS[to].encodeAnswer(CODECS[from].decodeAnswer(body, { toolNames: new ToolNames(), jsonTool: null }), client);
}

/** Typed events produced in-process in the other format, converted for the client. */
export function bridgeEvents(
  from: WireFormat,
  to: WireFormat,
  events: AsyncIterable<Json>,
  context: { requestId: string; model: string; inputTokensEstimate: number; request: Json; provider: string },
): AsyncIterable<Json> {
  const client = clientSideOf(context.request, context);
  const decoder = CODECS[from].streamDecoder({ toolNames: new ToolNames(), jsonTool: null }, context.provider);
  return translateStream(events, decoder, CODECS[to].streamEncoder(client));
}

import { z } from 'zod';
import { definePlugin, ProviderConfigError, type CallContext, type SignableRequest, type StreamFraming, type Translator, type UpstreamResponse } from '../../src/plugin-host/api.ts';
import { lowerCaseKeys } from '../shared/options.ts';
import { credentialChain, SigV4Signer } from './auth.ts';
import { bedrockError } from './errors.ts';
import { EventStreamDecoder, payloadText } from './event-stream.ts';
import { decodeConverseAnswer } from './converse-answer.ts';
import { encodeConverseRequest, type ConverseState } from './converse-request.ts';
import { converseStreamDecoder } from './converse-stream.ts';
import { bedrockRules, foundationModel, invokeEvent, invokeRequest, modelSegment } from './invoke.ts';

const bedrockOptions = z
  .strictObject({
    /** The AWS region; without it AWS_REGION or AWS_DEFAULT_REGION. */
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region, e.g. us-east-1').optional(),
    /** A named profile of the shared AWS config, for the credential chain. */
    profile: z.string().min(1).optional(),
    /** Betas to let through besides the built-in list, as Bedrock adds them. */
    betas: z.array(z.string().min(1)).optional(),
    /** Model ids served as Claude (InvokeModel) that do not say so, such as application inference profile ARNs. */
    claude_models: z.array(z.string().min(1)).optional(),
    default_max_tokens: z.number().int().min(1).optional(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .default({});
type BedrockOptions = z.infer<typeof bedrockOptions>;

const EVENT_STREAM = 'application/vnd.amazon.eventstream';
/** Claude's ids on Bedrock: `anthropic.claude-…`, with or without a geography prefix. */
const CLAUDE = /(^|[.:/])anthropic\.|claude/i;

/**
 * `bedrock`: AWS Bedrock Runtime (issue #15; providers.md §1). Claude models go through
 * InvokeModel with the Messages body adapted for Bedrock (invoke.ts), so a Messages client sees
 * thinking, signatures, tool use and usage as from Anthropic. Requests are signed with SigV4 over
 * the exact bytes sent, with the standard AWS credential chain, or carry a Bedrock API key
 * (`api_key`) as a bearer token. Every other model goes through Converse, in its own format
 * (converse-*.ts), for Messages, Chat and Responses clients alike. `base_url` replaces
 * `https://bedrock-runtime.{region}.amazonaws.com`.
 */
export default definePlugin<BedrockOptions>({
  name: 'bedrock',
  apiVersion: '^1.5.0',
  optionsSchema: bedrockOptions,
  create(provider) {
    const options = provider.options;
    const region = options.region ?? process.env['AWS_REGION'] ?? process.env['AWS_DEFAULT_REGION'];
    if (region === undefined || region === '') throw new ProviderConfigError('options.region', 'the AWS region is required (or set AWS_REGION)');
    const base = provider.baseUrl ?? `https://bedrock-runtime.${region}.amazonaws.com`;
    const apiKey = provider.apiKey?.trim() || undefined;
    const headers = { ...lowerCaseKeys(options.headers), ...(apiKey && { authorization: `Bearer ${apiKey}` }) };
    const signer = apiKey ? undefined : new SigV4Signer({ region, credentials: credentialChain(options.profile), log: provider.log });
    const signing = signer && {
      sign: (request: SignableRequest) => signer.sign(request),
      retry: (response: UpstreamResponse) => signer.correctClock(response),
    };
    const claudeModels = new Set(options.claude_models ?? []);
    const rules = bedrockRules(options.betas ?? []);
    const invokeFraming: StreamFraming = {
      contentType: EVENT_STREAM,
      decoder: (ctx: CallContext) => new EventStreamDecoder((type, payload, out) => invokeEvent(type, payload, out, ctx.log)),
    };
    const claude: Translator = {
      upstream: 'messages',
      endpoints: ['messages', 'count_tokens', 'chat_completions', 'responses'],
      dialect: options.default_max_tokens === undefined ? {} : { defaultMaxTokens: options.default_max_tokens },
      request: (body, ctx) => invokeRequest(body, ctx, base, rules, headers),
      error: bedrockError,
      streamFraming: invokeFraming,
      inputTokens: (answer) => Number(answer['inputTokens']),
      ...signing,
    };
    const converse: Translator = {
      upstream: 'custom',
      endpoints: ['messages', 'count_tokens', 'chat_completions', 'responses'],
      format: {
        encodeRequest: encodeConverseRequest,
        decodeAnswer: (body, state) => decodeConverseAnswer(body, state as ConverseState),
        streamDecoder: (state) => converseStreamDecoder(state as ConverseState),
      },
      request: (body, ctx) => {
        const { model, ...rest } = body;
        if (ctx.endpoint === 'count_tokens') {
          const { messages, system, toolConfig, additionalModelRequestFields } = rest;
          const converseInput = { messages, ...(system !== undefined && { system }), ...(toolConfig !== undefined && { toolConfig }), ...(additionalModelRequestFields !== undefined && { additionalModelRequestFields }) };
          return { url: `${base}/model/${modelSegment(foundationModel(String(model)))}/count-tokens`, headers, body: { input: { converse: converseInput } } };
        }
        return { url: `${base}/model/${modelSegment(String(model))}/${ctx.stream ? 'converse-stream' : 'converse'}`, headers, body: rest };
      },
      error: bedrockError,
      // ConverseStream's events are typed by name: passed on as they are, the format's decoder reads them.
      streamFraming: { contentType: EVENT_STREAM, decoder: () => new EventStreamDecoder((type, payload, out) => out.push({ event: type, data: payloadText(payload) })) },
      inputTokens: (answer) => Number(answer['inputTokens']),
      ...signing,
    };
    return {
      translateFor: (model) => (CLAUDE.test(model) || claudeModels.has(model) ? claude : converse),
    };
  },
});

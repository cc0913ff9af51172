import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { RecordedRequest, Reply } from '../../support/fake-upstream.ts';
import { call, generationOf, KEYS, MESSAGES_HEADERS, useUpstreamAndGateway, oneKeyConfig } from '../../support/gateway.ts';

/**
 * The `gemini` plugin (issue #15; providers.md §3) against a fake that refuses what the Gemini API
 * refuses: a wrong key, schema words outside its subset, empty parts, tool answers that do not
 * match the calls before them, and a function call of the current turn without its thought
 * signature (Gemini 3's 400). Through it, the official SDKs run a tool loop, stream thinking and
 * text, and are billed Gemini's usage.
 */

const KEY = 'gemini-key-0123';
const json = { 'content-type': 'application/json' };
const ALLOWED = new Set(['type', 'format', 'title', 'description', 'nullable', 'enum', 'properties', 'required', 'propertyOrdering', 'items', 'anyOf', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minProperties', 'maxProperties', 'default', 'example']);

type Json = Record<string, unknown>;
const invalid = (message: string): Reply => ({ status: 400, headers: json, body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } } });

/**
 * The first thing in a schema Gemini refuses, with where: a word outside its subset, an object
 * with no properties, a node with no type (unless it is an anyOf), `items` that is not one schema.
 */
function unknownWord(schema: unknown, path: string): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `${path}: not a schema`;
  const node = schema as Json;
  for (const key of Object.keys(node)) if (!ALLOWED.has(key)) return `${path}.${key}`;
  if (node['anyOf'] !== undefined) {
    for (const [i, inner] of (node['anyOf'] as unknown[]).entries()) {
      const found = unknownWord(inner, `${path}.anyOf[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof node['type'] !== 'string') return `${path}.type: must be specified when not using one_of, any_of or all_of fields`;
  if (node['type'] === 'object') {
    const properties = node['properties'] as Json | undefined;
    if (!properties || Object.keys(properties).length === 0) return `${path}.properties: should be non-empty for OBJECT type`;
    for (const [name, inner] of Object.entries(properties)) {
      const found = unknownWord(inner, `${path}.properties[${name}]`);
      if (found) return found;
    }
  }
  if (node['type'] === 'array') {
    if (node['items'] === undefined) return `${path}.items: missing field`;
    const found = unknownWord(node['items'], `${path}.items`);
    if (found) return found;
  }
  if (Array.isArray(node['enum']) && node['enum'].some((v) => typeof v !== 'string')) return `${path}.enum: must be strings`;
  return undefined;
}

/** What the real API checks before it answers. */
function check(req: RecordedRequest): Reply | undefined {
  if (req.headers['x-goog-api-key'] !== KEY) return { status: 400, headers: json, body: { error: { code: 400, message: 'API key not valid.', status: 'INVALID_ARGUMENT' } } };
  const body = req.json();
  if ('model' in body) return invalid('Invalid JSON payload received. Unknown name "model": Cannot find field.');
  for (const [i, declaration] of (((body['tools'] as Json[] | undefined)?.[0]?.['functionDeclarations'] as Json[] | undefined) ?? []).entries()) {
    // A function with no parameters leaves them out.
    const word = declaration['parameters'] === undefined ? undefined : unknownWord(declaration['parameters'], `tools[0].function_declarations[${i}].parameters`);
    if (word) return invalid(`Invalid JSON payload received. Problem at '${word}'.`);
  }
  const contents = body['contents'] as Json[];
  if (!Array.isArray(contents) || contents.length === 0) return invalid('contents is not specified');
  let current = -1;
  contents.forEach((content, i) => {
    const parts = content['parts'] as Json[];
    if (content['role'] === 'user' && parts.some((p) => p['functionResponse'] === undefined)) current = i;
  });
  for (const [i, content] of contents.entries()) {
    const parts = content['parts'] as Json[];
    if (!Array.isArray(parts) || parts.length === 0) return invalid('contents.parts must not be empty');
    if (parts.some((p) => p['text'] === '')) return invalid("required oneof field 'data' must have one initialized field");
    const calls = parts.filter((p) => p['functionCall'] !== undefined);
    if (content['role'] === 'model' && i > current && calls.length > 0 && typeof calls[0]!['thoughtSignature'] !== 'string') {
      return invalid(`Function call is missing a thought_signature in functionCall parts. Additional data, function call \`default_api:${String((calls[0]!['functionCall'] as Json)['name'])}\`, position ${i + 1}.`);
    }
    const answers = (contents[i + 1]?.['parts'] as Json[] | undefined)?.filter((p) => p['functionResponse'] !== undefined) ?? [];
    if (calls.length > 0 && answers.length !== calls.length) return invalid('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
  }
  return undefined;
}

const config = (url: string): string => oneKeyConfig(`
providers:
  - { id: gemini, plugin: gemini, base_url: "${url}", api_key: "${KEY}" }
models:
  - { id: gemini-pro, routes: [{ provider: gemini, model: gemini-3-pro }], pricing: { input: 1.25, output: 10, cache_read: 0.125 } }
`);

const generate = (path: string, reply: (req: RecordedRequest) => Reply) => (req: RecordedRequest): Reply | undefined => (req.url === path ? (check(req) ?? reply(req)) : undefined);
const WHOLE = '/v1beta/models/gemini-3-pro:generateContent';
const STREAM = '/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse';
const answer = (parts: Json[], finishReason: string | null = 'STOP', usage: Json = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }): Json => ({
  candidates: [{ content: { role: 'model', parts }, ...(finishReason !== null && { finishReason }), index: 0 }],
  usageMetadata: usage,
  modelVersion: 'gemini-3-pro-001',
  responseId: 'gem-1',
});
// What zod-to-json-schema and Claude Code write, words Gemini's parser refuses included.
const weather = { name: 'weather', description: 'The weather', input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', additionalProperties: false, properties: { city: { type: 'string', minLength: 1 } }, required: ['city'] } } as Anthropic.Tool;

describe('gemini plugin (the Gemini API\'s own format)', () => {
  const env = useUpstreamAndGateway(config);
  let anthropic: Anthropic;
  let openai: OpenAI;
  before(() => {
    anthropic = new Anthropic({ baseURL: env.gw.url, apiKey: KEYS.alice, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });

  it('a Messages tool loop: the schema adapted, the call\'s thought signature carried back on its part, the answer named by its function', async () => {
    env.upstream.script(generate(WHOLE, () => ({ headers: json, body: answer([{ functionCall: { name: 'weather', args: { city: 'Rome' } }, thoughtSignature: 'sig-gemini-A' }]) })));
    const first = await anthropic.messages.create({ model: 'gemini-pro', max_tokens: 200, system: 'Be brief.', tools: [weather], messages: [{ role: 'user', content: 'Weather in Rome?' }] });
    expect(first.stop_reason).to.equal('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(use).to.deep.include({ name: 'weather', input: { city: 'Rome' } });
    const sent = env.upstream.last().json();
    expect(sent['systemInstruction']).to.deep.equal({ parts: [{ text: 'Be brief.' }] });
    expect(env.upstream.last().headers['x-goog-api-key']).to.equal(KEY);
    env.upstream.script(generate(WHOLE, () => ({ headers: json, body: answer([{ text: 'Sunny, 21 C.' }]) })));
    const second = await anthropic.messages.create({
      model: 'gemini-pro',
      max_tokens: 200,
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Rome?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use?.type === 'tool_use' ? use.id : '', content: '21 C' }] },
      ],
    });
    expect(second.content).to.deep.equal([{ type: 'text', text: 'Sunny, 21 C.' }]);
    const contents = env.upstream.last().json()['contents'] as Json[];
    expect((contents[1]?.['parts'] as Json[])[0]).to.deep.include({ thoughtSignature: 'sig-gemini-A' });
    expect((contents[2]?.['parts'] as Json[])[0]).to.deep.equal({ functionResponse: { id: use?.type === 'tool_use' ? use.id : '', name: 'weather', response: { output: '21 C' } } });
  });

  it('a call whose signature this process never saw gets Google\'s documented placeholder, not a 400', async () => {
    env.upstream.script(generate(WHOLE, () => ({ headers: json, body: answer([{ text: 'Done.' }]) })));
    const res = await call(`${env.gw.url}/v1/messages`, {
      headers: MESSAGES_HEADERS,
      body: {
        model: 'gemini-pro',
        max_tokens: 100,
        tools: [weather],
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_elsewhere', name: 'weather', input: { city: 'Oslo' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_elsewhere', content: '3 C' }] },
        ],
      },
    });
    expect(res.status, res.text).to.equal(200);
    expect(((env.upstream.last().json()['contents'] as Json[])[1]?.['parts'] as Json[])[0]).to.deep.include({ thoughtSignature: 'skip_thought_signature_validator' });
  });

  it('a Chat stream: thought summaries as reasoning, text as content, usage with thoughts and cached tokens billed', async () => {
    const sse = [
      answer([{ text: 'Thinking about it.', thought: true }], null),
      answer([{ text: 'Hel' }], null),
      answer([{ text: 'lo!' }], 'STOP', { promptTokenCount: 10, cachedContentTokenCount: 4, candidatesTokenCount: 5, thoughtsTokenCount: 7, totalTokenCount: 22 }),
    ]
      // Gemini separates its events with CRLF pairs (providers.md §3.6).
      .map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`)
      .join('');
    env.upstream.script(generate(STREAM, () => ({ sse })));
    const stream = await openai.chat.completions.create({ model: 'gemini-pro', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true }, reasoning_effort: 'low' });
    let text = '';
    let reasoning = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as (OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning?: string }) | undefined;
      text += delta?.content ?? '';
      reasoning += delta?.reasoning ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).to.equal('Hello!');
    expect(reasoning).to.equal('Thinking about it.');
    expect(usage).to.deep.include({ prompt_tokens: 10, completion_tokens: 12 });
    // Gemini 3 takes a thinking level, not a budget (providers.md §3.4).
    expect(env.upstream.last().json()['generationConfig']).to.deep.include({ thinkingConfig: { includeThoughts: true, thinkingLevel: 'LOW' } });
  });

  it('Gemini 2.5 takes a budget, kept within the range every 2.5 model accepts', async () => {
    const { encodeGeminiRequest } = await import('../../../plugins/gemini/request.ts');
    const { SignatureStore } = await import('../../../plugins/gemini/signatures.ts');
    const { decodeMessagesRequest } = await import('../../../src/formats/canonical/messages-request-decode.ts');
    const request = decodeMessagesRequest({ max_tokens: 64000, thinking: { type: 'enabled', budget_tokens: 50000 }, messages: [{ role: 'user', content: 'hi' }] });
    const body = encodeGeminiRequest(request, { model: 'gemini-2.5-flash', maxOutputTokens: null }, new SignatureStore());
    expect(body['generationConfig']).to.deep.include({ thinkingConfig: { includeThoughts: true, thinkingBudget: 24576 } });
    // A request that is all system prompt: Gemini refuses empty contents, so it goes as the user's turn.
    const systemOnly = encodeGeminiRequest({ ...request, turns: [{ role: 'system', parts: [{ type: 'text', text: 'Only this.' }] }] }, { model: 'gemini-2.5-flash', maxOutputTokens: null }, new SignatureStore());
    expect(systemOnly['contents']).to.deep.equal([{ role: 'user', parts: [{ text: 'Only this.' }] }]);
    // An image a tool returned rides in the function response's own parts.
    const withImage = decodeMessagesRequest({
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'Look.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'screenshot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } }] }] },
      ],
    });
    const shot = encodeGeminiRequest(withImage, { model: 'gemini-2.5-flash', maxOutputTokens: null }, new SignatureStore());
    expect(((shot['contents'] as Json[])[2]?.['parts'] as Json[])[0]).to.deep.equal({ functionResponse: { id: 't1', name: 'screenshot', response: { output: '' }, parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBOR' } }] } });
  });

  it('the real Claude Code request reaches Gemini: every tool schema within the subset Gemini takes', async () => {
    const claudeCode = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as Json;
    env.upstream.script(generate(STREAM, () => ({ sse: `data: ${JSON.stringify(answer([{ text: 'OK' }]))}\r\n\r\n` })));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { ...claudeCode, model: 'gemini-pro', stream: true } });
    expect(res.status, res.text.slice(0, 600)).to.equal(200);
    expect(res.text, res.text.slice(-400)).to.match(/event: message_stop\n/);
  });

  it('a prompt Gemini blocks is a refusal the client can read, not an empty answer', async () => {
    env.upstream.script(generate(WHOLE, () => ({ headers: json, body: { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 }, modelVersion: 'gemini-3-pro-001' } })));
    const message = await anthropic.messages.create({ model: 'gemini-pro', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] });
    expect(message.stop_reason).to.equal('refusal');
    expect(message.content[0]).to.have.property('text').that.includes('SAFETY');
  });

  it('Gemini\'s own errors reach the caller with their status: 400 with its message, 429', async () => {
    env.upstream.script(generate(WHOLE, () => invalid('Request contains an invalid argument.')));
    const bad = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gemini-pro', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] } });
    expect(bad.status).to.equal(400);
    expect(bad.json()).to.have.nested.property('error.message').that.includes('invalid argument');
    env.upstream.script(generate(WHOLE, () => ({ status: 429, headers: json, body: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } } })));
    const limited = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gemini-pro', max_tokens: 50, messages: [{ role: 'user', content: 'x' }] } });
    expect(limited.status).to.equal(429);
    const row = await generationOf(env.gw.url, limited.headers.get('request-id') ?? limited.headers.get('x-request-id'));
    expect(row.cost_usd).to.equal(0);
  });

  it('an error chunk mid-stream keeps its status: a 429 is an in-band rate_limit_error, not a generic failure', async () => {
    const sse = `data: ${JSON.stringify(answer([{ text: 'Part' }], null))}\r\n\r\ndata: ${JSON.stringify({ error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } })}\r\n\r\n`;
    env.upstream.script(generate(STREAM, () => ({ headers: { 'content-type': 'text/event-stream' }, sse })));
    const res = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gemini-pro', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'x' }] } });
    expect(res.text).to.include('event: error').and.include('rate_limit_error').and.include('Resource has been exhausted');
    expect(res.text).not.to.include('message_stop');
  });

  it('a malformed function call with nothing said is the upstream\'s failure, never an empty success', async () => {
    env.upstream.script(generate(WHOLE, () => ({ headers: json, body: answer([], 'MALFORMED_FUNCTION_CALL') })));
    const whole = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'gemini-pro', max_tokens: 50, tools: [weather], messages: [{ role: 'user', content: 'Weather?' }] } });
    expect(whole.status).to.equal(502);
    expect(whole.text).to.include('MALFORMED_FUNCTION_CALL');
    env.upstream.script(generate(STREAM, () => ({ headers: { 'content-type': 'text/event-stream' }, sse: `data: ${JSON.stringify(answer([], 'MALFORMED_FUNCTION_CALL'))}\r\n\r\n` })));
    const streamed = await call(`${env.gw.url}/v1/chat/completions`, { headers: { authorization: `Bearer ${KEYS.alice}` }, body: { model: 'gemini-pro', stream: true, messages: [{ role: 'user', content: 'Weather?' }] } });
    expect(streamed.text).to.include('MALFORMED_FUNCTION_CALL');
    expect(streamed.text).not.to.include('[DONE]');
  });

  it('the Vercel AI SDK (its Anthropic provider) runs a tool loop through Gemini, signatures and all', async () => {
    let turn = 0;
    env.upstream.script(
      generate(WHOLE, () =>
        ++turn === 1
          ? { headers: json, body: answer([{ functionCall: { name: 'weather', args: { city: 'Rome' } }, thoughtSignature: 'sig-vercel' }]) }
          : { headers: json, body: answer([{ text: 'It is 21 C in Rome.' }]) },
      ),
    );
    const provider = createAnthropic({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
    const result = await generateText({
      model: provider('gemini-pro'),
      prompt: 'Weather in Rome?',
      tools: { weather: tool({ description: 'weather', inputSchema: z.object({ city: z.string().min(1) }), execute: async ({ city }) => ({ city, celsius: 21 }) }) },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).to.equal('It is 21 C in Rome.');
    expect(turn).to.equal(2);
    const contents = env.upstream.last().json()['contents'] as Json[];
    expect((contents[1]?.['parts'] as Json[])[0]).to.deep.include({ thoughtSignature: 'sig-vercel' });
  });

  it('count_tokens goes to countTokens with the whole request, so the system prompt and tools count', async () => {
    const COUNT = '/v1beta/models/gemini-3-pro:countTokens';
    env.upstream.script((req) => {
      if (req.url !== COUNT) return undefined;
      if (req.headers['x-goog-api-key'] !== KEY) return invalid('API key not valid.');
      const inner = req.json()['generateContentRequest'] as Json | undefined;
      if (!inner || inner['model'] !== 'models/gemini-3-pro' || !Array.isArray(inner['contents'])) return invalid('generateContentRequest is required');
      return { headers: json, body: { totalTokens: inner['systemInstruction'] && inner['tools'] ? 321 : 1 } };
    });
    const count = await anthropic.messages.countTokens({ model: 'gemini-pro', system: 'Be brief.', tools: [weather], messages: [{ role: 'user', content: 'Weather in Rome?' }] });
    expect(count.input_tokens).to.equal(321);
  });
});

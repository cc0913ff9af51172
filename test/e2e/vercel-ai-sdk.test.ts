import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { expect } from 'chai';
import { FIXTURES, type RecordedRequest, type Reply } from '../support/fake-upstream.ts';
import { KEYS, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * The Vercel AI SDK 6 (real-clients.md): its providers parse every answer and stream event with
 * zod schemas stricter than the official SDKs' types, so a field set to `null` where the real API
 * leaves it out fails the call (issue #12: `content[0].citations: expected array, received null`).
 * Both providers, on native, translated and in-process routes.
 */

const WEATHER = tool({
  description: 'Weather for a city',
  inputSchema: jsonSchema<{ location: string }>({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false }),
  execute: async () => '40 C',
});

/** True when the request carries a tool result back, in either format. */
function carriesToolResult(req: RecordedRequest): boolean {
  const messages = (req.json()['messages'] ?? []) as { role: string; content: unknown }[];
  return messages.some((m) => m.role === 'tool' || (Array.isArray(m.content) && m.content.some((b: { type?: string }) => b.type === 'tool_result')));
}

/** The upstream answers a tool result with text (it answers any request with tools with a call). */
function textAfterToolResult(req: RecordedRequest): Reply | undefined {
  if (!carriesToolResult(req)) return undefined;
  const stream = req.json()['stream'] === true;
  if (req.url.startsWith('/v1/messages')) return stream ? { sse: FIXTURES.anthropicTextSse() } : { body: FIXTURES.anthropicText() };
  return stream ? { sse: FIXTURES.openaiTextSse() } : { body: FIXTURES.openaiText() };
}

interface Route {
  readonly name: string;
  readonly model: string;
  /** The text of the route's plain answer. */
  readonly text: RegExp;
  /** Token counts of the plain answer, whole and streamed (the stream fixtures differ). */
  readonly usage: { readonly whole: readonly [number, number]; readonly streamed: readonly [number, number] };
  /** The location the tool call carries. */
  readonly location: RegExp;
  /** The text answering the tool result. */
  readonly afterTool: RegExp;
}

const DEMO_TEXT = /^This is Junction's offline demo model\. It received 1 text part; the last one reads: "Say hello"$/;
const DEMO_USAGE = { whole: [3, 17], streamed: [3, 17] } as const;
/** The demo reads the tool result as its last text. */
const DEMO_AFTER_TOOL = /^This is Junction's offline demo model\. It received 2 text parts; the last one reads: "40 C"$/;
const MESSAGES_TEXT = /^Hello!? How can I help\?$|^Hello!$/;
const CHAT_TEXT = /^Hello! How can I help\?$/;

const PROVIDERS = [
  {
    name: '@ai-sdk/anthropic',
    model: (baseURL: string, id: string): LanguageModel => createAnthropic({ baseURL, apiKey: KEYS.alice })(id),
    routes: [
      // Native: the fake upstream's recorded Anthropic answers, relayed byte for byte.
      { name: 'native', model: 'claude-sonnet-4-6', text: MESSAGES_TEXT, usage: { whole: [12, 9], streamed: [25, 15] }, location: /^Florence, Italy$/, afterTool: MESSAGES_TEXT },
      // Translated: a Chat upstream's answers converted to Messages by the gateway.
      { name: 'translated', model: 'gpt-4o', text: CHAT_TEXT, usage: { whole: [19, 7], streamed: [19, 7] }, location: /^Florence, Italy$/, afterTool: CHAT_TEXT },
      { name: 'in-process', model: 'demo', text: DEMO_TEXT, usage: DEMO_USAGE, location: /^Weather in Florence\?$/, afterTool: DEMO_AFTER_TOOL },
    ],
  },
  {
    name: '@ai-sdk/openai (chat)',
    model: (baseURL: string, id: string): LanguageModel => createOpenAI({ baseURL, apiKey: KEYS.alice }).chat(id),
    routes: [
      { name: 'native', model: 'gpt-4o', text: CHAT_TEXT, usage: { whole: [19, 7], streamed: [19, 7] }, location: /^Florence, Italy$/, afterTool: CHAT_TEXT },
      { name: 'translated', model: 'claude-sonnet-4-6', text: MESSAGES_TEXT, usage: { whole: [12, 9], streamed: [25, 15] }, location: /^Florence, Italy$/, afterTool: MESSAGES_TEXT },
      { name: 'in-process', model: 'demo', text: DEMO_TEXT, usage: DEMO_USAGE, location: /^Weather in Florence\?$/, afterTool: DEMO_AFTER_TOOL },
    ],
  },
] as const satisfies readonly { name: string; model: (baseURL: string, id: string) => LanguageModel; routes: readonly Route[] }[];

describe('Vercel AI SDK 6 through the gateway (issue #12)', () => {
  const env = useUpstreamAndGateway();

  for (const provider of PROVIDERS) {
    for (const route of provider.routes) {
      describe(`${provider.name}, ${route.name} route (${route.model})`, () => {
        const model = (): LanguageModel => provider.model(`${env.gw.url}/v1`, route.model);

        it('generateText returns the text, the finish reason and the usage', async () => {
          const result = await generateText({ model: model(), prompt: 'Say hello', maxOutputTokens: 64, maxRetries: 0 });
          expect(result.text).to.match(route.text);
          expect(result.finishReason).to.equal('stop');
          expect([result.usage.inputTokens, result.usage.outputTokens]).to.deep.equal(route.usage.whole);
          expect(result.usage.totalTokens).to.equal(route.usage.whole[0] + route.usage.whole[1]);
        });

        it('streamText streams the text and ends with the usage', async () => {
          const errors: unknown[] = [];
          const result = streamText({ model: model(), prompt: 'Say hello', maxOutputTokens: 64, maxRetries: 0, onError: ({ error }) => void errors.push(error) });
          const parts: string[] = [];
          for await (const part of result.textStream) parts.push(part);
          expect(errors).to.deep.equal([]);
          expect(parts.length).to.be.greaterThan(1);
          expect(parts.join('')).to.match(route.text);
          expect(await result.finishReason).to.equal('stop');
          const usage = await result.usage;
          expect([usage.inputTokens, usage.outputTokens]).to.deep.equal(route.usage.streamed);
        });

        it('generateText returns a tool call with its parsed input', async () => {
          const result = await generateText({
            model: model(),
            prompt: 'Weather in Florence?',
            tools: { weather: WEATHER },
            toolChoice: 'required',
            maxOutputTokens: 64,
            maxRetries: 0,
          });
          expect(result.finishReason).to.equal('tool-calls');
          expect(result.toolCalls).to.have.length(1);
          expect(result.toolCalls[0]?.toolName).to.equal('weather');
          expect((result.toolCalls[0]?.input as { location: string }).location).to.match(route.location);
          expect(result.toolResults.map((r) => r.output)).to.deep.equal(['40 C']);
          expect(result.usage.outputTokens).to.be.greaterThan(0);
        });

        it('generateText runs a tool loop: the tool result goes back and the model answers it', async () => {
          env.upstream.script(textAfterToolResult);
          const result = await generateText({
            model: model(),
            prompt: 'Weather in Florence?',
            tools: { weather: WEATHER },
            prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'auto' }),
            stopWhen: stepCountIs(3),
            maxOutputTokens: 64,
            maxRetries: 0,
          });
          expect(result.steps.map((s) => s.finishReason)).to.deep.equal(['tool-calls', 'stop']);
          expect(result.text).to.match(route.afterTool);
          if (route.name !== 'in-process') {
            const second = env.upstream.last();
            expect(carriesToolResult(second)).to.equal(true);
            expect(second.body.toString()).to.include('40 C');
          }
        });

        it('streamText streams a tool call with its input', async () => {
          const errors: unknown[] = [];
          const result = streamText({
            model: model(),
            prompt: 'Weather in Florence?',
            tools: { weather: WEATHER },
            toolChoice: 'required',
            maxOutputTokens: 64,
            maxRetries: 0,
            onError: ({ error }) => void errors.push(error),
          });
          const calls = await result.toolCalls;
          expect(errors).to.deep.equal([]);
          expect(calls.map((c) => c.toolName)).to.deep.equal(['weather']);
          expect((calls[0]?.input as { location: string }).location).to.match(route.location);
          expect(await result.finishReason).to.equal('tool-calls');
          expect((await result.usage).outputTokens).to.be.greaterThan(0);
        });
      });
    }
  }
});

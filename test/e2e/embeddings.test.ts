import { createOpenAI } from '@ai-sdk/openai';
import { embed, embedMany } from 'ai';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, expectNothingSentOrCharged, KEYS, MESSAGES_HEADERS, PROVIDER_KEYS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * POST /v1/embeddings (issue #13; media.md §4): native passthrough to an OpenAI-compatible upstream
 * and in-process through the mock, with the openai SDK (which asks for base64 by default and
 * decodes little-endian float32 itself) and the Vercel AI SDK's `embed` and `embedMany`.
 */

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openai/${name}`, import.meta.url), 'utf8');
const BASE64 = fixture('embeddings-base64.json');
const FLOAT = fixture('embeddings-float.json');
const FLOATS = (JSON.parse(FLOAT) as { data: { embedding: number[] }[] }).data.map((d) => d.embedding);

/** The upstream answers in the encoding asked for, as OpenAI does. */
const embeddingsUpstream = (req: RecordedRequest): Reply | undefined =>
  req.url === '/v1/embeddings' ? { body: req.json()['encoding_format'] === 'base64' ? BASE64 : FLOAT, headers: { 'content-type': 'application/json' } } : undefined;

const EXTRA = `  - id: embed-native
    routes: [{ provider: openai, model: text-embedding-3-small }]
    pricing: { input: 0.02 }
    output_modalities: [embeddings]
  - id: embed-demo
    routes: [{ provider: mock }]
    pricing: { input: 1 }
    output_modalities: [embeddings]
  - id: embed-pricey
    routes: [{ provider: mock }]
    pricing: { input: 1000000 }
    output_modalities: [embeddings]
`;

describe('embeddings', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url, EXTRA));
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = async (id: string | null) =>
    (await call(`${env.gw.url}/v1/generations/${id}`, { headers: CHAT_HEADERS })).json() as { endpoint: string; route: string; tokens: { input: number; output: number }; cost_usd: number };

  describe('native route', () => {
    it('openai SDK: the upstream gets base64 asked for and the provider key; the client decodes the same floats', async () => {
      env.upstream.script(embeddingsUpstream);
      const { data: answer, response } = await openai.embeddings.create({ model: 'embed-native', input: ['hello', 'world'] }).withResponse();
      const seen = env.upstream.last();
      expect(seen.url).to.equal('/v1/embeddings');
      expect(seen.json()).to.deep.equal({ model: 'text-embedding-3-small', input: ['hello', 'world'], encoding_format: 'base64' });
      expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(seen.rawHeaders.join('\n')).not.to.include(KEYS.alice);
      expect(answer.data.map((d) => d.embedding)).to.deep.equal(FLOATS);
      expect(answer.usage).to.deep.equal({ prompt_tokens: 5, total_tokens: 5 });
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'embeddings', route: 'native', cost_usd: 5 * 0.02e-6 });
      expect(row.tokens).to.deep.include({ input: 5, output: 0 });
    });

    it('passes the answer through byte for byte', async () => {
      env.upstream.script(embeddingsUpstream);
      const res = await call(`${env.gw.url}/v1/embeddings`, { headers: CHAT_HEADERS, body: { model: 'embed-native', input: 'x', encoding_format: 'base64' } });
      expect(res.status).to.equal(200);
      expect(res.text).to.equal(BASE64);
    });

    it("relays the upstream's error in OpenAI's envelope, and charges nothing", async () => {
      const error = { error: { message: "This model does not support specifying dimensions.", type: 'invalid_request_error', param: 'dimensions', code: null } };
      env.upstream.script(() => ({ status: 400, body: error }));
      const before = await balance();
      const res = await call(`${env.gw.url}/v1/embeddings`, { headers: CHAT_HEADERS, body: { model: 'embed-native', input: 'x', dimensions: 3 } });
      expect(res.status).to.equal(400);
      expect(res.json()['error']).to.deep.include({ message: error.error.message, type: 'invalid_request_error' });
      expect((await balance()).spent_usd).to.equal(before.spent_usd);
    });

    it('Vercel AI SDK: embed and embedMany', async () => {
      env.upstream.script(embeddingsUpstream);
      const model = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice }).embedding('embed-native');
      const one = await embed({ model, value: 'hello', maxRetries: 0 });
      expect(one.embedding).to.deep.equal(FLOATS[0]);
      expect(one.usage).to.deep.equal({ tokens: 5 });
      const many = await embedMany({ model, values: ['hello', 'world'], maxRetries: 0 });
      expect(many.embeddings).to.deep.equal(FLOATS);
      expect(env.upstream.last().json()).to.deep.include({ model: 'text-embedding-3-small', input: ['hello', 'world'], encoding_format: 'float' });
    });
  });

  describe('in-process (the mock)', () => {
    it('openai SDK: base64 by default, decoded to the floats asked for directly; deterministic; charged at the input price', async () => {
      const { data: encoded, response } = await openai.embeddings.create({ model: 'embed-demo', input: ['the cat sat', 'the cat ran'], dimensions: 16 }).withResponse();
      const floats = await openai.embeddings.create({ model: 'embed-demo', input: ['the cat sat', 'the cat ran'], dimensions: 16, encoding_format: 'float' });
      expect(encoded.data).to.have.length(2);
      for (const [i, item] of encoded.data.entries()) {
        expect(item.embedding).to.have.length(16);
        const direct = floats.data[i]?.embedding ?? [];
        // float32 on the wire: equal to float32 precision.
        item.embedding.forEach((x, j) => expect(x).to.be.closeTo(direct[j] ?? NaN, 1e-7));
        expect(Math.hypot(...direct)).to.be.closeTo(1, 1e-9);
      }
      expect(encoded.usage).to.deep.equal({ prompt_tokens: 6, total_tokens: 6 });
      const row = await generation(response.headers.get('x-request-id'));
      expect(row).to.deep.include({ endpoint: 'embeddings', route: 'in-process', cost_usd: 6e-6 });
      const again = await openai.embeddings.create({ model: 'embed-demo', input: 'the cat sat', dimensions: 16, encoding_format: 'float' });
      expect(again.data[0]?.embedding).to.deep.equal(floats.data[0]?.embedding);
    });

    it('counts token-id inputs as their ids', async () => {
      const answer = await openai.embeddings.create({ model: 'embed-demo', input: [[1, 2, 3], [4, 5]], encoding_format: 'float' });
      expect(answer.data.map((d) => d.index)).to.deep.equal([0, 1]);
      expect(answer.usage.prompt_tokens).to.equal(5);
    });

    it('Vercel AI SDK: embedMany keeps the order and reports usage', async () => {
      const model = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice }).embedding('embed-demo');
      const many = await embedMany({ model, values: ['alpha beta', 'gamma', 'alpha beta'], maxRetries: 0 });
      expect(many.embeddings).to.have.length(3);
      expect(many.embeddings[0]).to.deep.equal(many.embeddings[2]);
      expect(many.embeddings[0]).to.not.deep.equal(many.embeddings[1]);
      expect(many.usage.tokens).to.be.above(0);
    });
  });

  describe('refused before anything goes upstream, and never charged', () => {
    expectNothingSentOrCharged(env);

    it('a text model on /v1/embeddings: 400 naming the model and the endpoints it serves', async () => {
      const res = await call(`${env.gw.url}/v1/embeddings`, { headers: CHAT_HEADERS, body: { model: 'gpt-4o', input: 'x' } });
      expect(res.status).to.equal(400);
      expect(res.json()['error']).to.deep.include({
        type: 'invalid_request_error',
        param: 'model',
        message: 'model "gpt-4o" does not serve /v1/embeddings; it serves /v1/messages, /v1/messages/count_tokens, /v1/chat/completions, /v1/responses, /v1/responses/input_tokens',
      });
    });

    it('an embedding model on the chat and messages endpoints: 400 in each caller\'s format', async () => {
      const chat = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'embed-native', messages: [{ role: 'user', content: 'x' }] } });
      expect(chat.status).to.equal(400);
      expect(chat.json()['error']).to.deep.include({ param: 'model', message: 'model "embed-native" does not serve /v1/chat/completions; it serves /v1/embeddings' });
      const messages = await call(`${env.gw.url}/v1/messages`, { headers: MESSAGES_HEADERS, body: { model: 'embed-native', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } });
      expect(messages.status).to.equal(400);
      expect(messages.json()).to.deep.include({ type: 'error' });
      expect(messages.json()['error']).to.deep.include({ type: 'invalid_request_error', message: 'model "embed-native" does not serve /v1/messages; it serves /v1/embeddings' });
    });

    for (const [name, body, param, message] of [
      ['an empty string', { input: '' }, 'input', 'input: must not be an empty string'],
      ['an empty token array', { input: [[]] }, 'input[0]', 'input[0]: must not be empty'],
      ['no input', {}, 'input', undefined],
      ['an unknown encoding', { input: 'x', encoding_format: 'hex' }, 'encoding_format', undefined],
      ['more than 2,048 inputs', { input: Array.from({ length: 2049 }, () => 'x') }, 'input', undefined],
    ] as const) {
      it(`${name}: 400 naming the field`, async () => {
        const res = await call(`${env.gw.url}/v1/embeddings`, { headers: CHAT_HEADERS, body: { model: 'embed-native', ...body } });
        expect(res.status).to.equal(400);
        expect(res.json()['error']).to.deep.include({ type: 'invalid_request_error', param });
        if (message) expect((res.json()['error'] as { message: string }).message).to.equal(message);
      });
    }

    it('a key that cannot cover the input: 402', async () => {
      // About 500 tokens at $1 each, held before dispatch, against a balance of $100.
      const res = await call(`${env.gw.url}/v1/embeddings`, { headers: CHAT_HEADERS, body: { model: 'embed-pricey', input: 'word '.repeat(500) } });
      expect(res.status).to.equal(402);
    });
  });

  describe('GET /v1/models', () => {
    const ids = async (query: string) =>
      ((await call(`${env.gw.url}/v1/models${query}`, { headers: CHAT_HEADERS })).json()['data'] as { id: string }[]).map((m) => m.id);

    it('?output_modalities=embeddings lists the embedding models; all, or none given, lists every model', async () => {
      expect(await ids('?output_modalities=embeddings')).to.deep.equal(['embed-native', 'embed-demo', 'embed-pricey']);
      const text = await ids('?output_modalities=text');
      expect(text).to.include('gpt-4o');
      expect(text).to.not.include('embed-native');
      const every = await ids('');
      expect(every).to.include('embed-native').and.to.include('gpt-4o');
      expect(await ids('?output_modalities=all')).to.deep.equal(every);
    });

    it('shows an embedding model\'s modalities and input price, and no chat parameters', async () => {
      const entry = (await call(`${env.gw.url}/v1/models/embed-native`, { headers: CHAT_HEADERS })).json();
      expect(entry['architecture']).to.deep.equal({ modality: 'text->embeddings', input_modalities: ['text'], output_modalities: ['embeddings'] });
      expect(entry['pricing']).to.deep.include({ prompt: '0.00000002', completion: '0' });
      expect(entry['supported_parameters']).to.deep.equal([]);
    });
  });

  const balance = async () => (await call(`${env.gw.url}/v1/balance`, { headers: CHAT_HEADERS })).json() as { spent_usd: number; held_usd: number; requests: number };
});

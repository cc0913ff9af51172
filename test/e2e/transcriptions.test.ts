import { once } from 'node:events';
import { createOpenAI } from '@ai-sdk/openai';
import { experimental_transcribe as transcribe } from 'ai';
import { expect } from 'chai';
import OpenAI, { toFile } from 'openai';
import type { RecordedRequest } from '../support/fake-upstream.ts';
import { call, CHAT_HEADERS, expectNothingSentOrCharged, KEYS, PROVIDER_KEYS, standardConfig, generationOf, useUpstreamAndGateway } from '../support/gateway.ts';
import { multipart, postForm, wav, type PartSpec } from '../support/multipart.ts';

/**
 * POST /v1/audio/transcriptions and /v1/audio/translations (issue #13; media.md §3, §8): the form
 * streams through to a native upstream as it arrives, read only for its routing fields, with the
 * model renamed in place; in-process, the demo model answers in every response format. Charged by
 * the minute or by tokens, from the usage reported, else from the upload itself.
 */

// whisper at $0.006 a minute; gpt-4o-transcribe by tokens: $2.5 text in, $6 audio in, $10 out per million.
const EXTRA = `  - id: whisper-native
    routes: [{ provider: openai, model: whisper-1 }]
    pricing: { input: 0, output: 0, audio_minute: 0.006 }
    input_modalities: [audio]
    output_modalities: [text]
  - id: transcribe-tokens
    routes: [{ provider: openai, model: gpt-4o-transcribe }]
    pricing: { input: 2.5, input_audio: 6, output: 10 }
    input_modalities: [audio]
    output_modalities: [text]
  - id: transcribe-demo
    routes: [{ provider: mock }]
    pricing: { input: 0, output: 0, audio_minute: 0.6 }
    input_modalities: [audio]
    output_modalities: [text]
`;

const json = { 'content-type': 'application/json' };
const AUTH = { authorization: `Bearer ${KEYS.alice}` };
const THREE_SECONDS = wav(3);


/** The parts of a multipart body as the upstream received it, in order. */
function partsOf(req: RecordedRequest): { name: string; filename?: string; value: Buffer }[] {
  const boundary = /boundary=([^;]+)/.exec(String(req.headers['content-type']))?.[1] ?? '';
  const out: { name: string; filename?: string; value: Buffer }[] = [];
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const body = Buffer.concat([Buffer.from('\r\n'), req.body]);
  for (let at = body.indexOf(delimiter); at !== -1; ) {
    const next = body.indexOf(delimiter, at + delimiter.length);
    if (next === -1) break;
    const part = body.subarray(at + delimiter.length + 2, next);
    const split = part.indexOf('\r\n\r\n');
    const head = part.toString('latin1', 0, split);
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    out.push({ name, ...(filename !== undefined && { filename }), value: part.subarray(split + 4) });
    at = next;
  }
  return out;
}

describe('transcriptions and translations', () => {
  const env = useUpstreamAndGateway((url) => standardConfig(url, EXTRA).replace('log: { level: info }', 'log: { level: info }\nserver: { max_body_mb: 1 }'));
  let openai: OpenAI;
  before(() => {
    openai = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 });
  });
  const generation = (id: string | string[] | null | undefined) => generationOf(env.gw.url, id);
  const balance = async () => (await call(`${env.gw.url}/v1/balance`, { headers: CHAT_HEADERS })).json() as { spent_usd: number; held_usd: number };
  const post = (path: string, parts: readonly PartSpec[], options: Parameters<typeof postForm>[3] = {}, chunkSize = 0) => {
    const { body, contentType } = multipart(parts);
    const chunks: Buffer[] = [];
    if (chunkSize === 0) chunks.push(body);
    else for (let at = 0; at < body.length; at += chunkSize) chunks.push(body.subarray(at, at + chunkSize));
    return postForm(`${env.gw.url}${path}`, { ...AUTH, 'content-type': contentType }, chunks, options);
  };
  const audioPart = (bytes = THREE_SECONDS, filename = 'speech.wav', type = 'audio/wav'): PartSpec => ({ name: 'file', filename, type, bytes });

  describe('native route', () => {
    it('openai SDK, file before model: the form arrives whole with the model renamed in place, the answer as sent, charged by the minute reported', async () => {
      const answer = JSON.stringify({ text: 'Hello there.', usage: { type: 'duration', seconds: 3 } });
      env.upstream.script(() => ({ body: answer, headers: json }));
      const result = await openai.audio.transcriptions.create({ file: await toFile(THREE_SECONDS, 'speech.wav', { type: 'audio/wav' }), model: 'whisper-native' }).withResponse();
      expect(result.data.text).to.equal('Hello there.');
      const seen = env.upstream.last();
      expect(seen.url).to.equal('/v1/audio/transcriptions');
      expect(seen.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(seen.headers['content-type']).to.match(/^multipart\/form-data; boundary=/);
      expect(Number(seen.headers['content-length'])).to.equal(seen.body.length);
      const parts = partsOf(seen);
      expect(parts.map((p) => p.name)).to.deep.equal(['file', 'model']);
      expect(parts[0]?.filename).to.equal('speech.wav');
      expect(parts[0]?.value.equals(THREE_SECONDS)).to.equal(true);
      expect(parts[1]?.value.toString()).to.equal('whisper-1');
      const row = await generation(result.response.headers.get('x-request-id'));
      // 3 s at $0.006 a minute.
      expect(row).to.deep.include({ endpoint: 'audio_transcriptions', route: 'native', cost_usd: 0.0003, estimated: false });
      expect(row.tokens).to.deep.include({ audio_seconds: 3 });
      // The request log line shows the seconds too.
      const line = env.gw.logs.requests().find((l) => l['req_id'] === result.response.headers.get('x-request-id'));
      expect(line).to.have.nested.property('tokens.audio_seconds', 3);
    });

    it('model before file: the upstream receives the upload while the client is still sending it', async () => {
      env.upstream.script(() => ({ body: { text: 'streamed', usage: { type: 'duration', seconds: 3 } }, headers: json }));
      const { body, contentType } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart()]);
      const half = body.length >> 1;
      const started = once(env.upstream.events, 'body-start');
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { ...AUTH, 'content-type': contentType }, [body.subarray(0, half), body.subarray(half)], {
        contentLength: null, // chunked: the gateway cannot know the length
        between: async () => {
          // The second half is sent only once the first has reached the upstream: buffering would deadlock here.
          await started;
        },
      });
      expect(res.status).to.equal(200);
      expect(res.json()).to.deep.equal({ text: 'streamed', usage: { type: 'duration', seconds: 3 } });
      const seen = env.upstream.last();
      expect(seen.headers['content-length']).to.equal(undefined);
      expect(seen.headers['transfer-encoding']).to.equal('chunked');
      const parts = partsOf(seen);
      expect(parts.map((p) => [p.name, p.value.length])).to.deep.equal([['model', 'whisper-1'.length], ['file', THREE_SECONDS.length]]);
      expect(parts[1]?.value.equals(THREE_SECONDS)).to.equal(true);
    });

    it('a form cut into 7-byte chunks arrives byte for byte (but for the model), delimiters split every way', async () => {
      env.upstream.script(() => ({ body: { text: 'ok', usage: { type: 'duration', seconds: 3 } }, headers: json }));
      const parts: PartSpec[] = [{ name: 'language', value: 'en' }, audioPart(wav(0.05)), { name: 'model', value: 'whisper-native' }, { name: 'temperature', value: '0.2' }];
      const res = await post('/v1/audio/transcriptions', parts, {}, 7);
      expect(res.status).to.equal(200);
      const expected = multipart(parts.map((p) => (p.name === 'model' ? { name: 'model', value: 'whisper-1' } : p))).body;
      expect(env.upstream.last().body.equals(expected)).to.equal(true);
    });

    it('text format, no usage in the answer: charged by the WAV header\'s length, exactly', async () => {
      env.upstream.script(() => ({ body: 'Hello there.\n', headers: { 'content-type': 'text/plain; charset=utf-8' } }));
      const res = await post('/v1/audio/transcriptions', [audioPart(wav(30)), { name: 'model', value: 'whisper-native' }, { name: 'response_format', value: 'text' }]);
      expect(res.status).to.equal(200);
      expect(res.text).to.equal('Hello there.\n');
      const row = await generation(res.headers['x-request-id']);
      // 30 s at $0.006 a minute.
      expect(row).to.deep.include({ cost_usd: 0.003, estimated: false });
      expect(row.tokens).to.deep.include({ audio_seconds: 30 });
    });

    for (const chunked of [false, true]) {
      it(`srt of an upload whose length cannot be read${chunked ? ', sent chunked' : ''}: charged by the file's own size at 16 kbps, marked estimated`, async () => {
        env.upstream.script(() => ({ body: '1\n00:00:00,000 --> 00:00:01,000\nHi\n\n', headers: { 'content-type': 'text/plain' } }));
        const mp3 = Buffer.alloc(20_000, 0x55);
        const parts: PartSpec[] = [{ name: 'model', value: 'whisper-native' }, { name: 'response_format', value: 'srt' }, audioPart(mp3, 'a.mp3', 'audio/mpeg')];
        const res = await post('/v1/audio/transcriptions', parts, chunked ? { contentLength: null } : {});
        expect(res.status).to.equal(200);
        const row = await generation(res.headers['x-request-id']);
        // 20,000 bytes at 2,000 a second, not the body limit a chunked upload was held at.
        expect(row.estimated).to.equal(true);
        expect(row.tokens['audio_seconds']).to.equal(10);
        expect(row.cost_usd).to.be.closeTo((10 / 60) * 0.006, 1e-12);
      });
    }

    it('a client that leaves after its whole upload reached the upstream is charged the audio heard, estimated', async () => {
      env.upstream.script(() => ({ hang: true }));
      const { body, contentType } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart(wav(40))]);
      const logged = env.gw.logs.requests().length;
      const http = await import('node:http');
      const req = http.request(`${env.gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { ...AUTH, 'content-type': contentType, 'content-length': String(body.length) } });
      req.on('error', () => undefined);
      const arrived = new Promise<void>((resolve) => env.upstream.script((seen) => (resolve(), void seen, { hang: true })));
      req.end(body);
      await arrived;
      req.destroy();
      const line = (await env.gw.requestLogs(logged + 1)).at(-1);
      expect(line).to.deep.include({ status: 499, error: 'client_disconnected' });
      const row = await generation(String(line?.['req_id']));
      // 40 s of WAV at $0.006 a minute.
      expect(row).to.deep.include({ estimated: true, cost_usd: 0.004 });
    });

    it('the upstream gets the boundary the gateway read, in a content type of its own', async () => {
      env.upstream.script(() => ({ body: { text: 'ok' }, headers: json }));
      const { body } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart()]);
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { ...AUTH, 'content-type': 'Multipart/Form-Data; charset=utf-8; boundary="----junction-test-7f3a"' }, [body]);
      expect(res.status).to.equal(200);
      expect(env.upstream.last().headers['content-type']).to.equal('multipart/form-data; boundary=----junction-test-7f3a');
    });

    it('token-priced model streamed: the events pass untouched; audio tokens charged at their own price', async () => {
      const sse =
        'data: {"type":"transcript.text.delta","delta":"Hello"}\n\n' +
        'data: {"type":"transcript.text.delta","delta":" there."}\n\n' +
        'data: {"type":"transcript.text.done","text":"Hello there.","usage":{"type":"tokens","input_tokens":120,"input_token_details":{"text_tokens":20,"audio_tokens":100},"output_tokens":4,"total_tokens":124}}\n\n';
      env.upstream.script(() => ({ sse }));
      const { data: stream, response } = await openai.audio.transcriptions.create({ file: await toFile(THREE_SECONDS, 'a.wav'), model: 'transcribe-tokens', stream: true }).withResponse();
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).to.deep.equal(['transcript.text.delta', 'transcript.text.delta', 'transcript.text.done']);
      const parts = partsOf(env.upstream.last());
      expect(parts.find((p) => p.name === 'model')?.value.toString()).to.equal('gpt-4o-transcribe');
      expect(parts.find((p) => p.name === 'stream')?.value.toString()).to.equal('true');
      const rows = (await call(`${env.gw.url}/v1/balance`, { headers: CHAT_HEADERS })).json();
      expect(rows['held_usd']).to.equal(0);
      // 20 text tokens at $2.5, 100 audio tokens at $6, 4 out at $10 per million.
      const row = await generation(response.headers.get('x-request-id'));
      expect(row.tokens).to.deep.include({ input: 20, input_audio: 100, output: 4 });
      expect(row.cost_usd).to.be.closeTo((20 * 2.5 + 100 * 6 + 4 * 10) / 1e6, 1e-12);
    });

    it('a form read whole before routing (file first) is sent again on a retry, identical', async () => {
      let calls = 0;
      env.upstream.script(() => (++calls === 1 ? { status: 500, body: { error: { message: 'boom', type: 'server_error' } }, headers: json } : { body: { text: 'second time' }, headers: json }));
      const res = await post('/v1/audio/transcriptions', [audioPart(), { name: 'model', value: 'whisper-native' }]);
      expect(res.status).to.equal(200);
      expect(res.json()).to.deep.equal({ text: 'second time' });
      expect(env.upstream.requests).to.have.length(2);
      expect(env.upstream.requests[1]?.body.equals(env.upstream.requests[0]?.body ?? Buffer.alloc(0))).to.equal(true);
    });

    it('a form that was still flowing upstream gets one attempt: the upstream\'s 500 is the answer', async () => {
      env.upstream.script(() => ({ status: 500, body: { error: { message: 'boom', type: 'server_error' } }, headers: json }));
      const { body, contentType } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart()]);
      const started = once(env.upstream.events, 'body-start');
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { ...AUTH, 'content-type': contentType }, [body.subarray(0, 1000), body.subarray(1000)], {
        contentLength: null,
        between: async () => {
          await started;
        },
      });
      expect(res.status).to.equal(500);
      expect(env.upstream.requests).to.have.length(1);
    });

    it('GET /v1/models shows the minute price and the audio input', async () => {
      const res = await call(`${env.gw.url}/v1/models/whisper-native`, { headers: CHAT_HEADERS });
      expect(res.json()).to.have.nested.property('pricing.audio_minute', '0.006');
      expect(res.json()).to.have.nested.property('architecture.input_modalities').that.deep.equals(['audio']);
    });

    it('translations through the openai SDK reach /v1/audio/translations, renamed', async () => {
      env.upstream.script(() => ({ body: { text: 'In English.' }, headers: json }));
      const result = await openai.audio.translations.create({ file: await toFile(THREE_SECONDS, 'fr.wav'), model: 'whisper-native' });
      expect(result.text).to.equal('In English.');
      expect(env.upstream.last().url).to.equal('/v1/audio/translations');
      expect(partsOf(env.upstream.last()).find((p) => p.name === 'model')?.value.toString()).to.equal('whisper-1');
    });

    it('an unknown response format goes upstream; its 400 comes back in OpenAI\'s shape, and nothing is charged', async () => {
      const before = await balance();
      env.upstream.script(() => ({ status: 400, body: { error: { message: "Invalid value: 'mp3'. Supported values are: 'json', 'text'…", type: 'invalid_request_error', param: 'response_format', code: 'invalid_value' } }, headers: json }));
      const res = await post('/v1/audio/transcriptions', [audioPart(), { name: 'model', value: 'whisper-native' }, { name: 'response_format', value: 'mp3' }]);
      expect(res.status).to.equal(400);
      expect((res.json()['error'] as Record<string, unknown>)['param']).to.equal('response_format');
      const after = await balance();
      expect(after.spent_usd).to.equal(before.spent_usd);
      expect(after.held_usd).to.equal(0);
    });
  });

  describe('refused, with nothing charged and no whole form upstream', () => {
    // The upstream may see part of a refused form, never a whole one (a whole one would be recorded).
    expectNothingSentOrCharged(env);

    it('415 for a JSON body, naming the content type the endpoint takes', async () => {
      const res = await call(`${env.gw.url}/v1/audio/transcriptions`, { headers: CHAT_HEADERS, body: { model: 'whisper-native', file: 'x' } });
      expect(res.status).to.equal(415);
      expect(res.json()).to.have.nested.property('error.message').that.includes('multipart/form-data');
    });

    it('413 at once for a declared length over server.max_body_mb: the upstream gets nothing', async () => {
      const res = await post('/v1/audio/transcriptions', [{ name: 'model', value: 'whisper-native' }, audioPart(Buffer.alloc(1100 * 1024))]);
      expect(res.status).to.equal(413);
      expect(res.headers['connection']).to.equal('close');
      expect(env.upstream.bodies.started).to.equal(0);
    });

    it('413 while streaming a chunked upload past the limit: the upstream request is cut before the form ends', async () => {
      const cut = once(env.upstream.events, 'cut');
      const res = await post('/v1/audio/transcriptions', [{ name: 'model', value: 'whisper-native' }, audioPart(Buffer.alloc(1100 * 1024))], { contentLength: null }, 64 * 1024);
      expect(res.status).to.equal(413);
      expect(res.json()).to.have.nested.property('error.type', 'request_too_large');
      await cut;
      expect(env.upstream.bodies.started).to.equal(1);
    });

    it('400 naming file when the form has no file: the upstream request is cut before the form ends', async () => {
      const res = await post('/v1/audio/transcriptions', [{ name: 'model', value: 'whisper-native' }, { name: 'language', value: 'en' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'file');
    });

    it('a wrong key: 401 before a byte of the upload is read, and the connection closed', async () => {
      const { body, contentType } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart()]);
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { authorization: 'Bearer sk-jct-wrong-key-0000000000', 'content-type': contentType }, [body]);
      expect(res.status).to.equal(401);
      expect(res.headers['connection']).to.equal('close');
    });

    it('400 for a form without its closing boundary', async () => {
      const { body, contentType } = multipart([audioPart(), { name: 'model', value: 'whisper-native' }]);
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { ...AUTH, 'content-type': contentType }, [body.subarray(0, body.length - 10)]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.message').that.includes('closing boundary');
    });

    it('400 for a content type with two boundaries: the gateway and the upstream could read two different forms', async () => {
      const { body } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart()]);
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { ...AUTH, 'content-type': 'multipart/form-data; boundary=----junction-test-7f3a; boundary=other' }, [body]);
      expect(res.status).to.equal(400);
    });

    it('400 for a model sent twice, once after the file', async () => {
      const res = await post('/v1/audio/transcriptions', [{ name: 'model', value: 'whisper-native' }, audioPart(), { name: 'model', value: 'transcribe-tokens' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.message').that.includes('"model" is sent more than once');
    });

    it('400 for two audio files', async () => {
      const res = await post('/v1/audio/transcriptions', [audioPart(), audioPart(), { name: 'model', value: 'whisper-native' }]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'file');
    });

    it('400 for a multipart type with no boundary', async () => {
      const res = await postForm(`${env.gw.url}/v1/audio/transcriptions`, { ...AUTH, 'content-type': 'multipart/form-data' }, [Buffer.from('x')]);
      expect(res.status).to.equal(400);
    });

    it('400 naming model when the form has none', async () => {
      const res = await post('/v1/audio/transcriptions', [audioPart()]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.param', 'model');
    });

    it('a chat model on the transcription endpoint: 400 naming the endpoints it serves', async () => {
      const res = await post('/v1/audio/transcriptions', [{ name: 'model', value: 'gpt-4o' }, audioPart()]);
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.message').that.includes('/v1/chat/completions');
    });

    it('a transcription model on chat: 400 naming its endpoints', async () => {
      const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'whisper-native', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.status).to.equal(400);
      expect(res.json()).to.have.nested.property('error.message').that.includes('/v1/audio/transcriptions');
    });

    it('a client that hangs up mid-upload leaves nothing behind', async () => {
      const { body, contentType } = multipart([{ name: 'model', value: 'whisper-native' }, audioPart(wav(20))]);
      const cut = once(env.upstream.events, 'cut');
      const logged = env.gw.logs.requests().length;
      const http = await import('node:http');
      const req = http.request(`${env.gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { ...AUTH, 'content-type': contentType, 'content-length': String(body.length) } });
      req.on('error', () => undefined);
      req.write(body.subarray(0, body.length >> 1));
      await once(env.upstream.events, 'body-start');
      req.destroy();
      await cut;
      const line = (await env.gw.requestLogs(logged + 1)).at(-1);
      expect(line).to.deep.include({ path: '/v1/audio/transcriptions', status: 499, error: 'client_disconnected', cost_usd: '0' });
    });
  });

  describe('in-process (the demo model)', () => {
    it('openai SDK: json with the seconds heard, charged by the minute', async () => {
      const result = await openai.audio.transcriptions.create({ file: await toFile(wav(12), 'a.wav'), model: 'transcribe-demo' }).withResponse();
      expect(result.data.text).to.equal('This is the Junction demo transcription. It says the same thing whatever it hears.');
      expect(result.data).to.deep.include({ usage: { type: 'duration', seconds: 12 } });
      const row = await generation(result.response.headers.get('x-request-id'));
      // 12 s at $0.6 a minute.
      expect(row).to.deep.include({ route: 'in-process', cost_usd: 0.12 });
    });

    it('verbose_json, srt and vtt, timed over the audio', async () => {
      const file = await toFile(wav(4), 'a.wav');
      const verbose = await openai.audio.transcriptions.create({ file, model: 'transcribe-demo', response_format: 'verbose_json' });
      expect(verbose).to.deep.include({ duration: 4, language: 'english', task: 'transcribe' });
      expect(verbose.segments?.map((s) => [s.start, s.end])).to.deep.equal([[0, 2], [2, 4]]);
      const srt = await openai.audio.transcriptions.create({ file: await toFile(wav(4), 'a.wav'), model: 'transcribe-demo', response_format: 'srt' });
      expect(srt).to.equal('1\n00:00:00,000 --> 00:00:02,000\nThis is the Junction demo transcription.\n\n2\n00:00:02,000 --> 00:00:04,000\nIt says the same thing whatever it hears.\n\n');
      const vtt = await openai.audio.transcriptions.create({ file: await toFile(wav(4), 'a.wav'), model: 'transcribe-demo', response_format: 'vtt' });
      expect(vtt).to.match(/^WEBVTT\n\n00:00:00\.000 --> 00:00:02\.000\n/);
    });

    it('stream: true through the SDK: word deltas, then the whole text', async () => {
      const stream = await openai.audio.transcriptions.create({ file: await toFile(wav(1), 'a.wav'), model: 'transcribe-demo', stream: true });
      let text = '';
      let done = '';
      for await (const event of stream) {
        if (event.type === 'transcript.text.delta') text += event.delta;
        if (event.type === 'transcript.text.done') done = event.text;
      }
      expect(text).to.equal(done);
      expect(done).to.include('Junction demo transcription');
    });

    it('translations', async () => {
      const result = await openai.audio.translations.create({ file: await toFile(wav(2), 'fr.wav'), model: 'transcribe-demo' });
      expect(result.text).to.equal('This is the Junction demo translation. It is always in English.');
    });

    it('the Vercel AI SDK transcribe()', async () => {
      const provider = createOpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice });
      const result = await transcribe({ model: provider.transcription('transcribe-demo'), audio: wav(2) });
      expect(result.text).to.include('Junction demo transcription');
    });

    it('a file spooled past memory is read whole by the plugin', async () => {
      const result = await openai.audio.transcriptions.create({ file: await toFile(wav(30), 'long.wav'), model: 'transcribe-demo', response_format: 'verbose_json' });
      expect(result.duration).to.equal(30);
    });
  });
});

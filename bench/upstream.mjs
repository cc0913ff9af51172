// The upstream simulator (issue #6): loopback, every wire format (Messages, Chat, Responses, Gemini), streamed or whole.
// Knobs ride in the model name so every arm sends the same bytes: `…sim-c<chunks>-g<gapMs>-l<latencyMs>`
// (defaults: 64 events, no gap, no latency). Prints `PORT <n>` when listening.
import http from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

const event = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const chatChunk = (delta, finish = null, extra = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', created: 1, model: 'sim', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

/** `count` events in all, content deltas in the middle. */
function messagesStream(count) {
  const deltas = Math.max(1, count - 5);
  const out = [event('message_start', { type: 'message_start', message: { id: 'msg_sim', type: 'message', role: 'assistant', content: [], model: 'sim', stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, output_tokens: 1 } } }),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })];
  for (let i = 0; i < deltas; i++) out.push(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} and more ` } }));
  out.push(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  out.push(event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } }));
  out.push(event('message_stop', { type: 'message_stop' }));
  return out;
}

function chatStream(count) {
  const deltas = Math.max(1, count - 4);
  const out = [chatChunk({ role: 'assistant', content: '' })];
  for (let i = 0; i < deltas; i++) out.push(chatChunk({ content: `word${i} and more ` }));
  out.push(chatChunk({}, 'stop'));
  out.push(`data: ${JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion.chunk', created: 1, model: 'sim', choices: [], usage: { prompt_tokens: 25, completion_tokens: deltas, total_tokens: 25 + deltas } })}\n\n`);
  out.push('data: [DONE]\n\n');
  return out;
}

/** A Responses stream (issue #14): created, in_progress, a message item with `count - 7` deltas, completed. */
function responsesStream(count) {
  const deltas = Math.max(1, count - 8);
  let seq = 0;
  const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const base = { id: 'resp_sim', object: 'response', created_at: 1, model: 'sim', status: 'in_progress', output: [], usage: null };
  const item = { id: 'msg_sim', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  const out = [ev('response.created', { response: base }), ev('response.in_progress', { response: base }), ev('response.output_item.added', { output_index: 0, item }),
    ev('response.content_part.added', { item_id: 'msg_sim', output_index: 0, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } })];
  let text = '';
  for (let i = 0; i < deltas; i++) {
    const delta = `word${i} and more `;
    text += delta;
    out.push(ev('response.output_text.delta', { item_id: 'msg_sim', output_index: 0, content_index: 0, delta, logprobs: [] }));
  }
  const part = { type: 'output_text', annotations: [], text };
  out.push(ev('response.output_text.done', { item_id: 'msg_sim', output_index: 0, content_index: 0, text, logprobs: [] }));
  out.push(ev('response.content_part.done', { item_id: 'msg_sim', output_index: 0, content_index: 0, part }));
  const done = { ...item, status: 'completed', content: [part] };
  out.push(ev('response.output_item.done', { output_index: 0, item: done }));
  out.push(ev('response.completed', { response: { ...base, status: 'completed', output: [done], usage: { input_tokens: 25, input_tokens_details: { cached_tokens: 0 }, output_tokens: deltas, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 25 + deltas } } }));
  return out;
}
/** A Gemini stream (issue #15): `count` events of a text delta each, the last with the finish and usage; CRLF pairs, as Gemini sends. */
function geminiStream(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const last = i === count - 1;
    const candidate = { content: { role: 'model', parts: [{ text: `word${i} and more ` }] }, index: 0, ...(last && { finishReason: 'STOP' }) };
    out.push(`data: ${JSON.stringify({ candidates: [candidate], ...(last && { usageMetadata: { promptTokenCount: 25, candidatesTokenCount: count, totalTokenCount: 25 + count } }), modelVersion: 'sim' })}\r\n\r\n`);
  }
  return out;
}
/**
 * A Bedrock InvokeModel stream (issue #15): the Messages stream's events, each base64 in a `chunk`
 * message of AWS's binary event stream, encoded once with the AWS SDK's codec. Signatures are not
 * checked here: the simulator must stay cheap next to the arm under test.
 */
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value) => ({ type: 'string', value });
function bedrockStream(count) {
  return messagesStream(count).map((sse) => {
    const data = sse.slice(sse.indexOf('data: ') + 6).trimEnd();
    const headers = { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') };
    return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify({ bytes: Buffer.from(data).toString('base64') })) }));
  });
}
const GEMINI = JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello! How can I help?' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 9, totalTokenCount: 21 }, modelVersion: 'sim' });

const RESPONSE = JSON.stringify({ id: 'resp_sim', object: 'response', created_at: 1, status: 'completed', model: 'sim', output: [{ id: 'msg_sim', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], text: 'Hello! How can I help?' }] }], usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 21 } });

const MESSAGE = JSON.stringify({ id: 'msg_sim', type: 'message', role: 'assistant', model: 'sim', content: [{ type: 'text', text: 'Hello! How can I help?' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 9 } });
const COMPLETION = JSON.stringify({ id: 'chatcmpl-sim', object: 'chat.completion', created: 1, model: 'sim', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help?' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } });
const COUNT = JSON.stringify({ input_tokens: 42 });
const streams = new Map();
const streamOf = (format, count) => {
  const key = `${format}${count}`;
  const make = { messages: messagesStream, responses: responsesStream, chat: chatStream, gemini: geminiStream, bedrock: bedrockStream }[format];
  if (!streams.has(key)) streams.set(key, make(count));
  return streams.get(key);
};

// Issue #13: a transcription reads the whole upload (counted, not kept) and answers with its
// usage; speech answers 64 KB of audio in 4 KB chunks, the first at once, as a streaming TTS does.
const TRANSCRIPT = JSON.stringify({ text: 'Hello from the simulator.', usage: { type: 'duration', seconds: 60 } });
const AUDIO_CHUNK = Buffer.alloc(4096, 0x11);
function media(req, res) {
  if (req.url.startsWith('/v1/audio/transcriptions')) {
    req.resume();
    req.on('end', () => send(res, TRANSCRIPT));
    return true;
  }
  if (!req.url.startsWith('/v1/audio/speech')) return false;
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'audio/wav' });
    let sent = 0;
    const next = () => {
      if (res.destroyed) return;
      res.write(AUDIO_CHUNK);
      if (++sent === 16) res.end();
      else setImmediate(next);
    };
    next();
  });
  return true;
}

const server = http.createServer((req, res) => {
  if (media(req, res)) return;
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    // A scan, not a parse: the simulator must stay cheap next to the arm under test.
    const head = Buffer.concat(chunks).toString('latin1');
    // Gemini and Bedrock name the model and streaming in the URL, not the body.
    const gemini = req.url.startsWith('/v1beta/models/');
    const bedrock = req.url.startsWith('/model/');
    const knobs = /"model"\s*:\s*"[^"]*sim-c(\d+)-g(\d+)-l(\d+)"/.exec(head) ?? (gemini || bedrock ? /sim-c(\d+)-g(\d+)-l(\d+)/.exec(req.url) : null);
    const [count, gap, latency] = knobs ? [Number(knobs[1]), Number(knobs[2]), Number(knobs[3])] : [64, 0, 0];
    const stream = gemini ? req.url.includes(':streamGenerateContent') : bedrock ? req.url.endsWith('/invoke-with-response-stream') : /"stream"\s*:\s*true/.test(head);
    const format = gemini ? 'gemini' : bedrock ? 'bedrock' : req.url.startsWith('/v1/chat/completions') ? 'chat' : req.url.startsWith('/v1/responses') ? 'responses' : 'messages';
    const answer = () => {
      if (req.url.startsWith('/v1/messages/count_tokens')) return send(res, COUNT);
      if (!stream) return send(res, { chat: COMPLETION, responses: RESPONSE, gemini: GEMINI, bedrock: MESSAGE, messages: MESSAGE }[format]);
      res.writeHead(200, { 'content-type': bedrock ? 'application/vnd.amazon.eventstream' : 'text/event-stream', 'cache-control': 'no-cache' });
      const events = streamOf(format, count);
      if (gap === 0) {
        res.end(bedrock ? Buffer.concat(events) : events.join(''));
        return;
      }
      let i = 0;
      const next = () => {
        if (res.destroyed) return;
        res.write(events[i++]);
        if (i === events.length) res.end();
        else setTimeout(next, gap);
      };
      next();
    };
    if (latency > 0) setTimeout(answer, latency);
    else answer();
  });
});

function send(res, body) {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

server.keepAliveTimeout = 120_000;
server.maxHeadersCount = 0;
server.listen(0, '127.0.0.1', () => console.log(`PORT ${server.address().port}`));

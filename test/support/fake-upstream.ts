import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { drained } from '../../src/sse/writer.ts';

/**
 * A loopback upstream that speaks both formats, streamed or not, from recorded-format fixtures:
 * Anthropic Messages at /v1/messages(+/count_tokens), OpenAI Chat Completions at
 * /v1/chat/completions. It records every request byte for byte, and tests can script replies.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  /** The client port of the connection, to observe keep-alive reuse. */
  readonly remotePort: number;
  /** Resolves with the time when the connection carrying the response closed or finished. */
  readonly closed: Promise<number>;
  /** True once the response closed before it was fully written (the caller went away). */
  aborted(): boolean;
  json(): Record<string, unknown>;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string | string[]>;
  /** A JSON body (object) or raw text. */
  body?: unknown;
  /** SSE text, written one event at a time. */
  sse?: string;
  /** Write the whole SSE text at once, as a fast upstream's short stream arrives in one chunk. */
  oneChunk?: boolean;
  /** Pause between SSE events, to watch a stream arrive piece by piece. */
  eventDelayMs?: number;
  /** Destroy the socket after this many SSE events (an upstream reset mid-stream). */
  resetAfterEvents?: number;
  /** Never answer (a stalled upstream). */
  hang?: boolean;
  /** Send only this many bytes of a whole (non-SSE) body, announced whole, then reset the connection. */
  truncateAt?: number;
  /** Close the connection without answering (a reset before headers). */
  resetBeforeHeaders?: boolean;
  /** Write this many SSE events, then go silent with the connection open (a stall mid-stream). */
  stallAfterEvents?: number;
  /**
   * Write `events` SSE events of about `bytes` each as fast as the reader takes them, honouring
   * backpressure; `written` reports how many went out so far, and `waiting` whether the writer
   * is waiting for the reader to drain (a slow-reader test).
   */
  flood?: { readonly events: number; readonly bytes: number; readonly format: 'messages' | 'chat'; written?: number; waiting?: boolean };
  /** Delay before answering. */
  delayMs?: number;
  /** A binary body in chunks; the rest after the first waits for `afterFirst` (audio streamed as made). */
  binary?: { readonly chunks: readonly Buffer[]; readonly contentType: string; readonly afterFirst?: Promise<void> };
}

/** A script may answer later (a fake that checks a signature asynchronously). */
export type Script = (req: RecordedRequest) => Reply | undefined | Promise<Reply | undefined>;

const fixture = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');

export const FIXTURES = {
  anthropicText: () => fixture('anthropic/text.json'),
  anthropicTextSse: () => fixture('anthropic/text.sse'),
  anthropicToolJson: () => fixture('anthropic/thinking-tool.json'),
  anthropicToolSse: () => fixture('anthropic/thinking-tool.sse'),
  anthropicCount: () => fixture('anthropic/count-tokens.json'),
  openaiText: () => fixture('openai/text.json'),
  openaiTextSse: () => fixture('openai/text.sse'),
  openaiToolJson: () => fixture('openai/tool-call.json'),
  openaiToolSse: () => fixture('openai/tool-call.sse'),
  openrouterReasoningSse: () => fixture('openai/openrouter-reasoning.sse'),
};

/** Headers a real provider sends that must never reach the client. */
export const UPSTREAM_SECRET_HEADERS: Readonly<Record<string, string | string[]>> = {
  'anthropic-organization-id': 'org-secret-1234',
  'openai-organization': 'org-secret-1234',
  'set-cookie': ['__cf_bm=secret; path=/'],
  'x-upstream-secret': 'secret',
  server: 'fake-upstream/1.0',
  'anthropic-ratelimit-requests-limit': '50',
};

export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Requests whose body began to arrive, and those cut before their end (an upload aborted by the gateway). */
  readonly bodies = { started: 0, cut: 0 };
  /** Emits 'body-start' when a request's first body bytes arrive, and 'cut' when one closes unfinished. */
  readonly events = new EventEmitter();
  #script: Script | undefined;
  readonly #server: http.Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor() {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => {
        if (chunks.length === 0) {
          this.bodies.started++;
          this.events.emit('body-start', req.url);
        }
        chunks.push(c);
      });
      req.on('close', () => {
        if (req.complete) return;
        this.bodies.cut++;
        this.events.emit('cut', req.url);
      });
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const closed = new Promise<number>((resolve) => res.once('close', () => resolve(performance.now())));
        const recorded: RecordedRequest = {
          closed,
          aborted: () => res.destroyed && !res.writableFinished,
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body,
          remotePort: req.socket.remotePort ?? 0,
          json: () => JSON.parse(body.toString('utf8')) as Record<string, unknown>,
        };
        this.requests.push(recorded);
        const scripted = this.#script?.(recorded);
        if (scripted instanceof Promise) void scripted.then((reply) => respond(res, reply ?? defaultReply(recorded)));
        else void respond(res, scripted ?? defaultReply(recorded));
      });
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  /** Replaces the default replies; return undefined from the script to fall back to them. */
  script(script: Script | undefined): void {
    this.#script = script;
  }

  reset(): void {
    this.requests.length = 0;
    this.bodies.started = 0;
    this.bodies.cut = 0;
    this.#script = undefined;
  }

  last(): RecordedRequest {
    const last = this.requests.at(-1);
    if (!last) throw new Error('the upstream received no request');
    return last;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function defaultReply(req: RecordedRequest): Reply {
  const path = req.url.split('?')[0];
  const base = { ...UPSTREAM_SECRET_HEADERS };
  if (path === '/v1/messages/count_tokens') {
    return { headers: { ...base, 'request-id': 'req_upstream_count' }, body: FIXTURES.anthropicCount() };
  }
  const body = req.json();
  const stream = body['stream'] === true;
  const tooled = Array.isArray(body['tools']) && body['tools'].length > 0;
  if (path === '/v1/messages') {
    const headers = { ...base, 'request-id': 'req_upstream_msg' };
    if (stream) return { headers, sse: tooled || body['thinking'] ? FIXTURES.anthropicToolSse() : FIXTURES.anthropicTextSse() };
    return { headers, body: tooled || body['thinking'] ? FIXTURES.anthropicToolJson() : FIXTURES.anthropicText() };
  }
  if (path === '/v1/chat/completions') {
    const headers = { ...base, 'x-request-id': 'req_upstream_chat' };
    if (!stream) return { headers, body: tooled ? FIXTURES.openaiToolJson() : FIXTURES.openaiText() };
    let sse = tooled ? FIXTURES.openaiToolSse() : FIXTURES.openaiTextSse();
    const options = body['stream_options'] as { include_usage?: boolean } | undefined;
    // As OpenAI does: the usage chunk comes only when asked for (protocol.md §B.6).
    if (options?.include_usage !== true) sse = sse.split('\n\n').filter((e) => !e.includes('"choices":[]')).join('\n\n');
    return { headers, sse };
  }
  return { status: 404, body: { error: { message: `fake upstream: no route ${path}` } } };
}

/** Replies in turn, one per request; the last repeats. */
export function inTurn(...replies: Reply[]): Script {
  let next = 0;
  return () => replies[Math.min(next++, replies.length - 1)];
}

async function flood(res: http.ServerResponse, spec: NonNullable<Reply['flood']>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const text = 'x'.repeat(spec.bytes);
  const event =
    spec.format === 'messages'
      ? `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${text}"}}\n\n`
      : `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}\n\n`;
  spec.written = 0;
  if (spec.format === 'messages') {
    res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_f","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n');
    res.write('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
  }
  for (let i = 0; i < spec.events; i++) {
    if (res.destroyed) return;
    spec.written++;
    if (!res.write(event)) {
      spec.waiting = true;
      await drained(res);
      spec.waiting = false;
    }
  }
  res.end(
    spec.format === 'messages'
      ? 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
      : 'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
  );
}

async function respond(res: http.ServerResponse, reply: Reply): Promise<void> {
  if (reply.hang) return;
  if (reply.resetBeforeHeaders) {
    res.socket?.destroy();
    return;
  }
  if (reply.flood) return flood(res, reply.flood);
  if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
  const status = reply.status ?? 200;
  if (reply.sse !== undefined) {
    res.writeHead(status, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...reply.headers });
    if (reply.oneChunk) {
      res.end(reply.sse);
      return;
    }
    const events = reply.sse.split(/(?<=\n\n)/);
    let sent = 0;
    for (const event of events) {
      if (res.destroyed) return; // the caller went away: stop, rather than keep timers alive
      if (reply.resetAfterEvents !== undefined && sent >= reply.resetAfterEvents) {
        res.socket?.destroy();
        return;
      }
      if (reply.stallAfterEvents !== undefined && sent >= reply.stallAfterEvents) return;
      res.write(event);
      sent++;
      await new Promise<void>((r) => {
        if (!reply.eventDelayMs) {
          setImmediate(r);
          return;
        }
        const timer = setTimeout(r, reply.eventDelayMs);
        res.once('close', () => {
          clearTimeout(timer);
          r();
        });
      });
    }
    res.end();
    return;
  }
  if (reply.binary) {
    res.writeHead(status, { 'content-type': reply.binary.contentType, ...reply.headers });
    const [first, ...rest] = reply.binary.chunks;
    if (first) res.write(first);
    await reply.binary.afterFirst;
    for (const part of rest) res.write(part);
    res.end();
    return;
  }
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
  if (reply.truncateAt !== undefined) {
    const bytes = Buffer.from(text);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length, ...reply.headers });
    res.write(bytes.subarray(0, reply.truncateAt), () => res.socket?.destroy());
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
  res.end(text);
}

import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

const event = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * An Anthropic Messages upstream whose streams open at once (message_start, 10 input tokens) and
 * finish (20 output tokens) only when `release()` is called: streams held open across a reload.
 * It counts the connections it accepted, to see which pools a reload renewed.
 */
export class GatedUpstream {
  readonly events = new EventEmitter();
  /** Streams opened and not yet released. */
  readonly #held: http.ServerResponse[] = [];
  readonly #sockets = new Set<Socket>();
  readonly #server: http.Server;
  /** API keys the requests carried, in order. */
  readonly keys: string[] = [];
  connections = 0;
  gated = true;
  #url = '';

  constructor() {
    this.#server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.keys.push(String(req.headers['x-api-key']));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const usage = { input_tokens: 10, output_tokens: 1 };
        res.write(event('message_start', { type: 'message_start', message: { id: 'msg_gated', type: 'message', role: 'assistant', content: [], model: 'upstream-model', stop_reason: null, stop_sequence: null, usage } }));
        res.write(event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
        if (this.gated) {
          this.#held.push(res);
          this.events.emit('held', this.#held.length);
        } else finish(res);
      });
    });
    this.#server.on('connection', (socket) => {
      this.connections++;
      this.#sockets.add(socket);
      socket.on('close', () => {
        this.#sockets.delete(socket);
        this.events.emit('socket-closed');
      });
    });
  }

  get url(): string {
    return this.#url;
  }

  get openSockets(): number {
    return this.#sockets.size;
  }

  async start(): Promise<this> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Resolves once `n` streams are held open. */
  async holding(n: number): Promise<void> {
    while (this.#held.length < n) await once(this.events, 'held');
  }

  /** Finishes every held stream. */
  release(): void {
    for (const res of this.#held.splice(0)) finish(res);
  }

  async close(): Promise<void> {
    this.release();
    for (const socket of this.#sockets) socket.destroy();
    this.#server.close();
    await once(this.#server, 'close');
  }
}

function finish(res: http.ServerResponse): void {
  res.write(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }));
  res.write(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  res.write(event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } }));
  res.end(event('message_stop', { type: 'message_stop' }));
}

import type { ServerResponse } from 'node:http';
import { SSE_HEADERS } from './encode.ts';

/**
 * Writes SSE frames to a client with backpressure: when the socket's buffer is full, `write`
 * waits for 'drain' (or the client leaving), so a slow reader never makes us buffer a whole stream.
 */
export class SseWriter {
  readonly #res: ServerResponse;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  /** True once the client has gone away or the stream was ended. */
  get closed(): boolean {
    return this.#res.destroyed || this.#res.writableEnded;
  }

  start(): void {
    this.#res.writeHead(200, SSE_HEADERS);
    // Send the headers now: a client waiting for its first event should see the stream open.
    this.#res.flushHeaders();
  }

  async write(frame: string): Promise<void> {
    if (this.closed) return;
    if (!this.#res.write(frame)) await drained(this.#res);
  }

  end(frame?: string): void {
    if (this.closed) return;
    if (frame === undefined) this.#res.end();
    else this.#res.end(frame);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

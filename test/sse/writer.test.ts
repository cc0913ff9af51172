import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import http, { type ServerResponse } from 'node:http';
import net from 'node:net';
import { keepaliveFrame } from '../../src/sse/encode.ts';
import { SseWriter } from '../../src/sse/writer.ts';
import { ManualTimers } from '../support/clock.ts';

/** Hand-driven timers that count how often they were armed. */
class CountingTimers extends ManualTimers {
  sets = 0;
  override set(fire: () => void, ms: number): unknown {
    this.sets++;
    return super.set(fire, ms);
  }
}

/** A response as the writer sees it: what it wrote, and a socket buffer that is full on demand. */
class FakeResponse extends EventEmitter {
  readonly written: string[] = [];
  headersSent = false;
  destroyed = false;
  writableEnded = false;
  writableNeedDrain = false;
  readonly writableHighWaterMark = 16_384;
  writeHead(): this {
    this.headersSent = true;
    return this;
  }
  write(text: string): boolean {
    this.written.push(text);
    return !this.writableNeedDrain;
  }
  end(text?: string): this {
    if (text !== undefined) this.written.push(text);
    this.writableEnded = true;
    // As a real response does, 'close' comes on a later turn, not inside end().
    setImmediate(() => this.emit('close'));
    return this;
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SSE writer', () => {
  // Frames of one turn are joined and sent at its end (issue #6); a producer that needs no I/O
  // between events (an in-process plugin) must still meet the socket's backpressure (review).
  it('stops taking frames from a producer with no I/O once a client reads nothing', async () => {
    let produced = 0;
    const frame = `data: ${'x'.repeat(1000)}\n\n`;
    const server = http.createServer(async (_req, res) => {
      const writer = new SseWriter(res, 'messages', 60_000);
      writer.start();
      for (let i = 0; i < 60_000 && !writer.closed; i++) {
        await writer.write(frame);
        produced += frame.length;
      }
      writer.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    socket.pause();
    // Unbounded, the producer queues all 60 MB within a few turns of the event loop (it needs no
    // I/O); a quarter of a second is long enough to see it, and for a bounded one to fill the kernel.
    await new Promise((r) => setTimeout(r, 250));
    const accepted = produced;
    socket.destroy();
    server.close();
    // The kernel's socket buffers take a few MB; the 60 MB offered must not all be queued.
    expect(accepted).to.be.below(10_000_000);
  });

  it('sends a turn’s frames, then what end() adds, in order', async () => {
    const results: unknown[] = [];
    const server = http.createServer((_req, res) => {
      const writer = new SseWriter(res, 'messages', 60_000);
      writer.start();
      // Nothing to wait for while the client keeps up: no promise per event (issue #17).
      results.push(writer.write('event: a\ndata: {"type":"a"}\n\n'), writer.write('event: b\ndata: {"type":"b"}\n\n'));
      writer.end('event: c\ndata: {"type":"c"}\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const res = await fetch(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`);
    const text = await res.text();
    server.close();
    expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
    expect(text).to.equal('event: a\ndata: {"type":"a"}\n\nevent: b\ndata: {"type":"b"}\n\nevent: c\ndata: {"type":"c"}\n\n');
    expect(results).to.deep.equal([undefined, undefined]);
  });

  describe('keepalives (issue #5), on hand-driven timers', () => {
    const KEEPALIVE_MS = 1_000;
    const KEEPALIVE = keepaliveFrame('messages');
    let timers: CountingTimers;
    let res: FakeResponse;
    let writer: SseWriter;
    beforeEach(() => {
      timers = new CountingTimers();
      res = new FakeResponse();
      writer = new SseWriter(res as unknown as ServerResponse, 'messages', KEEPALIVE_MS, undefined, undefined, timers);
      writer.start();
    });

    it('sends one after an interval of silence, counted from the last write', async () => {
      timers.advance(600);
      await writer.write('event: a\ndata: {}\n\n');
      await turn();
      timers.advance(KEEPALIVE_MS - 1);
      await turn();
      expect(res.written).to.deep.equal(['event: a\ndata: {}\n\n']);
      timers.advance(1);
      await turn();
      expect(res.written).to.deep.equal(['event: a\ndata: {}\n\n', KEEPALIVE]);
      timers.advance(KEEPALIVE_MS);
      await turn();
      expect(res.written).to.have.length(3);
    });

    // The review of issue #17's twenty-fourth session: past an interval of silence with the socket
    // full, the timer was re-armed for the rest of an interval already over, every millisecond,
    // for as long as the client read nothing.
    it('while the client reads nothing, sends none and looks again an interval later, not every millisecond', async () => {
      res.writableNeedDrain = true;
      timers.advance(10 * KEEPALIVE_MS);
      await turn();
      expect(res.written).to.deep.equal([]);
      expect(timers.sets).to.be.at.most(11);
      expect(timers.pending).to.equal(1);
      // Once it drains, the silence gets its keepalive within an interval.
      res.writableNeedDrain = false;
      timers.advance(KEEPALIVE_MS);
      await turn();
      expect(res.written).to.deep.equal([KEEPALIVE]);
    });

    it('stops when the stream ends or the client leaves', () => {
      // end() clears its own timer: the response's 'close' comes later.
      writer.end('event: message_stop\ndata: {}\n\n');
      expect(timers.pending).to.equal(0);
      expect(res.written).to.deep.equal(['event: message_stop\ndata: {}\n\n']);
      const other = new FakeResponse();
      new SseWriter(other as unknown as ServerResponse, 'messages', KEEPALIVE_MS, undefined, undefined, timers).start();
      expect(timers.pending).to.equal(1);
      other.destroyed = true;
      other.emit('close');
      expect(timers.pending).to.equal(0);
    });
  });
});

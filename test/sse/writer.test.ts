import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { SseWriter } from '../../src/sse/writer.ts';

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
});

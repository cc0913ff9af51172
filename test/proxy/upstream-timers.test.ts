import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { UpstreamTimeout, UpstreamTimers } from '../../src/proxy/upstream-timers.ts';
import type { Timeouts } from '../../src/config/types.ts';

/** Stand-ins for node:http's request, socket and response: just the events and destroy(). */
class FakeStream extends EventEmitter {
  destroyedWith: Error | undefined;
  connecting = true;
  socket: FakeStream | undefined;
  destroyed = false;
  destroy(err?: Error): void {
    this.destroyed = true;
    this.destroyedWith = err;
    this.emit('close');
  }
}

const TIMEOUTS: Timeouts = { connectMs: 60, firstByteMs: 150, idleMs: 80, totalMs: null };
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function start(timeouts = TIMEOUTS): { timers: UpstreamTimers; request: FakeStream; socket: FakeStream } {
  const timers = new UpstreamTimers(timeouts);
  const request = new FakeStream();
  const socket = new FakeStream();
  timers.watch(request as unknown as ClientRequest);
  request.emit('socket', socket);
  return { timers, request, socket };
}

describe('upstream timers', () => {
  it('a connection that is not up within connect_ms destroys the request with a connect timeout', async () => {
    const { timers, request } = start();
    await wait(100);
    expect(request.destroyedWith).to.be.instanceOf(UpstreamTimeout);
    expect(timers.fired?.kind).to.equal('connect');
  });

  it('a pooled connection skips the connect timer; no answer within first_byte_ms is a first-byte timeout', async () => {
    const timers = new UpstreamTimers(TIMEOUTS);
    const request = new FakeStream();
    request.socket = Object.assign(new FakeStream(), { connecting: false });
    timers.watch(request as unknown as ClientRequest);
    await wait(100);
    expect(timers.fired).to.equal(undefined);
    await wait(100);
    expect(timers.fired?.kind).to.equal('first_byte');
  });

  it('idle counts the gap between chunks, not the whole answer, and pauses while the client is slow', async () => {
    const { timers, socket } = start();
    socket.emit('connect');
    const response = new FakeStream();
    timers.responded(response as unknown as IncomingMessage);
    for (let i = 0; i < 5; i++) {
      await wait(40);
      timers.touch();
    }
    expect(timers.fired).to.equal(undefined); // 200 ms in all, never 80 ms silent
    timers.hold();
    await wait(150);
    expect(timers.fired).to.equal(undefined); // our backpressure, not the upstream's silence
    timers.resume();
    await wait(120);
    expect(timers.fired?.kind).to.equal('idle');
    expect(response.destroyedWith).to.equal(timers.fired);
  });

  it('a total timeout, when configured, ends even a talking stream', async () => {
    const { timers, socket } = start({ ...TIMEOUTS, totalMs: 150 });
    socket.emit('connect');
    const response = new FakeStream();
    timers.responded(response as unknown as IncomingMessage);
    for (let i = 0; i < 5 && !timers.fired; i++) {
      await wait(40);
      timers.touch();
    }
    expect(timers.fired?.kind).to.equal('total');
  });
});

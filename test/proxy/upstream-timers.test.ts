import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { UpstreamTimeout, UpstreamTimers } from '../../src/proxy/upstream-timers.ts';
import type { Timeouts } from '../../src/config/types.ts';
import { ManualTimers } from '../support/clock.ts';
import { SYSTEM_TIMERS, type Timers } from '../../src/util/clock.ts';
import { createTimerLists } from '../../src/util/timer-lists.ts';

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
// Time moves by hand (issue #12): these were real waits, and a busy machine made them flaky.
let clock = new ManualTimers();
const wait = (ms: number): void => clock.advance(ms);
/** What the timers under test run on: the clock itself, or the gateway's timer lists over it (issue #17). */
let timersOn: (clock: ManualTimers) => Timers = (c) => c;

/** Timers watching a request sent on a pooled keep-alive connection (no connect deadline). */
function pooled(): { timers: UpstreamTimers; request: FakeStream } {
  const timers = new UpstreamTimers(TIMEOUTS, timersOn(clock));
  const request = new FakeStream();
  request.socket = Object.assign(new FakeStream(), { connecting: false });
  timers.watch(request as unknown as ClientRequest);
  return { timers, request };
}

function start(timeouts = TIMEOUTS): { timers: UpstreamTimers; request: FakeStream; socket: FakeStream } {
  const timers = new UpstreamTimers(timeouts, timersOn(clock));
  const request = new FakeStream();
  const socket = new FakeStream();
  timers.watch(request as unknown as ClientRequest);
  request.emit('socket', socket);
  return { timers, request, socket };
}

for (const [title, on] of [['upstream timers', (c: ManualTimers): Timers => c], ['upstream timers, on the timer lists', (c: ManualTimers): Timers => createTimerLists(c)]] as const) {
  describe(title, () => {
    beforeEach(() => {
      clock = new ManualTimers();
      timersOn = on;
    });

    it('a connection that is not up within connect_ms destroys the request with a connect timeout', () => {
      const { timers, request } = start();
      wait(59);
      expect(timers.fired).to.equal(undefined);
      wait(1);
      expect(request.destroyedWith).to.be.instanceOf(UpstreamTimeout);
      expect(timers.fired?.kind).to.equal('connect');
    });

    it('a pooled connection skips the connect timer; no answer within first_byte_ms is a first-byte timeout', () => {
      const { timers } = pooled();
      wait(149);
      expect(timers.fired).to.equal(undefined);
      wait(1);
      expect(timers.fired?.kind).to.equal('first_byte');
    });

    it('idle counts the gap between chunks, not the whole answer, and pauses while the client is slow', () => {
      const { timers, socket } = start();
      socket.emit('connect');
      const response = new FakeStream();
      timers.responded(response as unknown as IncomingMessage);
      for (let i = 0; i < 5; i++) {
        wait(78);
        timers.touch();
      }
      expect(timers.fired).to.equal(undefined); // 390 ms in all, never 80 ms silent
      timers.hold();
      wait(1000);
      expect(timers.fired).to.equal(undefined); // our backpressure, not the upstream's silence
      timers.resume();
      wait(79);
      expect(timers.fired).to.equal(undefined);
      wait(1);
      expect(timers.fired?.kind).to.equal('idle');
      expect(response.destroyedWith).to.equal(timers.fired);
    });

    it('a total timeout, when configured, ends even a talking stream', () => {
      const { timers, socket } = start({ ...TIMEOUTS, totalMs: 150 });
      socket.emit('connect');
      const response = new FakeStream();
      timers.responded(response as unknown as IncomingMessage);
      for (let i = 0; i < 3; i++) {
        wait(49);
        timers.touch();
      }
      expect(timers.fired).to.equal(undefined); // 147 ms, talking all along
      wait(3);
      expect(timers.fired?.kind).to.equal('total');
    });

    // A timer that finds its deadline passed may be running after a stalled loop, before the poll
    // phase that reads what was already waiting (issue #17: an idle timeout cut a healthy stream
    // under a loaded CI run). `wait`'s second argument is what that poll phase brings.
    it('a deadline found passed is judged again after the next poll for I/O: a chunk or an answer waiting there keeps the request', () => {
      const { timers, socket } = start();
      socket.emit('connect');
      const response = new FakeStream();
      timers.responded(response as unknown as IncomingMessage);
      wait(80);
      expect(timers.fired?.kind, 'nothing came in the poll: idle').to.equal('idle');

      const second = start();
      second.socket.emit('connect');
      const answer = new FakeStream();
      second.timers.responded(answer as unknown as IncomingMessage);
      clock.advance(80, () => second.timers.touch());
      expect(second.timers.fired, 'the chunk that was waiting').to.equal(undefined);
      wait(79);
      expect(second.timers.fired).to.equal(undefined);
      wait(1);
      expect(second.timers.fired?.kind, 'then a real silence').to.equal('idle');

      const slow = pooled();
      const late = new FakeStream();
      clock.advance(150, () => slow.timers.responded(late as unknown as IncomingMessage));
      expect(slow.timers.fired, 'the answer that was waiting').to.equal(undefined);
      wait(80);
      expect(slow.timers.fired?.kind).to.equal('idle');
      expect(late.destroyedWith).to.equal(slow.timers.fired);
    });

    it('arms one timer for a request answered and read within idle_ms, and still times out a slow first byte exactly', () => {
      let armed = 0;
      const set = clock.set.bind(clock);
      clock.set = (fire, ms) => {
        armed++;
        return set(fire, ms);
      };
      const { timers } = pooled();
      wait(30);
      const response = new FakeStream();
      timers.responded(response as unknown as IncomingMessage);
      wait(20);
      timers.touch();
      response.emit('close');
      expect(armed, 'one timer for the first byte and the idle gaps').to.equal(1);
      expect(timers.fired).to.equal(undefined);

      // idle_ms (80) is shorter than first_byte_ms (150): the timer looks early, then arms again.
      armed = 0;
      const slow = pooled().timers;
      wait(149);
      expect(slow.fired).to.equal(undefined);
      wait(1);
      expect(slow.fired?.kind).to.equal('first_byte');
      expect(armed).to.equal(2);
    });
  });
}

describe('upstream timers after a stalled event loop, on real sockets (issue #17)', () => {
  it("a chunk already in the socket when the idle deadline is found passed keeps the stream: the poll phase reads it first", async () => {
    // Time moves by hand, the loop's phases are real: the deadline is found passed in a check-phase
    // callback while the upstream's next chunk waits in the socket, as after a stall. Before the
    // deadline was judged again after the poll, this cut the stream.
    const manual = new ManualTimers();
    const timers: Timers = { now: () => manual.now(), set: (fire, ms) => manual.set(fire, ms), clear: (handle) => manual.clear(handle), afterIo: SYSTEM_TIMERS.afterIo };
    let upstream: http.ServerResponse | undefined;
    const server = http.createServer((_req, res) => {
      upstream = res;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const watched = new UpstreamTimers(TIMEOUTS, timers);
      const request = http.request({ host: '127.0.0.1', port, agent: false });
      watched.watch(request);
      const body = await new Promise<string>((resolve, reject) => {
        request.on('error', reject);
        request.on('response', (res) => {
          watched.responded(res);
          let text = '';
          res.on('error', reject);
          res.on('data', (chunk: Buffer) => {
            watched.touch();
            text += String(chunk);
            // The second chunk is handed to the kernel, then the loop "stalls" past idle_ms.
            if (text === 'a') upstream?.write('b', () => setImmediate(() => manual.advance(TIMEOUTS.idleMs + 50)));
            if (text === 'ab') upstream?.end();
          });
          res.on('end', () => resolve(text));
        });
        request.end();
      });
      expect(watched.fired).to.equal(undefined);
      expect(body).to.equal('ab');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

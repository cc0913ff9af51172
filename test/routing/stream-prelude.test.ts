import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import { StreamPrelude } from '../../src/routing/stream-prelude.ts';
import { createTimerLists } from '../../src/util/timer-lists.ts';
import { ManualTimers } from '../support/clock.ts';

/** What the prelude writes to: the status and headers once, then keepalive frames. */
class FakeResponse {
  status: number | undefined;
  headers: Record<string, string> | undefined;
  readonly frames: string[] = [];
  destroyed = false;
  writableEnded = false;
  writeHead(status: number, headers: Record<string, string>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  write(frame: string): boolean {
    this.frames.push(frame);
    return true;
  }
}

const asResponse = (res: FakeResponse): ServerResponse => res as unknown as ServerResponse;

// The prelude's keepalives (issue #5) run on the process's timer lists (issue #17, twenty-first
// session); each case runs on the hand-driven clock itself and on the lists over it.
const CLOCKS = [
  ['the hand-driven timers', () => { const manual = new ManualTimers(); return { timers: manual, manual }; }],
  ['timer lists over them', () => { const manual = new ManualTimers(); return { timers: createTimerLists(manual), manual }; }],
] as const;

describe('StreamPrelude: keepalives before the first upstream byte', () => {
  for (const [name, make] of CLOCKS) {
    describe(`on ${name}`, () => {
      /** A prelude started on a fresh clock and response, counting its commits. */
      const started = (surface: 'messages' | 'chat', intervalMs: number) => {
        const { timers, manual } = make();
        const res = new FakeResponse();
        const counted = { commits: 0 };
        const prelude = new StreamPrelude(asResponse(res), surface, intervalMs, () => counted.commits++, timers);
        prelude.start();
        return { timers, manual, res, prelude, counted };
      };

      it('sends nothing for the first interval, so a quick failure keeps its HTTP status', () => {
        const { timers, manual, res, prelude, counted } = started('messages', 1_000);
        manual.advance(999);
        expect(res.status).to.equal(undefined);
        expect(res.frames).to.deep.equal([]);
        prelude.stop();
        // Cleared, not left to fire and find the prelude stopped: on the lists, their one system
        // timer stays armed until it looks again (timer-lists.ts), then goes.
        if (timers === manual) expect(manual.pending).to.equal(0);
        manual.advance(5_000);
        expect(manual.pending).to.equal(0);
        expect(res.frames).to.deep.equal([]);
        expect(counted.commits).to.equal(0);
        expect(prelude.committed).to.equal(false);
      });

      it('commits to 200 with SSE headers at the first interval, then a frame each interval in the surface format', () => {
        const { manual, res, prelude, counted } = started('chat', 1_000);
        manual.advance(1_000);
        expect(res.status).to.equal(200);
        expect(res.headers?.['content-type']).to.equal('text/event-stream; charset=utf-8');
        expect(res.frames).to.deep.equal([': keepalive\n\n']);
        manual.advance(2_000);
        expect(res.frames).to.have.length(3);
        expect(prelude.sent).to.equal(3);
        expect(counted.commits).to.equal(1);
        prelude.stop();
        manual.advance(10_000);
        expect(prelude.sent).to.equal(3);
      });

      it('sends Messages clients a ping event', () => {
        const { manual, res, prelude } = started('messages', 500);
        manual.advance(500);
        expect(res.frames).to.deep.equal(['event: ping\ndata: {"type":"ping"}\n\n']);
        prelude.stop();
      });

      it('stops on a response that ended or was destroyed, and never starts again once stopped', () => {
        for (const ending of ['destroyed', 'writableEnded'] as const) {
          const { manual, res } = started('chat', 100);
          manual.advance(100);
          res[ending] = true;
          manual.advance(1_000);
          expect(res.frames, ending).to.have.length(1);
        }
        const { timers, manual } = make();
        const stopped = new StreamPrelude(asResponse(new FakeResponse()), 'chat', 100, () => undefined, timers);
        stopped.stop();
        stopped.start();
        manual.advance(1_000);
        expect(stopped.sent).to.equal(0);
      });
    });
  }
});

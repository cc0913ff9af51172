import { expect } from 'chai';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { postJson } from '../../src/proxy/upstream-client.ts';
import { UpstreamTimers } from '../../src/proxy/upstream-timers.ts';
import { Cancellation } from '../../src/routing/cancellation.ts';
import type { Timeouts } from '../../src/config/types.ts';
import { ManualTimers } from '../support/clock.ts';

const TIMEOUTS: Timeouts = { connectMs: 5000, firstByteMs: 5000, idleMs: 5000, totalMs: null };
/** Timers on a clock that never moves: only the abort under test can end a request. */
const stillTimers = (): UpstreamTimers => new UpstreamTimers(TIMEOUTS, new ManualTimers());

/** A cancellation that counts the abort hooks it holds, to show postJson leaves none behind. */
class CountedCancellation extends Cancellation {
  hooks = 0;
  override onAbort(handler: (reason: Error) => void): () => void {
    this.hooks++;
    const off = super.onAbort(handler);
    return () => {
      this.hooks--;
      off();
    };
  }
}

describe('postJson (translated routes, issue #17: no AbortSignal per request)', () => {
  let server: http.Server;
  let url: URL;
  let agent: http.Agent;
  /** What the next request's handler does; each test sets it. */
  let handle: (req: http.IncomingMessage, res: http.ServerResponse) => void;

  before(async () => {
    server = http.createServer((req, res) => handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`);
  });
  beforeEach(() => (agent = new http.Agent({ keepAlive: true })));
  afterEach(() => agent.destroy());
  after(() => server.close());

  it('sends the body and reads the answer, and removes its abort hook once the exchange is over', async () => {
    const sockets: unknown[] = [];
    handle = (req, res) => {
      sockets.push(req.socket);
      let got = '';
      req.on('data', (chunk: Buffer) => (got += chunk.toString()));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' }).end(JSON.stringify({ echo: got, type: req.headers['content-type'] })));
    };
    const cancel = new CountedCancellation();
    const answer = await postJson(agent, url, { 'x-one': '1' }, Buffer.from('{"a":1}'), cancel, stillTimers());
    expect(answer.status).to.equal(200);
    expect(answer.header('X-Upstream')).to.equal('yes');
    expect(cancel.hooks, 'held while the body is unread').to.equal(1);
    expect(JSON.parse(await answer.text())).to.deep.equal({ echo: '{"a":1}', type: 'application/json' });
    if (!answer.body.closed) await once(answer.body, 'close');
    expect(cancel.hooks).to.equal(0);
    // An abort after the exchange touches nothing: the next request goes out on the same pooled socket.
    cancel.abort(new Error('late'));
    const again = await postJson(agent, url, {}, Buffer.from('{}'), new Cancellation(), stillTimers());
    expect(again.status).to.equal(200);
    await again.text();
    expect(sockets).to.have.length(2);
    expect(sockets[1]).to.equal(sockets[0]);
  });

  it('an abort before the answer rejects and closes the upstream request', async () => {
    const arrived = new Promise<http.IncomingMessage>((resolve) => (handle = (req) => resolve(req)));
    const cancel = new CountedCancellation();
    const sent = postJson(agent, url, {}, Buffer.from('{}'), cancel, stillTimers());
    const upstreamSide = await arrived;
    expect(cancel.hooks).to.equal(1);
    const closed = once(upstreamSide.socket, 'close');
    cancel.abort(new Error('client left'));
    const outcome = await sent.then(() => 'resolved', (err: unknown) => err);
    expect(outcome).to.be.instanceOf(Error);
    await closed;
    expect(cancel.hooks).to.equal(0);
  });

  it('an abort while the body is read ends the body with an error and closes the upstream request', async () => {
    let upstreamSide: http.IncomingMessage | undefined;
    handle = (req, res) => {
      upstreamSide = req;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
    };
    const cancel = new CountedCancellation();
    const answer = await postJson(agent, url, {}, Buffer.from('{}'), cancel, stillTimers());
    // The upstream never ends this answer: only the abort can end the read.
    expect(cancel.hooks).to.equal(1);
    const closed = once(upstreamSide!.socket, 'close');
    cancel.abort(new Error('client left'));
    expect(await answer.text().then(() => 'resolved', (err: unknown) => err)).to.be.instanceOf(Error);
    await closed;
    expect(cancel.hooks).to.equal(0);
  });

  it('a cancellation already aborted never sends the request', async () => {
    let requests = 0;
    handle = (_req, res) => {
      requests++;
      res.end();
    };
    const cancel = new CountedCancellation();
    cancel.abort(new Error('gone'));
    const outcome = await postJson(agent, url, {}, Buffer.from('{}'), cancel, stillTimers()).then(() => 'resolved', (err: unknown) => err);
    expect(outcome).to.be.instanceOf(Error);
    // A request that did reach the server would be answered before this one.
    const check = await postJson(agent, url, {}, Buffer.from('{}'), new Cancellation(), stillTimers());
    await check.text();
    expect(requests).to.equal(1);
  });
});

import Router from '@koa/router';
import { expect } from 'chai';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { EndpointRouters } from '../../src/http/endpoint-routers.ts';
import type { GatewayState } from '../../src/http/state.ts';

describe('the endpoint routers (issue #17)', () => {
  let server: Server;
  let url: string;
  /** Which router served each request, by the route template it matched. */
  const served: string[] = [];

  before(async () => {
    const app = new Koa<GatewayState>();
    const shared = new Router<GatewayState>();
    const endpoints = new EndpointRouters(shared);
    endpoints.post('/v1/messages', async (ctx) => {
      served.push(`${String(ctx['_matchedRoute'])} ${ctx.router === shared ? 'shared' : 'own'}`);
      ctx.body = { ok: true };
    });
    shared.get('/v1/models', async (ctx) => {
      ctx.body = { models: [] };
    });
    app.use(endpoints.middleware());
    app.use(shared.routes());
    app.use(shared.allowedMethods());
    server = app.listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => server.close());
  beforeEach(() => served.splice(0));

  it('serves an endpoint’s exact path through its own router', async () => {
    const res = await fetch(`${url}/v1/messages`, { method: 'POST' });
    expect(res.status).to.equal(200);
    expect(served).to.deep.equal(['/v1/messages own']);
  });

  it('leaves what @koa/router also matches (other case, trailing slash) to the shared router', async () => {
    for (const path of ['/V1/Messages', '/v1/messages/']) {
      const res = await fetch(`${url}${path}`, { method: 'POST' });
      expect(res.status, path).to.equal(200);
    }
    expect(served).to.deep.equal(['/v1/messages shared', '/v1/messages shared']);
  });

  it('answers a method the endpoint does not serve with 405 and Allow, and other paths as before', async () => {
    const wrong = await fetch(`${url}/v1/messages`);
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('POST');
    expect((await fetch(`${url}/v1/models`)).status).to.equal(200);
    expect((await fetch(`${url}/v1/nowhere`, { method: 'POST' })).status).to.equal(404);
    expect(served).to.deep.equal([]);
  });
});

import { expect } from 'chai';
import { callContextOf } from '../../src/dispatch/call-context.ts';
import { RequestState } from '../../src/http/request-state.ts';
import type { GatewayContext } from '../../src/http/state.ts';
import type { Logger } from '../../src/log.ts';
import { Cancellation } from '../../src/routing/cancellation.ts';

describe('the call context a plugin is given', () => {
  it('reads the client’s headers as they came, even after a native attempt replaced Node’s own, and never a credential', () => {
    const state = new RequestState('req_1', 0, 0, 'messages', { 'anthropic-beta': 'a,b', 'x-api-key': 'sk-jct-secret', 'x-multi': ['1', '2'], referer: 'https://example.test/' });
    state.route = { endpoint: 'messages', model: { id: 'm', maxOutputTokens: null }, upstreamModel: 'u', provider: { config: { id: 'p' } } } as unknown as NonNullable<RequestState['route']>;
    // What passthrough.ts leaves on the request after a failed native attempt: the headers it forwarded.
    const ctx = { state, req: { headers: { accept: 'application/json' } }, get: () => 'stale' } as unknown as GatewayContext;
    const call = callContextOf(ctx, {} as Logger, new Cancellation());
    expect(call.header('Anthropic-Beta')).to.equal('a,b');
    expect(call.header('x-multi')).to.equal('1, 2');
    expect(call.header('x-api-key')).to.equal(undefined);
    expect(call.header('accept')).to.equal(undefined);
    expect(call.header('Referrer')).to.equal('https://example.test/'); // as Koa's ctx.get reads it
  });
});

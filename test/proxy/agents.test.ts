import { expect } from 'chai';
import { UpstreamAgents } from '../../src/proxy/agents.ts';

/**
 * The pools are made with keepAlive alone (issue #17: each request copies the agent's options);
 * what they rely on from Node's defaults is held here, on every Node the gateway runs on.
 */
describe('UpstreamAgents', () => {
  it("keeps connections alive, without a cap, reusing the last freed first: Node's defaults", () => {
    const agents = new UpstreamAgents();
    try {
      for (const address of ['http://127.0.0.1:1/v1', 'https://example.com/v1']) {
        const agent = agents.for(new URL(address), 'p');
        expect((agent as unknown as { keepAlive: boolean }).keepAlive, address).to.equal(true);
        expect(agent.maxSockets, address).to.equal(Infinity);
        expect(agent.maxFreeSockets, address).to.equal(256);
        expect((agent as unknown as { scheduling: string }).scheduling, address).to.equal('lifo');
        expect(agents.for(new URL(address), 'p'), address).to.equal(agent);
      }
    } finally {
      agents.close();
    }
  });

  it('gives a retired provider fresh pools, and keeps no free connection in its old ones', () => {
    const agents = new UpstreamAgents();
    try {
      const url = new URL('http://127.0.0.1:1/v1');
      const old = agents.for(url, 'p');
      agents.retire(['p']);
      expect(old.maxFreeSockets).to.equal(0);
      const fresh = agents.for(url, 'p');
      expect(fresh).to.not.equal(old);
      expect(fresh.maxFreeSockets).to.equal(256);
    } finally {
      agents.close();
    }
  });
});

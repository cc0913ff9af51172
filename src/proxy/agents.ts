import http from 'node:http';
import https from 'node:https';
import { LeanHttpAgent, LeanHttpsAgent } from './lean-agents.ts';

interface Pools {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

/**
 * The keep-alive connection pools every upstream call shares, native and translated, one pair per
 * provider. Node's default for http-proxy-3 is a new connection per request, 2.3x slower here
 * (engineering-notes.md); undici's fetch cost a translated stream more than all its conversion.
 * A provider changed by a reload gets fresh pools, and its old ones close once idle (issue #16).
 */
export class UpstreamAgents {
  readonly #pools = new Map<string, Pools>();
  /** Retired pools, whose busy connections shutdown must still close. */
  readonly #retired = new Set<Pools>();

  for(url: URL, provider: string): http.Agent {
    let pools = this.#pools.get(provider);
    if (!pools) {
      // Only keepAlive is given: Node's defaults are what the pools want (maxSockets Infinity,
      // maxFreeSockets 256, scheduling 'lifo'; agents.test.ts holds them to it). Every request
      // copies the agent's options, one by one into a dictionary, in Agent#addRequest (issue #17,
      // twenty-ninth session; lean-agents.ts).
      const options = { keepAlive: true } as const;
      pools = { http: new LeanHttpAgent(options), https: new LeanHttpsAgent(options) };
      this.#pools.set(provider, pools);
    }
    return url.protocol === 'https:' ? pools.https : pools.http;
  }

  /**
   * The providers' next requests open new connections. Requests on the old ones finish there; each
   * old connection closes when its request ends (an agent keeps no free socket past
   * `maxFreeSockets`), and the idle ones close now.
   */
  retire(providers: Iterable<string>): void {
    for (const provider of providers) {
      const pools = this.#pools.get(provider);
      if (!pools) continue;
      this.#pools.delete(provider);
      this.#retired.add(pools);
      for (const agent of [pools.http, pools.https]) {
        agent.maxFreeSockets = 0;
        for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
      }
    }
  }

  close(): void {
    for (const pools of [...this.#pools.values(), ...this.#retired]) {
      pools.http.destroy();
      pools.https.destroy();
    }
    this.#pools.clear();
    this.#retired.clear();
  }
}

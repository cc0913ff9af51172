import http from 'node:http';
import https from 'node:https';

/**
 * Keep-alive agents that hand Node's Agent#addRequest only the request options that are set.
 * addRequest copies a request's options and the agent's own into a new dictionary, key by key,
 * on every request (`{ __proto__: null, ...options, ...this.options }`, Node 20 to 24), from
 * ClientRequest's own dictionary copy of them. http-proxy-3 sets every native request's ten TLS
 * and socket options (`setupOutgoing`: pfx, key, ca, ciphers, socketPath…), undefined unless
 * configured. Copied from a dictionary, those undefined keys were most of the copy's cost:
 * 50k instructions of a small native Chat request's 688k (callgrind, issue #17, twenty-ninth
 * session). A key left undefined reads the same as one absent to everything after (the socket's
 * name, net.connect, tls.connect, which then keeps its own defaults: Node's `{ ...defaults,
 * ...options }` would have put an undefined over them).
 */
type AddRequest = (this: http.Agent, req: http.ClientRequest, options: unknown, port?: unknown, localAddress?: unknown) => void;

const addRequest = (http.Agent.prototype as unknown as { addRequest: AddRequest }).addRequest;

/**
 * The options a request set, as a plain object; anything else (the legacy host string) as it is.
 * ClientRequest passes a null-prototype object, so `for…in` sees exactly the own keys a spread
 * would copy.
 */
function setOnly(options: unknown): unknown {
  if (typeof options !== 'object' || options === null) return options;
  const set: Record<string, unknown> = {};
  const source = options as Record<string, unknown>;
  for (const key in source) {
    const value = source[key];
    if (value !== undefined) set[key] = value;
  }
  return set;
}

export class LeanHttpAgent extends http.Agent {
  addRequest(req: http.ClientRequest, options: unknown, port?: unknown, localAddress?: unknown): void {
    addRequest.call(this, req, setOnly(options), port, localAddress);
  }
}

export class LeanHttpsAgent extends https.Agent {
  addRequest(req: http.ClientRequest, options: unknown, port?: unknown, localAddress?: unknown): void {
    addRequest.call(this, req, setOnly(options), port, localAddress);
  }
}

import { expect } from 'chai';
import fc from 'fast-check';
import type { IncomingMessage } from 'node:http';
import common from 'http-proxy-3/dist/lib/http-proxy/common.js';
import { appendsQuery, pathWithQuery, upstreamPath } from '../../src/proxy/passthrough.ts';

/**
 * The path http-proxy-3 sends a native request to (issue #17, thirtieth session). It used to get
 * the target with `ignorePath`, and parsed both the target's path and the client's with `new URL`;
 * it now gets the target's path as the request's url with `prependPath: false` and `toProxy`, and
 * parses neither. Both are run through http-proxy-3's own setupOutgoing here.
 */
type SetupOutgoing = (outgoing: object, options: object, req: object) => { path: string; host?: string; port?: number };
const setupOutgoing = (common as unknown as { setupOutgoing: SetupOutgoing }).setupOutgoing;

const request = (url: string): IncomingMessage => ({ url, method: 'POST', headers: {}, httpVersionMajor: 1 }) as unknown as IncomingMessage;
const before = (target: URL, clientUrl: string): string =>
  setupOutgoing({}, { target, ignorePath: true, prependPath: true, changeOrigin: true }, request(clientUrl)).path;
/** The client's own url is not read: for the length of web(), the request carries the target's path. */
const after = (target: URL): string => setupOutgoing({}, { target, prependPath: false, toProxy: true, changeOrigin: true }, request(upstreamPath(target))).path;

describe('upstreamPath: the native request path without URL parses (issue #17)', () => {
  it('sends the path http-proxy-3 sent before, for targets of every shape', () => {
    const targets = [
      'http://127.0.0.1:8080/v1/chat/completions',
      'https://api.anthropic.com/v1/messages?beta=true',
      'https://x.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
      'http://h/',
      'http://h',
      'http://h//double//slashes/',
      'http://h/a/./b/../c?x=1&y=2',
      'http://h/caf%C3%A9/%2e%2e/x?q=a%20b&r=%3F',
      'http://h/path with spaces?q=é',
      'http://[::1]:9000/v1/messages/count_tokens?beta=true',
      'http://h/v1/x?',
      'http://h/v1/x?a=1?b=2',
    ];
    for (const text of targets) {
      const target = new URL(text);
      for (const clientUrl of ['/v1/chat/completions', '/v1/messages?beta=true', '//evil/x', '/?a=1']) {
        expect(after(target), `${text} ${clientUrl}`).to.equal(before(target, clientUrl));
      }
    }
  });

  it('agrees with the old path on generated URLs', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true }), fc.webPath(), (text, clientPath) => {
        const target = new URL(text);
        expect(after(target)).to.equal(before(target, clientPath || '/'));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('pathWithQuery: the client\'s query on the upstream path (issue #17)', () => {
  const targetOf = (url: string) => ({ url, path: upstreamPath(new URL(url)), appendsQuery: appendsQuery(url, new URL(url)) });
  /** What a request with a query was sent to before: the target's text and the query, parsed. */
  const parsed = (url: string, query: string): string => upstreamPath(new URL(`${url}?${query}`));
  const targets = [
    'http://127.0.0.1:8080/v1/messages',
    'https://x.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21',
    'http://h/v1/chat/completions?',
    'http://h/v1/chat/completions#frag',
    'http://h/caf%C3%A9/v1/messages?a=b c',
  ];

  it('is the parsed path for the queries clients send, and for awkward ones', () => {
    const queries = ['beta=true', 'a=1&b=2', 'q=%zz%2', "q='x'", 'q=a b', 'q="x"', 'q=<x>', 'q=#x', 'q=é', 'q=\u0001', 'q={|}^`\\', 'a=1?b=2', '=', '&&', '%', '~!$()*+,;:@/?'];
    for (const url of targets) {
      for (const query of queries) expect(pathWithQuery(targetOf(url), query), `${url} ${query}`).to.equal(parsed(url, query));
    }
  });

  it('is the parsed path for generated queries', () => {
    const characters = fc.oneof(fc.constantFrom(...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ =&?%'.split('')), fc.string({ unit: 'binary', maxLength: 1 }));
    fc.assert(
      fc.property(fc.constantFrom(...targets), fc.array(characters, { maxLength: 40 }), (url, parts) => {
        const query = parts.join('');
        expect(pathWithQuery(targetOf(url), query)).to.equal(parsed(url, query));
      }),
      { numRuns: 5000 },
    );
  });
});

import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { headerText } from './headers.ts';
import { requestOptions } from './request-options.ts';
import type { UpstreamTimers } from './upstream-timers.ts';
import type { Cancellable } from '../util/clock.ts';

/** An upstream's answer: status, headers and the body as a stream of bytes. */
export interface UpstreamAnswer {
  readonly status: number;
  header(name: string): string | undefined;
  readonly body: IncomingMessage;
  text(): Promise<string>;
}

/**
 * POSTs JSON to an upstream over the shared keep-alive pools (node:http, as the native path
 * does). `cancel` aborts the request, before or during the answer, as node:http's `signal` option
 * would, without an AbortSignal per request (on Node 20 each has a map of its own; issue #17). The
 * timers bound each phase (issue #5) and whoever reads `body` calls `timers.touch()` per chunk.
 */
export function postJson(
  agent: http.Agent,
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: Buffer,
  cancel: Cancellable,
  timers: UpstreamTimers,
): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(
      requestOptions(url, 'POST', agent, { ...headers, 'content-type': 'application/json', 'content-length': body.length, 'accept-encoding': 'identity' }),
    );
    // node:http's `signal` destroys the request on abort; so does this, and the hook goes with it.
    request.once('close', cancel.onAbort(() => request.destroy()));
    timers.watch(request);
    request.once('error', reject);
    request.once('response', (response) => {
      timers.responded(response);
      response.on('error', () => undefined); // surfaced to whoever reads the body
      resolve({
        status: response.statusCode ?? 502,
        header: (name) => headerText(response.headers[name.toLowerCase()]),
        body: response,
        text: async () => {
          const chunks: Buffer[] = [];
          for await (const chunk of response) {
            timers.touch();
            chunks.push(chunk as Buffer);
          }
          return Buffer.concat(chunks).toString('utf8');
        },
      });
    });
    request.end(body);
  });
}

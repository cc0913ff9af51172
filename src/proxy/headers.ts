import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { WireFormat } from '../formats/wire.ts';

/**
 * Header allowlists for native passthrough, in both directions. http-proxy-3 on its own forwards
 * every client header upstream (the gateway key, cookies, spoofed X-Forwarded-For) and every
 * upstream header back (organisation ids, set-cookie): engineering-notes.md, reliability.md §4.2.
 */

/** Client headers a native upstream receives, per format. Everything else is dropped. */
const FORWARD_EXACT: Readonly<Record<WireFormat, ReadonlySet<string>>> = {
  messages: new Set([
    'accept',
    'user-agent',
    'idempotency-key',
    'anthropic-version',
    'anthropic-beta',
    'anthropic-dangerous-direct-browser-access',
    'x-app', // Claude Code identifies itself with these (real-clients.md)
  ]),
  chat: new Set(['accept', 'user-agent', 'idempotency-key', 'openai-beta']),
  // Codex CLI's own (responses-api.md §9): its session and turn ids let an upstream keep its cache.
  responses: new Set(['accept', 'user-agent', 'idempotency-key', 'openai-beta', 'originator', 'session_id', 'conversation_id', 'x-openai-subagent', 'x-client-request-id']),
};
const FORWARD_PREFIXES: Readonly<Record<WireFormat, readonly string[]>> = {
  messages: ['x-stainless-', 'x-claude-code-'],
  chat: ['x-stainless-'],
  responses: ['x-stainless-', 'x-codex-'],
};

/**
 * Never forwarded, even when a plugin lists them: credentials, cookies, hop-by-hop headers
 * (RFC 9110 §7.6.1), client-supplied forwarding headers, and what the core sets itself.
 */
const NEVER_FORWARD: ReadonlySet<string> = new Set([
  'authorization',
  'x-api-key',
  'cookie',
  'proxy-authorization',
  'host',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-real-ip',
  'content-length',
  'content-type',
  'content-encoding',
  'accept-encoding',
]);

/** Upstream response headers the client receives. Rate limits and account ids describe the provider account. */
const RETURN_EXACT: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'cache-control',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
]);
/** The upstream's own request id, kept for support tickets under a name that cannot clash with ours. */
const UPSTREAM_ID_HEADERS: readonly string[] = ['request-id', 'x-request-id'];

/** A compiled forwarding rule: one per provider and format, built at start-up. */
/** The body an upstream request carries: its length (null: unknown, sent chunked) and its type. */
export interface BodyShape {
  readonly length: number | null;
  readonly contentType: string;
}
export const JSON_BODY = 'application/json';

export type RequestHeaderFilter = (incoming: IncomingHttpHeaders, body: BodyShape) => IncomingHttpHeaders;

export function createRequestHeaderFilter(
  format: WireFormat,
  extraForward: readonly string[],
  providerHeaders: Readonly<Record<string, string>>,
): RequestHeaderFilter {
  const exact = new Set([...FORWARD_EXACT[format], ...extraForward.filter((h) => !NEVER_FORWARD.has(h))]);
  const prefixes = FORWARD_PREFIXES[format];
  return (incoming, body) => {
    const out: IncomingHttpHeaders = {};
    for (const name in incoming) {
      if (exact.has(name) || prefixes.some((p) => name.startsWith(p))) out[name] = incoming[name];
    }
    Object.assign(out, providerHeaders);
    // The body is the validated JSON we read in full, or a multipart form with its own boundary
    // (issue #13) whose length is known only when the client declared it; identity encoding lets
    // the usage tap read the response (reliability.md §4.2).
    out['content-type'] = body.contentType;
    if (body.length !== null) out['content-length'] = String(body.length);
    out['accept-encoding'] = 'identity';
    return out;
  };
}

/** A header's value as one string: repeated headers joined as HTTP allows (RFC 9110 §5.3). */
export function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Copies the allowed upstream response headers onto the client response headers object. */
export function filterResponseHeaders(upstream: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (RETURN_EXACT.has(name)) out[name] = upstream[name];
  }
  for (const name of UPSTREAM_ID_HEADERS) {
    const value = upstream[name];
    if (value !== undefined) {
      out['upstream-request-id'] = value;
      break;
    }
  }
  return out;
}

import type { OutgoingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors.ts';
import type { Timeouts } from '../config/types.ts';
import type { Cancellation } from './cancellation.ts';

/**
 * One try of one route (issue #5). A serving path either starts the client's response (then it
 * owns it to the end, failures included) or gives back a failure having sent the client nothing,
 * which the failover loop may retry elsewhere. Nothing after the first upstream byte is retried
 * (reliability.md §0.8: nginx, Envoy and Bedrock all hold this line).
 */
export interface Attempt {
  readonly timeouts: Timeouts;
  /**
   * Called by the serving path at the moment it starts writing the upstream's answer: keepalives
   * stop (none may interleave with it), and the route's breaker hears of its success now, not
   * when a minutes-long stream ends (a half-open probe would hold the route shut until then).
   */
  commit(): void;
  /** Keepalive interval for a stream the gateway writes itself, when it falls silent. */
  readonly keepaliveMs: number;
  /** Aborted when the client leaves or the gateway's shutdown grace ends; the reason is a GatewayError. */
  readonly cancel: Cancellation;
}

/**
 * - `same`: a transient failure (a reset connection, a 5xx): retry this route after a backoff.
 * - `rate`: 429 or 529: move on when another route is left, else retry after `retry-after`.
 * - `next`: this route is silent or unreachable (a timeout): move on at once.
 * - `never`: the request itself is at fault (400, 401, 403, 404, 413…) or the client left.
 */
export type RetryClass = 'same' | 'rate' | 'next' | 'never';

export interface AttemptFailure {
  /** What the client gets if this is the last failure. */
  readonly error: GatewayError;
  readonly retry: RetryClass;
  /** The upstream's `retry-after`, in milliseconds. */
  readonly retryAfterMs: number | null;
  /** Whether the route's circuit breaker counts it (a request error says nothing of the route). */
  readonly routeFault: boolean;
  /** A native upstream's own error answer, sent as is when it is the last and nothing was sent. */
  readonly raw?: { readonly status: number; readonly headers: OutgoingHttpHeaders; readonly body: Buffer };
}

export type AttemptResult = { readonly ok: true } | { readonly ok: false; readonly failure: AttemptFailure };

export const SERVED: AttemptResult = { ok: true };

export function failed(failure: AttemptFailure): AttemptResult {
  return { ok: false, failure };
}

/** How a failure with this upstream HTTP status may be retried. */
export function retryClassOf(status: number): RetryClass {
  if (status === 429 || status === 529) return 'rate';
  if (status === 408 || status >= 500) return 'same';
  return 'never';
}

/** `retry-after-ms`, else `retry-after` as seconds or an HTTP date (RFC 9110 §10.2.3), in ms. */
export function retryAfterMs(header: (name: string) => string | undefined, now = Date.now()): number | null {
  const ms = Number(header('retry-after-ms'));
  if (header('retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const value = header('retry-after');
  if (value === undefined || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** A failure in answer to an upstream HTTP error status. */
export function statusFailure(status: number, error: GatewayError, retryAfter: number | null, raw?: AttemptFailure['raw']): AttemptFailure {
  const retry = retryClassOf(status);
  return { error, retry, retryAfterMs: retryAfter, routeFault: retry !== 'never', ...(raw && { raw }) };
}

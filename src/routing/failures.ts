import { ERR, type GatewayError } from '../errors.ts';
import type { UpstreamTimeout } from '../proxy/upstream-timers.ts';
import { retryAfterMs, retryClassOf, type AttemptFailure } from './attempt.ts';

/**
 * A request that got no answer at all. A refused or reset connection is worth one more try on
 * the same route; a route that stays silent is not (failoverbench S06: best in class moves on
 * after the first timeout), and neither is one that cannot connect in time.
 */
export function connectionFailure(provider: string, timeout: UpstreamTimeout | undefined): AttemptFailure {
  if (timeout) {
    return { error: ERR.upstreamTimeout(provider, timeout.kind, timeout.ms), retry: 'next', retryAfterMs: null, routeFault: true };
  }
  return { error: ERR.upstreamUnreachable(provider), retry: 'same', retryAfterMs: null, routeFault: true };
}

/** A failure met before the first byte reached the client, from the error it raised. */
export function failureOf(error: GatewayError): AttemptFailure {
  switch (error.code) {
    case 'GW_ERR_CLIENT_CLOSED':
    case 'GW_ERR_SHUTTING_DOWN':
      return { error, retry: 'never', retryAfterMs: null, routeFault: false };
    case 'GW_ERR_UPSTREAM_TIMEOUT':
    case 'GW_ERR_UPSTREAM_STALLED':
    case 'GW_ERR_UPSTREAM_INVALID':
    // Credentials a plugin could not get are this route's fault; another cloud's may work (issue #15).
    case 'GW_ERR_UPSTREAM_CREDENTIALS':
      return { error, retry: 'next', retryAfterMs: null, routeFault: true };
    case 'GW_ERR_UPSTREAM_AUTH':
    case 'GW_ERR_UPSTREAM_BILLING':
      return { error, retry: 'never', retryAfterMs: null, routeFault: false };
    default: {
      const retry = retryClassOf(error.status);
      return { error, retry, retryAfterMs: retryAfterMs((name) => error.headers[name]), routeFault: retry !== 'never' };
    }
  }
}

import type { Surface } from '../errors.ts';
import type { Admission, BucketState } from './limiter.ts';

/**
 * The rate-limit headers each family of clients knows (issue #5), for the key's own limits:
 * - Messages, as Anthropic sends them: `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`,
 *   the reset an RFC 3339 time when the bucket is full again (docs: api/rate-limits#response-headers).
 * - Chat, as OpenAI sends them: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, the reset a
 *   duration such as `1s`, `6m0s` or `120ms` (docs: guides/rate-limits#rate-limits-in-headers).
 * Only the buckets that apply are described.
 */
export function rateLimitHeaders(surface: Surface, admission: Admission, wallNow: number): Record<string, string> {
  const headers: Record<string, string> = {};
  if (admission.requests !== null) describe(headers, surface, 'requests', admission.requests, wallNow);
  if (admission.tokens !== null) describe(headers, surface, 'tokens', admission.tokens, wallNow);
  return headers;
}

function describe(headers: Record<string, string>, surface: Surface, unit: 'requests' | 'tokens', bucket: BucketState, wallNow: number): void {
  if (surface === 'messages') {
    headers[`anthropic-ratelimit-${unit}-limit`] = String(bucket.limit);
    headers[`anthropic-ratelimit-${unit}-remaining`] = String(bucket.remaining);
    headers[`anthropic-ratelimit-${unit}-reset`] = rfc3339(wallNow + bucket.resetMs);
  } else {
    headers[`x-ratelimit-limit-${unit}`] = String(bucket.limit);
    headers[`x-ratelimit-remaining-${unit}`] = String(bucket.remaining);
    headers[`x-ratelimit-reset-${unit}`] = duration(bucket.resetMs);
  }
}

/** Rounded up to the second, as Anthropic writes it: `2026-03-01T12:00:05Z`. */
function rfc3339(ms: number): string {
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A Go-style duration, OpenAI's format: `120ms`, `1s`, `1.5s`, `6m0s`, `1h2m3s`. */
export function duration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total > 0 && total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${Number(((total % 60_000) / 1000).toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}

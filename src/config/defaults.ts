/**
 * Resilience defaults (issue #5), in one place so the docs can quote them.
 *
 * Reasoning models think silently for minutes, and a whole (non-streamed) answer arrives only when
 * it is done: Anthropic's SDKs allow non-streaming requests up to about 10 minutes. So the first
 * byte may take 10 minutes, and a stream may be silent for 5 (Envoy's stream_idle_timeout
 * default; Anthropic pings every few seconds, so a healthy Claude stream never comes near it).
 * There is no total timeout unless one is configured (reliability.md §2.4).
 */
export const DEFAULT_TIMEOUTS = {
  connectMs: 10_000,
  firstByteMs: 600_000,
  idleMs: 300_000,
  totalMs: null,
} as const;

export const DEFAULT_ROUTING = {
  /** Extra attempts on the same route after a retryable failure, before moving on. */
  retries: 1,
  /** First backoff; doubled per retry, jittered ±20%, capped at 5 s (Bifrost's and Envoy's shape). */
  backoffMs: 250,
  /** A longer retry-after is not waited out: the next route is tried, or the client gets it. */
  maxRetryAfterMs: 10_000,
  breakerFailures: 5,
  breakerCooldownMs: 30_000,
} as const;

export const DEFAULT_SERVER = {
  /** How long SIGTERM waits for in-flight requests and streams before ending them. */
  shutdownGraceMs: 30_000,
  /** Slowloris defence: the whole header block must arrive within this (Node's default is 60 s). */
  headersTimeoutMs: 20_000,
  /** The whole request body must arrive within this (Node's default is 300 s). */
  requestTimeoutMs: 120_000,
  /** SSE keepalive interval while a stream waits for its first upstream byte, or is silent. */
  keepaliveMs: 15_000,
} as const;

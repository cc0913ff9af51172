import { COUNTING } from '../../formats/wire.ts';
import { ERR } from '../../errors.ts';
import { rateLimitHeaders } from '../../limits/headers.ts';
import type { RateLimiter, RateLimits } from '../../limits/limiter.ts';
import { inputTokensOf } from '../input-tokens.ts';
import { headOf, type GatewayContext, type GatewayMiddleware, type GatewayState } from '../state.ts';

/**
 * Per-key rate limits (issue #5), between the model resolver and the hold: a request over a limit
 * is answered 429 before it costs anything or reaches an upstream. An admitted request keeps its
 * concurrency slot and its token estimate until the chain below resolves, which is when the
 * response, stream included, is done; then its real token count settles the tpm bucket.
 *
 * count_tokens is exempt: it is free, answered locally or by a cheap upstream call, and Claude Code
 * sends one before many turns, so counting it would halve a key's real allowance. Anthropic keeps it
 * apart from its Messages limits too.
 *
 * `defaults` (auth.default_limits) fill in, field by field, whatever a key does not set itself.
 */
export function createRateLimit(limiter: RateLimiter, defaults: RateLimits): GatewayMiddleware {
  // Keyed by the key's own limits object, which the key cache replaces whenever the key changes.
  const merged = new WeakMap<RateLimits, RateLimits | null>();
  const effective = (own: RateLimits): RateLimits | null => {
    let limits = merged.get(own);
    if (limits === undefined) {
      const rpm = own.rpm ?? defaults.rpm;
      const tpm = own.tpm ?? defaults.tpm;
      const concurrency = own.concurrency ?? defaults.concurrency;
      limits = rpm === null && tpm === null && concurrency === null ? null : { rpm, tpm, concurrency };
      merged.set(own, limits);
    }
    return limits;
  };

  // Not an async function: a key without limits (the common case) goes straight on, without a
  // promise of its own in the chain (issue #17).
  return (ctx, next) => {
    const { route, key } = ctx.state;
    if (!route || !headOf(ctx.state) || !key) throw ERR.internal();
    if (COUNTING.has(route.endpoint)) return next();
    const limits = effective(key.limits);
    if (limits === null) return next();
    return limited(ctx, next, limits, key.id);
  };

  async function limited(ctx: GatewayContext, next: () => Promise<void>, limits: RateLimits, keyId: number): Promise<void> {
    let inputTokens = 0;
    if (limits.tpm !== null) {
      // The same estimate the hold uses; kept in the state so reserve does not count twice.
      inputTokens = await inputTokensOf(ctx.state);
    }
    const admission = await limiter.admit(keyId, limits, inputTokens, ctx.state.requestId);
    const headers = rateLimitHeaders(ctx.state.surface, admission, Date.now());
    if (admission.blocked !== null) {
      throw ERR.rateLimited(admission.blocked, limits[admission.blocked] ?? 0, admission.retryAfterS, headers);
    }
    // Set before the response starts: the native path's writeHead and the SSE writer's merge
    // headers already set on the response, so successful answers carry them too.
    ctx.set(headers);
    try {
      await next();
    } finally {
      await limiter.release(keyId, limits, inputTokens, usedTokens(ctx.state, inputTokens), ctx.state.requestId);
    }
  }
}

/**
 * Tokens the request used, as tpm counts them: input, output, cache reads and writes, and audio and
 * image tokens (counted apart from input and output since issue #13). Without
 * reported usage, a request that reached the upstream keeps its estimate (plus any output seen, as
 * the ledger estimates a cut stream); one that never left gives its estimate back.
 */
function usedTokens(state: GatewayState, estimate: number): number {
  const usage = state.outcome.usage;
  if (usage !== undefined) {
    const media = (usage.inputAudio ?? 0) + (usage.outputAudio ?? 0) + (usage.inputImage ?? 0) + (usage.outputImage ?? 0);
    return usage.input + usage.output + usage.cacheRead + usage.cacheWrite + media;
  }
  return state.outcome.dispatched === true ? estimate + (state.outcome.outputEstimate ?? 0) : 0;
}

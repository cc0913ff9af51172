import type { GatewayContext } from '../http/state.ts';
import { inputTokensOf } from '../http/input-tokens.ts';
import type { Endpoint } from '../formats/wire.ts';

/**
 * A count answered with the local estimate (docs/money.md, "Input-token estimate"): where no route can count,
 * and where the upstream's count failed (issue #15). In the counting endpoint's shape, marked as
 * an estimate.
 */
export async function answerLocalCount(ctx: GatewayContext): Promise<void> {
  ctx.state.outcome.kind = 'local';
  ctx.set('x-junction-estimate', 'true');
  ctx.body = countBody(ctx.state.route?.endpoint, await inputTokensOf(ctx.state));
}

/** A count in its endpoint's shape: Anthropic's for count_tokens, Responses' for input_tokens (responses-api.md §1). */
export function countBody(endpoint: Endpoint | undefined, inputTokens: number): Record<string, unknown> {
  return endpoint === 'responses_input_tokens' ? { object: 'response.input_tokens', input_tokens: inputTokens } : { input_tokens: inputTokens };
}

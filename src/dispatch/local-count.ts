import type { GatewayContext } from '../http/state.ts';
import { inputTokensOf } from '../http/input-tokens.ts';

/**
 * A count answered with the local estimate (README, "count_tokens"): where no route can count,
 * and where the upstream's count failed (issue #15). In the counting endpoint's shape, marked as
 * an estimate.
 */
export async function answerLocalCount(ctx: GatewayContext): Promise<void> {
  ctx.state.outcome.kind = 'local';
  ctx.set('x-junction-estimate', 'true');
  const inputTokens = await inputTokensOf(ctx.state);
  ctx.body = ctx.state.route?.endpoint === 'responses_input_tokens' ? { object: 'response.input_tokens', input_tokens: inputTokens } : { input_tokens: inputTokens };
}

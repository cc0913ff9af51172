import { costOf } from '../billing/pricing.ts';
import { picoToUsdText } from '../billing/money.ts';
import type { TokenUsage } from '../formats/wire.ts';
import type { GatewayContext } from '../http/state.ts';
import { emptyUsage } from './normalize.ts';

/**
 * Speech is charged by the characters of its `input` (issue #13), known before a byte is spoken,
 * so the usage and its cost are the request's. Binary audio has no room for a cost field: the
 * cost goes in `x-junction-cost-usd` (the same on native and in-process routes).
 */
export function speechUsage(ctx: GatewayContext): TokenUsage {
  return { ...emptyUsage(), characters: ctx.state.reservation?.characters ?? 0 };
}

export function speechCostHeader(ctx: GatewayContext): string {
  const prices = ctx.state.route?.prices;
  return prices ? picoToUsdText(costOf(speechUsage(ctx), prices)) : '0';
}

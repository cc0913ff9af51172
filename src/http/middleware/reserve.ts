import { endSpan } from '../../telemetry/tracing.ts';
import { COUNTING } from '../../formats/wire.ts';
import { imagePriceOf, maxCostOf } from '../../billing/pricing.ts';
import { picoToUsdText, type Pico } from '../../billing/money.ts';
import { ERR } from '../../errors.ts';
import type { Holds } from '../../billing/holds.ts';
import { inputTokensOf } from '../input-tokens.ts';
import { transcriptionHoldOf } from '../../usage/transcription.ts';
import { headOf, type GatewayMiddleware, type GatewayState, type Reservation, type ResolvedRoute } from '../state.ts';

/**
 * The estimate counts with OpenAI's o200k tokenizer; Claude's tokenizers give roughly 20–30% more
 * tokens for the same text (docs/money.md, "Input-token estimate"). A hold must not run short: hold half again.
 */
const INPUT_MARGIN = 1.5;
/** Output held when neither the request nor the catalogue bounds it. */
const FALLBACK_MAX_OUTPUT = 32_768;
/**
 * Image tokens held per image when the model sets no `max_output_tokens`: above the 6,240 that
 * gpt-image-1 reports for its largest high-quality image (media.md §6.1).
 */
const IMAGE_TOKENS_BOUND = 8_192;

/**
 * Reserve, then settle (issue #4; reliability.md §3.1). Before anything goes upstream, the
 * request's maximum cost is held on its key, atomically against every other request: a
 * check-then-debit overspends under concurrency, a hold cannot. If the key cannot cover it, the
 * answer is 402 and nothing is sent. The hold is settled with the real cost when the request ends
 * (createRequestFinish).
 */
/** Holds this process has made and not yet settled, read by the metrics (issue #16). */
export interface OpenHolds {
  count: number;
}

export function createReservation(holds: Holds, instanceId: string, open: OpenHolds = { count: 0 }): GatewayMiddleware {
  return async (ctx, next) => {
    const { route, key, requestId } = ctx.state;
    if (!route || !key) throw ERR.internal();
    if (COUNTING.has(route.endpoint)) return next(); // free, like Anthropic's own
    // Planned at once when the estimate is known (a repeated request): no promise to await (issue #17).
    const plan = planHold(ctx.state);
    const { amount, inputCost, reservation } = plan instanceof Promise ? await plan : plan;
    const span = ctx.state.trace?.child('junction.hold', { 'junction.hold_pico': String(amount) });
    const reserved = await holds.reserve({ requestId, keyId: key.id, amount, inputCost, model: route.model.id, provider: route.provider.config.id, instanceId });
    if (span) endSpan(span, reserved.ok ? undefined : 'insufficient_balance');
    if (!reserved.ok) {
      const available = reserved.available > 0n ? reserved.available : 0n;
      throw ERR.insufficientBalance(picoToUsdText(amount), picoToUsdText(available));
    }
    ctx.state.reservation = reservation;
    open.count++;
    try {
      await next();
    } finally {
      open.count--;
    }
  };
}

/** What a request holds, what its input alone costs, and what the reservation records. */
interface HoldPlan {
  readonly amount: Pico;
  readonly inputCost: Pico;
  readonly reservation: Reservation;
}

/**
 * What a request holds, and what its input alone costs (charged if the process dies before
 * settling). Speech costs its characters (code points) and the flat fee, exactly, before a byte is
 * spoken; every other endpoint its input tokens with a margin and the most output it may make.
 * A plan, not a promise of one, when the input estimate is already known.
 */
function planHold(state: GatewayState): HoldPlan | Promise<HoldPlan> {
  const { route } = state;
  // n, the token limits, speech's input and images' size and quality: the checked head has the
  // first two (request-check.ts), and a body that has the others is never checked.
  const body = headOf(state);
  if (!route || !body) throw ERR.internal();
  if (route.endpoint === 'audio_speech') {
    const characters = typeof body['input'] === 'string' ? [...body['input']].length : 0;
    const amount = BigInt(characters) * route.prices.characters + route.prices.request;
    return { amount, inputCost: amount, reservation: { amount, inputTokens: 0, characters } };
  }
  // The same estimator as count_tokens (issue #4), so a request count_tokens sized is held alike;
  // counted already when a tpm limit applies (rate-limit.ts).
  const counted = inputTokensOf(state);
  return typeof counted === 'number' ? planTokens(state, route, body, counted) : counted.then((inputTokens) => planTokens(state, route, body, inputTokens));
}

function planTokens(state: GatewayState, route: ResolvedRoute, body: Record<string, unknown>, inputTokens: number): HoldPlan {
  if (state.upload && (route.endpoint === 'audio_transcriptions' || route.endpoint === 'audio_translations')) {
    const { amount, audioMs } = transcriptionHoldOf(route, state.upload, Math.ceil(inputTokens * INPUT_MARGIN));
    return { amount, inputCost: BigInt(inputTokens) * route.prices.input, reservation: { amount, inputTokens, audioMs } };
  }
  // Chat's `n` asks for that many choices, each up to the output limit; embeddings have no output.
  const choices = typeof body['n'] === 'number' && body['n'] > 1 ? Math.ceil(body['n']) : 1;
  const images = route.endpoint === 'images_generations' || route.endpoint === 'images_edits';
  const maxOutput = route.endpoint === 'embeddings' || images ? 0 : maxOutputOf(body, route.model) * choices;
  // A Responses continuation's earlier turns are input the upstream reads again (their counts as reported).
  let amount = maxCostOf(Math.ceil(inputTokens * INPUT_MARGIN) + (state.contextTokens ?? 0), maxOutput, route.prices);
  const inputCost = BigInt(inputTokens) * route.prices.input;
  if (!images) return { amount, inputCost, reservation: { amount, inputTokens } };
  // Every image asked for, at its size and quality's price, and its image tokens at their bound.
  const n = BigInt(typeof body['n'] === 'number' ? body['n'] : 1);
  const imagePrice = imagePriceOf(route.prices, body['size'], body['quality']);
  if (route.endpoint === 'images_edits') {
    // Each picture to edit is read as image tokens, at the bound (the form was read whole).
    const pictures = state.upload?.scanner.parts.filter((part) => part.filename !== undefined && part.name.startsWith('image')).length ?? 0;
    amount += BigInt(Math.max(1, pictures) * IMAGE_TOKENS_BOUND) * route.prices.inputImage;
  }
  amount += n * (imagePrice + BigInt(route.model.maxOutputTokens ?? IMAGE_TOKENS_BOUND) * route.prices.outputImage);
  return { amount, inputCost, reservation: { amount, inputTokens, imagePrice } };
}

function maxOutputOf(body: Record<string, unknown>, model: { maxOutputTokens: number | null; contextLength: number | null }): number {
  for (const field of ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const) {
    const value = body[field];
    if (typeof value === 'number' && value > 0) return Math.min(value, model.maxOutputTokens ?? value);
  }
  return model.maxOutputTokens ?? model.contextLength ?? FALLBACK_MAX_OUTPUT;
}

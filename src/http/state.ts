import type { ParameterizedContext } from 'koa';
import type { ModelConfig } from '../config/types.ts';
import type { Endpoint, TokenUsage } from '../formats/wire.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import type { Prices } from '../billing/pricing.ts';
import type { Pico } from '../billing/money.ts';
import type { RequestState } from './request-state.ts';

/** Where a request was sent, once its model is resolved. */
export interface ResolvedRoute {
  readonly endpoint: Endpoint;
  readonly model: ModelConfig;
  readonly prices: Prices;
  readonly provider: LoadedProvider;
  /** The model name the upstream sees. */
  readonly upstreamModel: string;
}

/** The outcome of a request whose client went away; the ledger bills what the upstream already did. */
export const CLIENT_DISCONNECTED = 'client_disconnected';

/** How a request was served, for the request log and the usage sink. */
export type RouteKind = 'native' | 'translated' | 'in-process' | 'local';

/**
 * What happened to a request: filled in along the chain, read once when it ends. A class whose
 * fields all exist from the start (as undefined), so every request's outcome has one shape and the
 * many sites that read it stay monomorphic; a plain object grew field by field in whichever order
 * a request's path set them (issue #17).
 */
export class RequestOutcome {
  kind?: RouteKind;
  upstreamStatus?: number;
  /** The upstream's own id for the request, when it sent one (issue #16). */
  upstreamRequestId?: string;
  /** `performance.now()` when the current upstream attempt began. */
  attemptStartedAt?: number;
  /** A stream's upstream time to first chunk, from its attempt's start, in ms (issue #16). */
  upstreamFirstChunkMs?: number;
  usage?: TokenUsage;
  /** Milliseconds from arrival to the first response byte from upstream or plugin. */
  firstByteMs?: number;
  /** Set when a response ended badly after it started (cut stream, upstream reset). */
  error?: string;
  /** Output tokens estimated from the content that passed, for a stream cut before its usage. */
  outputEstimate?: number;
  /** The request left for the upstream (or the plugin): from here on, input may be billed. */
  dispatched?: boolean;
  /** The usage was not reported but worked out (a transcript in `text` charged at its upload's bound). */
  estimated?: boolean;
  /** The id of the Responses answer, where its upstream keeps it (issue #14), and its output items' ids. */
  responseId?: string;
  responseItems?: readonly string[];
  /** A Responses answer Junction made itself (translated routes): kept in its store, not the upstream's. */
  keptResponse?: Record<string, unknown>;
  /** Upstream attempts made, retries and fallbacks included (issue #5). */
  attempts?: number;
}

/** What was held for the request before it went upstream. */
export interface Reservation {
  readonly amount: Pico;
  /** The request's input estimate in tokens (before the hold's safety margin). */
  readonly inputTokens: number;
  /** The per-image price of an images request, by its size and quality: what each image drawn costs. */
  readonly imagePrice?: Pico;
  /** Characters of a speech request's `input`: what it is charged for. */
  readonly characters?: number;
  /** A transcription's audio length as held: exact from a WAV header, else bounded by the upload's size. */
  readonly audioMs?: number;
}

/** Per-request state shared by the middleware chain (`ctx.state`): its fields are declared, once, in request-state.ts. */
export type GatewayState = RequestState;

export type GatewayContext = ParameterizedContext<GatewayState>;

/**
 * What the gateway reads from a body (`model`, `stream`, `n`, the token limits, `stream_options`):
 * the checked head when there is one, so reading them never parses the body; else the body.
 */
export function headOf(state: GatewayState): Record<string, unknown> | undefined {
  return state.head ?? state.body;
}
/**
 * A link of the chain. One with nothing to do once `next()` has resolved returns it instead of
 * being an async function that awaits it: each async link adds its own promise and microtask hops
 * to every request (issue #17). Koa's compose turns a synchronous throw into a rejection.
 */
export type GatewayMiddleware = (ctx: GatewayContext, next: () => Promise<void>) => Promise<void>;

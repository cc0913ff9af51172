import type { RequestTrace } from '../telemetry/tracing.ts';
import type { ParameterizedContext } from 'koa';
import type { ApiKey } from '../auth/key-store.ts';
import type { ModelConfig } from '../config/types.ts';
import type { Surface } from '../errors.ts';
import type { Endpoint, TokenUsage } from '../formats/wire.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import type { JsonScan } from './json-scan.ts';
import type { Prices } from '../billing/pricing.ts';
import type { Pico } from '../billing/money.ts';
import type { CatalogueRoute } from '../catalogue/catalogue.ts';
import type { Upload } from './multipart/upload.ts';
import type { CheckedElements } from '../usage/checked-text.ts';

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

/** What happened to a request: filled in along the chain, read once when it ends. */
export interface RequestOutcome {
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

/** Per-request state shared by the middleware chain (`ctx.state`). */
export interface GatewayState {
  requestId: string;
  /** The request's spans, when traces are on (issue #16). */
  trace?: RequestTrace;
  /** The `traceparent` of the attempt being sent upstream, when traces are on. */
  traceparent?: string;
  /** The caller's wire format, which decides the error format. */
  surface: Surface;
  /** `performance.now()` at arrival. */
  startedAt: number;
  key?: ApiKey;
  /** The request body exactly as received. */
  raw?: Buffer;
  scan?: JsonScan;
  /** A multipart body (issue #13): read up to its routing fields; the rest is still to come. */
  upload?: Upload;
  /**
   * The parsed body; validated by the endpoint's schema before routing. On a body the byte-level
   * checks accepted (request-check.ts) it is parsed only when first read: the native path reads
   * `head` instead, and never parses it (issue #17).
   */
  body?: Record<string, unknown> | undefined;
  /** The top-level values the gateway reads, when the byte-level checks accepted the body. */
  head?: Record<string, unknown>;
  /**
   * Where a checked body's `system` (Responses: `instructions`) and messages (Responses: its input)
   * are, for the input-token estimate; dropped where response-state.ts replays a continuation's input.
   */
  elements?: CheckedElements | undefined;
  /**
   * A checked Responses body's `item_reference` ids, in input order, as response-state.ts would
   * find them in the parsed input (responses-check.ts).
   */
  references?: readonly string[];
  route?: ResolvedRoute;
  /** The model's routes in the order this request tries them; `route` is the one being tried (issue #5). */
  candidates?: readonly CatalogueRoute[];
  /** Tokens a Responses continuation carries in from the response it continues (issue #14): held too. */
  contextTokens?: number;
  /** The input-token estimate, when the rate limiter needed it first; the hold reuses it. */
  inputTokens?: number;
  reservation?: Reservation;
  /** Set by the model endpoints' chains: this request gets a ledger row when it ends (issue #4). */
  ledger?: boolean;
  /**
   * A Chat stream whose client did not ask for usage: the upstream is asked anyway, so the ledger
   * gets the real counts, and the usage chunk is kept from the client (issue #4).
   */
  usageForced?: boolean;
  outcome: RequestOutcome;
  /** A body the byte-level checks accepted: `body` parses it on first read (request-state.ts). */
  parseWhenRead(raw: Buffer): void;
}

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

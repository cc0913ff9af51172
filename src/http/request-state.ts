import type { IncomingHttpHeaders } from 'node:http';
import type { RequestTrace } from '../telemetry/tracing.ts';
import type { ApiKey } from '../auth/key-store.ts';
import type { Surface } from '../errors.ts';
import type { CatalogueRoute } from '../catalogue/catalogue.ts';
import type { CheckedElements } from '../usage/checked-text.ts';
import type { BodyBytes } from './body-bytes.ts';
import type { JsonScan } from './json-scan.ts';
import { jsonText } from './json-text.ts';
import type { Upload } from './multipart/upload.ts';
import { RequestOutcome, type Reservation, type ResolvedRoute } from './state.ts';

/**
 * Per-request state shared by the middleware chain (`ctx.state`, typed `GatewayState`), made once
 * per request by the request context (issue #17). Every field is declared here, the one list of
 * them, so each request's state has one shape from the start rather than one built up field by
 * field along the chain. A checked body (request-check.ts) is parsed only when `body` is first
 * read: that was a getter defined on each request's state object (Object.defineProperty, about
 * 2.5 µs a request on Node 20 and more on 24); here it is the class's own accessor.
 */
export class RequestState {
  /** The request's spans, when traces are on (issue #16). */
  trace?: RequestTrace;
  /** The `traceparent` of the attempt being sent upstream, when traces are on. */
  traceparent?: string;
  key?: ApiKey;
  /** The request body exactly as received, in the chunks it came in (body-bytes.ts). */
  raw?: BodyBytes;
  scan?: JsonScan;
  /** A multipart body (issue #13): read up to its routing fields; the rest is still to come. */
  upload?: Upload;
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
  /** What happened to the request: filled in along the chain, read once when it ends. */
  readonly outcome = new RequestOutcome();
  #body: Record<string, unknown> | undefined = undefined;
  /** A checked body's bytes, until it is first read. */
  #unparsed: BodyBytes | undefined = undefined;

  constructor(
    readonly requestId: string,
    /** `performance.now()` at arrival. */
    readonly startedAt: number,
    /** `Date.now()` at arrival: the ledger row's start, read with the request id's clock. */
    readonly arrivedAtMs: number,
    /** The caller's wire format, which decides the error format. */
    public surface: Surface,
    /**
     * The client's headers as they came, read once from Node's `req.headers` getter, whose every
     * read is a megamorphic keyed load (about 350 instructions; issue #17, twenty-eighth session).
     * Also what each upstream attempt filters afresh: a native attempt hands http-proxy-3 its own
     * `req.headers` (passthrough.ts).
     */
    readonly headers: IncomingHttpHeaders,
  ) {}

  /**
   * The parsed body; validated by the endpoint's schema before routing. On a body the byte-level
   * checks accepted (request-check.ts) it is parsed only when first read: the native path reads
   * `head` instead, and never parses it (issue #17).
   */
  get body(): Record<string, unknown> | undefined {
    if (this.#unparsed !== undefined) {
      // The checks proved it valid JSON and an object, so this cannot throw.
      this.#body = JSON.parse(jsonText(this.#unparsed.view())) as Record<string, unknown>;
      this.#unparsed = undefined;
    }
    return this.#body;
  }

  set body(value: Record<string, unknown> | undefined) {
    this.#unparsed = undefined;
    this.#body = value;
  }

  /** A body the byte-level checks accepted: `body` parses it on first read. */
  parseWhenRead(raw: BodyBytes): void {
    this.#unparsed = raw;
    this.#body = undefined;
  }
}

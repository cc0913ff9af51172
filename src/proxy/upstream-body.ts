import { Stream, type Readable, type Writable } from 'node:stream';
import type { BodyBytes } from '../http/body-bytes.ts';
import type { Upload } from '../http/multipart/upload.ts';
import type { JsonScan } from '../http/json-scan.ts';
import { spliceFields } from '../http/json-scan.ts';
import { headOf, type GatewayState, type ResolvedRoute } from '../http/state.ts';
import { withUsageRequested } from '../usage/chat-stream-usage.ts';
import { JSON_BODY, type BodyShape } from './headers.ts';

/** What a native attempt sends upstream: http-proxy-3 only ever calls `pipe()` on `source`. */
export interface UpstreamBody {
  readonly source: Stream;
  readonly shape: BodyShape;
  /** A multipart body still flowing in from the client: only one attempt can send it. */
  readonly live: Readable | undefined;
}

/**
 * A JSON body read whole, sent as the chunks it came in (body-bytes.ts): written together before
 * the request has its socket, they leave in one writev.
 */
export class BodySource extends Stream {
  readonly #chunks: readonly Buffer[];
  constructor(body: BodyBytes) {
    super();
    this.#chunks = body.chunks;
  }
  override pipe<T extends NodeJS.WritableStream>(destination: T): T {
    const out = destination as unknown as Writable;
    const last = this.#chunks.length - 1;
    for (let i = 0; i < last; i++) out.write(this.#chunks[i]);
    out.end(this.#chunks[last]);
    return destination;
  }
}

/**
 * The client's JSON bytes, with the only changes a native route makes: the upstream model name,
 * and `stream_options.include_usage` on a Chat stream the client did not ask usage for (issue #4).
 */
export function jsonBody(raw: BodyBytes, scan: JsonScan, state: GatewayState, route: ResolvedRoute, forceUsage: boolean): UpstreamBody {
  const head = headOf(state) ?? {};
  const edits: Record<string, unknown> = {};
  if (route.upstreamModel !== route.model.id) edits['model'] = route.upstreamModel;
  if (forceUsage) edits['stream_options'] = withUsageRequested(head);
  // Values are compared with the head's; the whole body is read only if the splice cannot be made.
  const bytes = Object.keys(edits).length === 0 ? raw : spliceFields(raw, scan, head, edits, () => state.body ?? head);
  return { source: new BodySource(bytes), shape: { length: bytes.length, contentType: JSON_BODY }, live: undefined };
}

/**
 * A multipart body (issue #13): the spooled start with the `model` part's value replaced when
 * the route names another upstream model (the part's bytes are raw text, so the swap is exact),
 * then the rest as it arrives. Its length is the client's, adjusted by the swap, or unknown
 * (chunked) when the client sent none.
 */
export function formBody(upload: Upload, route: ResolvedRoute): UpstreamBody {
  const rename = route.upstreamModel !== route.model.id;
  const part = rename ? upload.scanner.parts.findLast((p) => p.name === 'model' && p.filename === undefined) : undefined;
  const splice = part?.end !== undefined ? { start: part.start, end: part.end, bytes: Buffer.from(route.upstreamModel, 'utf8') } : undefined;
  const delta = splice ? splice.bytes.length - (splice.end - splice.start) : 0;
  const total = upload.replayable ? upload.received : upload.declaredLength;
  const replayable = upload.replayable;
  const source = upload.open(splice);
  // The boundary the gateway read, whatever else the client's header said (form-body.ts).
  const quoted = /[^0-9A-Za-z'+_\-.]/.test(upload.boundary) ? `"${upload.boundary}"` : upload.boundary;
  const contentType = `multipart/form-data; boundary=${quoted}`;
  return { source, shape: { length: total === null ? null : total + delta, contentType }, live: replayable ? undefined : source };
}

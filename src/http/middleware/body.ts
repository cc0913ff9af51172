import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { bodyDecoder, ZSTD_SUPPORTED } from '../body-decoding.ts';
import { BodyBytes } from '../body-bytes.ts';
import { ERR } from '../../errors.ts';
import { scanJson } from '../json-scan.ts';
import { jsonText } from '../json-text.ts';
import { checkRequest, type CheckedEndpoint } from '../request-check.ts';
import type { GatewayMiddleware } from '../state.ts';
import { recentElements, type CheckedFormat } from '../../usage/checked-text.ts';
import { COUNTED_AS } from '../input-tokens.ts';

export interface BodyReaderOptions {
  readonly limitBytes: number;
  /** Nesting deeper than this is refused before JSON.parse sees it. */
  readonly maxDepth: number;
  /**
   * The endpoint whose rules the body is first checked against as bytes (request-check.ts): a body
   * they accept is not parsed unless something reads `ctx.state.body` (issue #17).
   */
  readonly check?: CheckedEndpoint;
}

/**
 * Where the estimate remembers an endpoint's elements (usage/checked-text.ts): the format it reads
 * them by (input-tokens.ts), so the check steps over only what was read under the same rules.
 * None for Responses, whose check walks its input whole (responses-check.ts).
 */
function knownFormatOf(check: CheckedEndpoint): CheckedFormat | undefined {
  const format = COUNTED_AS[check];
  return format === 'responses' ? undefined : format;
}

/**
 * Reads the JSON body once, as the chunks it came in (kept byte-exact for passthrough, never joined:
 * body-bytes.ts), checks size and nesting, then parses it. We read the body ourselves rather than
 * through koa-body: passthrough needs the original bytes, and the nesting check must run before
 * JSON.parse (a deeply nested body blocks the event loop for seconds in JSON.parse:
 * engineering-notes.md). Everything here reads the body through one synchronous `view`.
 */
export function createBodyReader(options: BodyReaderOptions): GatewayMiddleware {
  const check = options.check;
  const knownFormat = check === undefined ? undefined : knownFormatOf(check);
  return async (ctx, next) => {
    // Node's headers, read once per request (request-state.ts), as in auth.ts.
    const headers = ctx.state.headers;
    const encoding = (headers['content-encoding'] ?? '').trim().toLowerCase();
    const decoder = bodyDecoder(encoding);
    if (decoder === undefined) throw ERR.unsupportedEncoding(encoding, ZSTD_SUPPORTED);
    const declared = Number(headers['content-length'] ?? '');
    if (declared > options.limitBytes) throw ERR.bodyTooLarge(options.limitBytes);
    // The limit counts the decoded bytes (issue #14): a small compressed body can hold a large one.
    const raw = await readBody(ctx.req, decoder, encoding, options.limitBytes);
    // Read before the next await only: a body of several chunks is viewed in the shared scratch.
    const bytes = raw.view();
    // Elements this key sent before are not checked again where they come back byte for byte (an
    // agent's system prompt, tools and history, each turn). Kept per key: shared, a request's
    // speed would tell one key what another sent.
    const known = knownFormat && recentElements(knownFormat, String(ctx.state.key?.id ?? ''));
    const checked = check === undefined ? null : checkRequest(bytes, check, options.maxDepth, known);
    if (checked !== null) {
      ctx.state.raw = raw;
      ctx.state.scan = checked.scan;
      ctx.state.head = checked.head;
      ctx.state.elements = checked.elements;
      if (checked.references) ctx.state.references = checked.references;
      ctx.state.parseWhenRead(raw);
      await next();
      return;
    }
    const scan = scanJson(bytes, options.maxDepth);
    if (scan.tooDeep) throw ERR.jsonTooDeep(options.maxDepth);
    let body: unknown;
    try {
      // Not raw.toString('utf8'): a large body with one non-ASCII character decodes 6× slower (json-text.ts).
      body = JSON.parse(jsonText(bytes));
    } catch (err) {
      throw ERR.invalidJson(err instanceof Error ? err.message : 'unparseable');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ERR.bodyNotObject();
    ctx.state.raw = raw;
    ctx.state.scan = scan;
    ctx.state.body = body as Record<string, unknown>;
    await next();
  };
}

/** The body, decoded when it came compressed, up to `limitBytes` of decoded bytes. */
function readBody(req: IncomingMessage, decoder: Transform | null, encoding: string, limitBytes: number): Promise<BodyBytes> {
  const source: Readable = decoder ?? req;
  if (decoder) req.pipe(decoder);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let raw = 0;
    const cleanup = (): void => {
      source.off('data', onData);
      if (decoder) req.off('data', onRaw);
      source.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      decoder?.off('error', onBadCoding);
    };
    const stop = (err: Error): void => {
      cleanup();
      // Stop reading; the error carries `connection: close`, so the rest is never read.
      if (decoder) {
        req.unpipe(decoder);
        decoder.destroy();
      }
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        stop(ERR.bodyTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      // A plain body's listeners are left on a request that has ended: 'data' and 'end' do not
      // come again, and onGone returns on a complete request. Removing four listeners from the
      // request's lists cost about 1,000 instructions each per request (issue #17, callgrind).
      // A decoder's are removed, as before: the decoder and its request end separately.
      if (decoder) cleanup();
      resolve(new BodyBytes(chunks, size));
    };
    // The client hung up before sending the whole body: an everyday event, not a gateway fault.
    const onGone = (): void => {
      if (req.complete) return; // the decoder may still be finishing
      stop(ERR.clientClosed());
    };
    const onBadCoding = (err: Error): void => stop(ERR.bodyNotDecodable(encoding, err.message));
    // The compressed bytes are bounded too: empty gzip members or zstd skippable frames decode to
    // nothing, and would otherwise stream until the request timeout (review of issue #14).
    const onRaw = (chunk: Buffer): void => {
      raw += chunk.length;
      if (raw > limitBytes) stop(ERR.bodyTooLarge(limitBytes));
    };
    if (decoder) req.on('data', onRaw);
    source.on('data', onData);
    source.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
    decoder?.on('error', onBadCoding);
  });
}

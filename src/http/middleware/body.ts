import type { IncomingMessage } from 'node:http';
import { ERR } from '../../errors.ts';
import { scanJson } from '../json-scan.ts';
import type { GatewayMiddleware } from '../state.ts';

export interface BodyReaderOptions {
  readonly limitBytes: number;
  /** Nesting deeper than this is refused before JSON.parse sees it. */
  readonly maxDepth: number;
}

/**
 * Reads the JSON body once into a Buffer (kept byte-exact for passthrough), checks size and
 * nesting, then parses it. We read the body ourselves rather than through koa-body: passthrough
 * needs the original bytes, and the nesting check must run before JSON.parse (a deeply nested
 * body blocks the event loop for seconds in JSON.parse: engineering-notes.md).
 */
export function createBodyReader(options: BodyReaderOptions): GatewayMiddleware {
  return async (ctx, next) => {
    const encoding = ctx.get('content-encoding').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') throw ERR.unsupportedEncoding(encoding);
    const declared = Number(ctx.get('content-length'));
    if (declared > options.limitBytes) throw ERR.bodyTooLarge(options.limitBytes);
    const raw = await readBody(ctx.req, options.limitBytes);
    const scan = scanJson(raw, options.maxDepth);
    if (scan.tooDeep) throw ERR.jsonTooDeep(options.maxDepth);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
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

function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        // Stop reading; the 413 carries `connection: close`, so the rest is never read.
        req.pause();
        reject(ERR.bodyTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    // The client hung up before sending the whole body: an everyday event, not a gateway fault.
    const onGone = (): void => {
      cleanup();
      reject(ERR.clientClosed());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

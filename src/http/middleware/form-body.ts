import { ERR } from '../../errors.ts';
import type { FormEndpoint } from '../../formats/wire.ts';
import { FORM_SPECS, routable } from '../multipart/form-rules.ts';
import { Upload } from '../multipart/upload.ts';
import { bodyDecoder, ZSTD_SUPPORTED } from '../body-decoding.ts';
import type { GatewayMiddleware } from '../state.ts';

/** A boundary as RFC 2046 §5.1.1 allows it: 1 to 70 of these characters, not ending in a space. */
const BCHARS = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
const PARAM = /;\s*([^\s=;]+)\s*=\s*(?:"([^"]*)"|([^;\s]*))\s*/g;

/**
 * The boundary of a `multipart/form-data` type, read strictly: exactly one, valid by RFC 2046. A
 * lenient read (the first of two, a long one cut at 70) would let the gateway check one form while
 * the upstream parses another (review of issue #13), so anything else is refused; and the upstream
 * is sent a content type rebuilt from the boundary read here, not the client's header.
 */
export function boundaryOf(contentType: string): string | undefined {
  const found: string[] = [];
  for (const match of contentType.matchAll(PARAM)) {
    if (match[1]?.toLowerCase() === 'boundary') found.push(match[2] ?? match[3] ?? '');
  }
  return found.length === 1 && BCHARS.test(found[0] ?? '') ? found[0] : undefined;
}

/**
 * The body reader of the multipart endpoints (issue #13). It reads the form only until the
 * fields that route it have passed (media.md §8.2), spooling what came before them, and leaves
 * the rest unread: native routes stream it upstream, in-process plugins read it whole. The fields
 * read become `ctx.state.body`, typed as the JSON endpoints' (`stream` a boolean, `n` a number),
 * so validation, routing, holds and the ledger treat both alike.
 */
export function createFormReader(options: { readonly limitBytes: number; readonly endpoint: FormEndpoint }): GatewayMiddleware {
  const spec = FORM_SPECS[options.endpoint];
  return async (ctx, next) => {
    const encoding = ctx.get('content-encoding').trim().toLowerCase();
    const decoder = bodyDecoder(encoding);
    if (decoder === undefined) throw ERR.unsupportedEncoding(encoding, ZSTD_SUPPORTED);
    const contentType = ctx.get('content-type');
    if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) throw ERR.unsupportedMediaType(contentType, ctx.path, 'multipart/form-data');
    const boundary = boundaryOf(contentType);
    if (boundary === undefined) throw ERR.formInvalid('the content-type must name one boundary of 1 to 70 characters (RFC 2046)', true);
    const declared = ctx.get('content-length') === '' ? null : Number(ctx.get('content-length'));
    if (declared !== null && declared > options.limitBytes) throw ERR.bodyTooLarge(options.limitBytes);
    const upload = new Upload(ctx.req, {
      boundary,
      limitBytes: options.limitBytes,
      // A compressed body's declared length is not the length of what goes upstream (decoded).
      declaredLength: decoder === null && declared !== null && Number.isSafeInteger(declared) ? declared : null,
      rules: spec.rules(),
      requestId: ctx.state.requestId,
      ...(decoder && { decoder: { stream: decoder, encoding } }),
    });
    ctx.state.upload = upload;
    try {
      await upload.spoolUntil(() => routable(spec, upload.scanner));
      ctx.state.body = formBody(upload.scanner.fields);
      await next();
    } finally {
      await upload.dispose();
    }
  };
}

const NUMERIC = new Set(['n', 'partial_images', 'output_compression', 'temperature']);

/** Form fields as the JSON endpoints' body: one value each (arrays for `name[]`), typed where OpenAI's JSON is. */
export function formBody(fields: ReadonlyMap<string, readonly string[]>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, values] of fields) {
    if (name.endsWith('[]')) {
      body[name.slice(0, -2)] = [...values];
      continue;
    }
    const value = values[values.length - 1] ?? '';
    if (name === 'stream' && (value === 'true' || value === 'false')) body[name] = value === 'true';
    else if (NUMERIC.has(name) && value.trim() !== '' && Number.isFinite(Number(value))) body[name] = Number(value);
    else body[name] = value;
  }
  return body;
}

import { ERR } from '../../errors.ts';
import type { FormEndpoint } from '../../formats/wire.ts';
import { FORM_SPECS, routable } from '../multipart/form-rules.ts';
import { Upload } from '../multipart/upload.ts';
import type { GatewayMiddleware } from '../state.ts';

const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i;

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
    if (encoding !== '' && encoding !== 'identity') throw ERR.unsupportedEncoding(encoding);
    const contentType = ctx.get('content-type');
    if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) throw ERR.unsupportedMediaType(contentType, ctx.path, 'multipart/form-data');
    const match = BOUNDARY.exec(contentType);
    const boundary = match?.[1] ?? match?.[2];
    if (boundary === undefined) throw ERR.formInvalid('the content-type names no boundary', true);
    const declared = ctx.get('content-length') === '' ? null : Number(ctx.get('content-length'));
    if (declared !== null && declared > options.limitBytes) throw ERR.bodyTooLarge(options.limitBytes);
    const upload = new Upload(ctx.req, {
      boundary,
      limitBytes: options.limitBytes,
      declaredLength: declared !== null && Number.isSafeInteger(declared) ? declared : null,
      rules: spec.rules(),
      requestId: ctx.state.requestId,
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

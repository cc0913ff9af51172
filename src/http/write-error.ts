import type { ServerResponse } from 'node:http';
import { renderError, type GatewayError, type Surface } from '../errors.ts';

/**
 * Writes an error response straight to the socket, for paths where Koa no longer owns the
 * response (ctx.respond = false: passthrough and streams). The body comes from renderError, the
 * single renderer of error bodies.
 */
export function writeErrorResponse(res: ServerResponse, surface: Surface, err: GatewayError, requestId: string): void {
  if (res.headersSent || res.destroyed) return;
  const rendered = renderError(surface, err, requestId);
  res.writeHead(rendered.status, { ...rendered.headers, 'content-length': Buffer.byteLength(rendered.body) });
  res.end(rendered.body);
}

import type { ApiKey, KeyStore } from '../../auth/key-store.ts';
import { ERR } from '../../errors.ts';
import { headerText } from '../../proxy/headers.ts';
import type { GatewayContext, GatewayMiddleware } from '../state.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Authenticates the caller from `x-api-key` (Anthropic SDK 0.x, Claude Code) or
 * `Authorization: Bearer` (Anthropic SDK 1.x, OpenAI SDK). Two different keys in one request are
 * refused rather than one picked silently (reliability.md §4.1).
 */
export function createAuth(keys: KeyStore): GatewayMiddleware {
  return (ctx, next) => {
    // Node's headers, as ctx.get() reads them, without its lower-casing: each read here is a named
    // load of its own, where ctx.get's one keyed load sees every header name (issue #17). Read
    // once per request into the state (request-state.ts).
    const headers = ctx.state.headers;
    const headerKey = (headerText(headers['x-api-key']) ?? '').trim();
    const authorization = headers['authorization'] ?? '';
    let bearer = '';
    if (authorization !== '') {
      const match = BEARER.exec(authorization);
      if (!match?.[1]) throw ERR.invalidKey();
      bearer = match[1];
    }
    if (headerKey === '' && bearer === '') throw ERR.missingKey();
    if (headerKey !== '' && bearer !== '' && headerKey !== bearer) throw ERR.conflictingKeys();
    const presented = headerKey || bearer;
    // A cached key goes on at once: no promise of its own in the chain (issue #17). The connection
    // remembers what it presented last, so a keep-alive client's key is hashed once (key-store.ts).
    const known = keys.known(presented, ctx.req.socket);
    if (known) return admit(ctx, next, known);
    return keys.authenticate(presented).then((key) => admit(ctx, next, key));
  };
}

function admit(ctx: GatewayContext, next: () => Promise<void>, key: ApiKey | undefined): Promise<void> {
  if (!key) throw ERR.invalidKey();
  if (key.disabled) throw ERR.keyDisabled();
  ctx.state.key = key;
  return next();
}

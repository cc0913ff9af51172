import { ERR } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { Store } from '../../store/store.ts';
import type { GatewayMiddleware } from '../state.ts';

/**
 * Responses state on native routes (issue #14; responses-api.md §6). The upstream keeps a stored
 * response; Junction remembers which provider it went to, for the key that made it, for
 * `responses.retention_days`. A continuation (`previous_response_id`) is then routed only to that
 * provider: another one would answer without the conversation, or with another account's. An id
 * this key never made, or one expired, is 404 before anything is held or sent.
 */
export function createResponseState(store: Store, retentionMs: number, log: Logger, wallNow: () => number = Date.now): GatewayMiddleware {
  return async (ctx, next) => {
    const { body, key, route, candidates } = ctx.state;
    if (!body || !key || !route || !candidates) throw ERR.internal();
    // Refused until Junction can meter and scope them (review of issue #14): a background response
    // is answered `queued`, with no usage, and read later for free; a conversation is an upstream
    // object any key of the shared upstream account could name.
    if (body['background'] === true) throw ERR.invalidField('background: background responses are not supported through Junction; stream instead', 'background');
    if (body['conversation'] != null) throw ERR.invalidField('conversation: upstream conversations are not supported through Junction; send previous_response_id or the whole input', 'conversation');
    const previous = body['previous_response_id'];
    if (typeof previous === 'string') {
      const record = await store.findResponse(previous, key.id, new Date(wallNow()));
      if (!record) throw ERR.responseNotFound(previous, 'previous_response_id');
      const sticky = candidates.filter((candidate) => candidate.provider.config.id === record.provider);
      const first = sticky[0];
      if (!first) throw ERR.responseElsewhere(previous, record.provider, route.model.id);
      ctx.state.candidates = sticky;
      ctx.state.route = { ...route, provider: first.provider, upstreamModel: first.model };
      ctx.state.contextTokens = record.contextTokens;
    }
    await next();
    const id = ctx.state.outcome.responseId;
    const served = ctx.state.route;
    // `store: false` (Codex CLI's way) keeps nothing upstream: there is nothing to find later.
    if (id === undefined || body['store'] === false || !served || ctx.status >= 400) return;
    const now = wallNow();
    const usage = ctx.state.outcome.usage;
    const contextTokens = usage ? usage.input + usage.cacheRead + usage.cacheWrite + usage.output : 0;
    try {
      await store.saveResponse({ id, keyId: key.id, provider: served.provider.config.id, model: served.model.id, contextTokens, createdAt: new Date(now), expiresAt: new Date(now + retentionMs) });
    } catch (err) {
      // The answer was served; only a later continuation of it will miss. Said, not thrown.
      log.error({ req_id: ctx.state.requestId, err }, 'could not remember a response id');
    }
  };
}

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
    // What the request continues: a previous response, and items of earlier ones named by
    // `item_reference` (the Vercel AI SDK's way). Each must be this key's, and the request goes
    // only where they are kept: any other key's, or an upstream that has none of them, would
    // answer from someone else's conversation or without it.
    const now = new Date(wallNow());
    const kept: { readonly id: string; readonly provider: string; readonly param: string }[] = [];
    const previous = body['previous_response_id'];
    if (typeof previous === 'string') {
      const record = await store.findResponse(previous, key.id, now);
      if (!record) throw ERR.responseNotFound(previous, 'previous_response_id');
      kept.push({ id: previous, provider: record.provider, param: 'previous_response_id' });
      ctx.state.contextTokens = record.contextTokens;
    }
    for (const itemId of referencedItems(body['input'])) {
      const record = await store.findResponseOfItem(itemId, key.id, now);
      if (!record) throw ERR.itemNotFound(itemId);
      kept.push({ id: itemId, provider: record.provider, param: 'input' });
    }
    for (const { id, provider, param } of kept) {
      const sticky = (ctx.state.candidates ?? candidates).filter((candidate) => candidate.provider.config.id === provider);
      const first = sticky[0];
      if (!first) throw ERR.responseElsewhere(id, provider, route.model.id, param);
      ctx.state.candidates = sticky;
      ctx.state.route = { ...route, provider: first.provider, upstreamModel: first.model };
    }
    await next();
    const id = ctx.state.outcome.responseId;
    const served = ctx.state.route;
    // `store: false` (Codex CLI's way) keeps nothing upstream: there is nothing to find later.
    if (id === undefined || body['store'] === false || !served || ctx.status >= 400) return;
    const savedAt = wallNow();
    const usage = ctx.state.outcome.usage;
    const contextTokens = usage ? usage.input + usage.cacheRead + usage.cacheWrite + usage.output : 0;
    try {
      const record = { id, keyId: key.id, provider: served.provider.config.id, model: served.model.id, contextTokens, createdAt: new Date(savedAt), expiresAt: new Date(savedAt + retentionMs) };
      await store.saveResponse(record, ctx.state.outcome.responseItems ?? []);
    } catch (err) {
      // The answer was served; only a later continuation of it will miss. Said, not thrown.
      log.error({ req_id: ctx.state.requestId, err }, 'could not remember a response id');
    }
  };
}

/** The ids an input names by `item_reference` (at most the first 1,000 looked up). */
function referencedItems(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  const ids: string[] = [];
  for (const item of input) {
    if (typeof item === 'object' && item !== null && (item as { type?: unknown }).type === 'item_reference') {
      const id = (item as { id?: unknown }).id;
      if (typeof id === 'string') ids.push(id);
      if (ids.length >= 1000) break;
    }
  }
  return [...new Set(ids)];
}

import { ERR } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { ResponseRecord, Store } from '../../store/store.ts';
import { asArray, asObject, type Json } from '../../formats/convert/json.ts';
import { headOf, type GatewayMiddleware, type GatewayState } from '../state.ts';

/**
 * Responses state (issue #14; responses-api.md §6). On native routes the upstream keeps a stored
 * response; Junction remembers which provider it went to, for the key that made it, for
 * `responses.retention_days`. On translated routes the upstream keeps nothing (it is sent
 * `store: false`), so Junction keeps the input and output items itself, for as long. A continuation (`previous_response_id`) is then routed only to that
 * provider: another one would answer without the conversation, or with another account's. An id
 * this key never made, or one expired, is 404 before anything is held or sent.
 */
export function createResponseState(store: Store, retentionMs: number, log: Logger, wallNow: () => number = Date.now): GatewayMiddleware {
  return async (ctx, next) => {
    const { key, route, candidates } = ctx.state;
    // A checked body's head has the fields read here, and its references are found as it was
    // checked (responses-check.ts): a plain request is never parsed (issue #17). Else the body.
    const fields = headOf(ctx.state);
    if (!fields || !key || !route || !candidates) throw ERR.internal();
    // Refused until Junction can meter and scope them (review of issue #14): a background response
    // is answered `queued`, with no usage, and read later for free; a conversation is an upstream
    // object any key of the shared upstream account could name.
    if (fields['background'] === true) throw ERR.invalidField('background: background responses are not supported through Junction; stream instead', 'background');
    if (fields['conversation'] != null) throw ERR.invalidField('conversation: upstream conversations are not supported through Junction; send previous_response_id or the whole input', 'conversation');
    // What the request continues: a previous response, and items of earlier ones named by
    // `item_reference` (the Vercel AI SDK's way). Each must be this key's. An upstream-kept one
    // sends the request only where it is kept: any other key's, or an upstream that has none of
    // them, would answer from someone else's conversation or without it. A Junction-kept one (a
    // translated route's) is replayed into the input, for any route but a native one.
    const now = new Date(wallNow());
    const kept: { readonly id: string; readonly provider: string; readonly param: string }[] = [];
    let history: Json[] | undefined;
    const resolved = new Map<string, Json>();
    const previous = fields['previous_response_id'];
    if (typeof previous === 'string') {
      const record = await store.findResponse(previous, key.id, now);
      if (!record) throw ERR.responseNotFound(previous, 'previous_response_id');
      ctx.state.contextTokens = record.contextTokens;
      const stored = storedOf(record);
      if (stored) history = [...stored.input, ...asArray(stored.response['output']).map(asObject)];
      else kept.push({ id: previous, provider: record.provider, param: 'previous_response_id' });
    }
    for (const itemId of referencedItems(ctx.state)) {
      const record = await store.findResponseOfItem(itemId, key.id, now);
      if (!record) throw ERR.itemNotFound(itemId);
      const item = itemOf(storedOf(record), itemId);
      if (item) resolved.set(itemId, item);
      else kept.push({ id: itemId, provider: record.provider, param: 'input' });
    }
    const junctionKept = history !== undefined || resolved.size > 0;
    if (junctionKept) {
      // `previous_response_id` stays for the answer to echo; the decoders read only the input.
      // A checked body is parsed here: the translated route it now takes reads it anyway.
      const body = ctx.state.body;
      if (!body) throw ERR.internal();
      ctx.state.body = { ...body, input: [...(history ?? []), ...inputItems(body['input']).map((item) => (isReference(item) ? (resolved.get(String(item['id'])) ?? item) : item))] };
      // The input-token estimate counts the input as replayed, not the bytes' (input-tokens.ts).
      ctx.state.elements = undefined; // not `delete`: the state keeps its one shape (request-state.ts)
      const translated = (ctx.state.candidates ?? candidates).filter((c) => c.provider.plugin.native?.endpoints.responses === undefined);
      const first = translated[0];
      if (!first) throw ERR.responseKeptByJunction(typeof previous === 'string' ? previous : [...resolved.keys()][0]!, route.model.id, typeof previous === 'string' ? 'previous_response_id' : 'input');
      ctx.state.candidates = translated;
      ctx.state.route = { ...route, provider: first.provider, upstreamModel: first.model };
    }
    for (const { id, provider, param } of kept) {
      const current = ctx.state.route ?? route;
      const sticky = (ctx.state.candidates ?? candidates).filter((candidate) => candidate.provider.config.id === provider);
      const first = sticky[0];
      if (!first) throw ERR.responseElsewhere(id, provider, route.model.id, param);
      ctx.state.candidates = sticky;
      ctx.state.route = { ...current, provider: first.provider, upstreamModel: first.model };
    }
    await next();
    const { responseId: id, keptResponse } = ctx.state.outcome;
    const served = ctx.state.route;
    // `store: false` (Codex CLI's way) keeps nothing: there is nothing to find later.
    if (id === undefined || fields['store'] === false || !served || ctx.status >= 400) return;
    const savedAt = wallNow();
    const usage = ctx.state.outcome.usage;
    const contextTokens = usage ? usage.input + usage.cacheRead + usage.cacheWrite + usage.output : 0;
    try {
      const { input, minted } = keptResponse ? withIds(inputItems(ctx.state.body?.['input']), id) : { input: [], minted: [] };
      const record = {
        id,
        keyId: key.id,
        provider: served.provider.config.id,
        model: served.model.id,
        contextTokens,
        ...(keptResponse && { body: JSON.stringify({ input, response: keptResponse }) }),
        createdAt: new Date(savedAt),
        expiresAt: new Date(savedAt + retentionMs),
      };
      // Only the ids this response minted: replayed items stay indexed under the response that
      // made them, and an id a client wrote into its input cannot take over another's (review of #14).
      await store.saveResponse(record, [...(ctx.state.outcome.responseItems ?? []), ...minted]);
    } catch (err) {
      // The answer was served; only a later continuation of it will miss. Said, not thrown.
      log.error({ req_id: ctx.state.requestId, err }, 'could not remember a response id');
    }
  };
}

/** What Junction keeps of a response it made itself. */
export interface StoredResponse {
  readonly input: Json[];
  readonly response: Json;
}

export function storedOf(record: ResponseRecord | undefined): StoredResponse | undefined {
  if (record?.body === undefined) return undefined;
  try {
    const parsed = asObject(JSON.parse(record.body));
    return { input: asArray(parsed['input']).map(asObject), response: asObject(parsed['response']) };
  } catch {
    return undefined;
  }
}

function itemOf(stored: StoredResponse | undefined, id: string): Json | undefined {
  if (!stored) return undefined;
  return [...stored.input, ...asArray(stored.response['output']).map(asObject)].find((item) => item['id'] === id);
}

/** The input as items: a string is one user message. */
function inputItems(input: unknown): Json[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return asArray(input).map(asObject);
}

/** Input items as OpenAI lists them, each with an id: minted from the response's where it had none. */
function withIds(items: Json[], responseId: string): { input: Json[]; minted: string[] } {
  const base = responseId.replace(/^resp_/, '');
  const minted: string[] = [];
  const input = items.map((item, i) => {
    if (typeof item['id'] === 'string') return item;
    const id = `${item['type'] === 'message' || item['role'] !== undefined ? 'msg' : 'item'}_${base}_in${i}`;
    minted.push(id);
    return { id, ...item };
  });
  return { input, minted };
}

/**
 * An `item_reference`: typed so, or (the SDK's type allows it, responses-api.md §2.2) an item with
 * an id and neither a type nor a role.
 */
function isReference(item: Json): boolean {
  return item['type'] === 'item_reference' || (item['type'] == null && item['role'] === undefined && typeof item['id'] === 'string');
}

/**
 * The ids the input names by `item_reference` (at most the first 1,000 looked up): as the byte
 * check found them (responses-check.ts, the same rule), else from the parsed input.
 */
function referencedItems(state: GatewayState): string[] {
  if (state.references) return [...new Set(state.references)];
  const ids: string[] = [];
  for (const raw of asArray(state.body?.['input'])) {
    const item = asObject(raw);
    if (isReference(item) && typeof item['id'] === 'string') ids.push(item['id']);
    if (ids.length >= 1000) break;
  }
  return [...new Set(ids)];
}

import { usageFields } from '../../usage/usage-fields.ts';
import { picoToUsdNumber } from '../../billing/money.ts';
import { ERR } from '../../errors.ts';
import { decodeSegment } from '../path-segment.ts';
import type { Settlements } from '../../billing/settlements.ts';
import { withAllHolds, type Holds } from '../../billing/holds.ts';
import type { LedgerRow, Store } from '../../store/store.ts';
import type { GatewayMiddleware } from '../state.ts';

/** GET /v1/balance: the calling key's balance, spending and request count (issue #4). */
export function createBalance(store: Store, settlements: Settlements, holds: Holds): GatewayMiddleware {
  return async (ctx) => {
    const key = ctx.state.key;
    if (!key) throw ERR.internal();
    await settlements.written({ keyId: key.id });
    const stored = await store.keyById(key.id);
    if (!stored) throw ERR.invalidKey();
    // Holds in Redis are not in the store's row (issue #12).
    const [record = stored] = await withAllHolds([stored], (ids) => holds.heldOutsideStore(ids));
    ctx.body = {
      name: record.name,
      balance_usd: record.balance === null ? null : picoToUsdNumber(record.balance),
      held_usd: picoToUsdNumber(record.held),
      spent_usd: picoToUsdNumber(record.spent),
      requests: record.requests,
    };
  };
}

/**
 * GET /v1/generations/{id}: the ledger row of a request, by its x-request-id. Only the key that
 * made the request sees it; any other key gets 404, as if it did not exist (OWASP API1, BOLA).
 */
export function createGeneration(store: Store, settlements: Settlements): GatewayMiddleware {
  return async (ctx) => {
    const key = ctx.state.key;
    if (!key) throw ERR.internal();
    const raw = ctx.path.slice('/v1/generations/'.length);
    const id = decodeSegment(raw);
    if (id === undefined) throw ERR.generationNotFound(raw);
    await settlements.written({ requestId: id });
    const row = await store.generation(id, key.id);
    if (!row) throw ERR.generationNotFound(id);
    ctx.body = generationBody(row);
  };
}

export function generationBody(row: LedgerRow): Record<string, unknown> {
  return {
    id: row.requestId,
    key: row.keyName,
    model: row.model,
    provider: row.provider,
    upstream_model: row.upstreamModel,
    endpoint: row.endpoint,
    route: row.route,
    status: row.status,
    outcome: row.outcome,
    estimated: row.estimated,
    tokens: usageFields(row.usage),
    cost_usd: picoToUsdNumber(row.cost),
    charged_usd: picoToUsdNumber(row.charged),
    uncollected_usd: picoToUsdNumber(row.uncollected),
    started_at: row.startedAt.toISOString(),
    first_byte_ms: row.firstByteMs,
    duration_ms: row.durationMs,
  };
}

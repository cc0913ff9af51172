import Router from '@koa/router';
import { koaBody } from 'koa-body';
import { z } from 'zod';
import { KeyRequestError } from '../../auth/issue-key.ts';
import { AdminActions } from '../../audit/admin-actions.ts';
import { httpActor } from '../../audit/actor.ts';
import { presentsAdminKey } from '../../auth/admin-key.ts';
import { balanceAmount, picoToUsdNumber } from '../../billing/money.ts';
import { ERR, GatewayError } from '../../errors.ts';
import { decodeSegment } from '../path-segment.ts';
import { KeyNotFoundError, type AuditRow, type KeyRecord, type Store } from '../../store/store.ts';
import { flattenIssues, issueMessage } from '../../validation/issues.ts';
import type { GatewayContext, GatewayState } from '../state.ts';
import { generationBody } from './billing.ts';
import { withAllHolds, type Holds } from '../../billing/holds.ts';

/**
 * /admin/*: what the `junction keys` CLI does, over HTTP, plus usage queries (issue #4) and the
 * audit of admin actions (issue #16). Off unless `auth.admin_key` is set; that key is never a user
 * key, and a user key never opens it.
 * Admin bodies are small JSON documents, read with koa-body (unlike the model endpoints, which keep
 * the raw bytes for passthrough).
 */
export function createAdminRouter(store: Store, holds: Holds, keyPrefix: string, adminKeySha256: string): Router<GatewayState> {
  // held_usd counts holds wherever they live: in Redis they are not in the store's rows (issue #12).
  const withHolds = (keys: readonly KeyRecord[]): Promise<KeyRecord[]> => withAllHolds(keys, (ids) => holds.heldOutsideStore(ids));
  const one = async (key: KeyRecord): Promise<Record<string, unknown>> => keyBody((await withHolds([key]))[0] ?? key);
  const adminDigest = Buffer.from(adminKeySha256, 'hex');
  // Every write below leaves an audit row: who (the admin key, from this address), what, when.
  const actions = new AdminActions(store, keyPrefix);
  const router = new Router<GatewayState>({ prefix: '/admin' });
  router.use(async (ctx, next) => {
    if (!presentsAdminKey(ctx, adminDigest)) throw ERR.invalidKey();
    await next();
  });
  router.use(
    koaBody({
      json: true,
      jsonLimit: '64kb',
      urlencoded: false,
      text: false,
      multipart: false,
      onError: () => {
        throw ERR.invalidJson('the admin API takes JSON bodies');
      },
    }),
  );

  router.get('/keys', async (ctx) => {
    ctx.body = { data: (await withHolds(await store.listKeys())).map(keyBody) };
  });
  router.post('/keys', async (ctx) => {
    const spec = parse(newKeySchema, ctx.request.body);
    const { key, record } = await mapped('name', () =>
      actions.createKey({
        name: spec.name,
        balance: spec.balance_usd === undefined ? null : usd(spec.balance_usd, 'balance_usd'),
        models: spec.models ?? null,
        limits: {
          rpm: spec.limits?.rpm ?? spec.rpm ?? null,
          tpm: spec.limits?.tpm ?? null,
          concurrency: spec.limits?.concurrency ?? null,
        },
      }, httpActor(ctx, 'api')),
    );
    ctx.status = 201;
    // The key is in this response and nowhere else, ever.
    ctx.body = { ...(await one(record)), key };
  });
  router.post('/keys/:name/topup', async (ctx) => {
    const { usd: amount } = parse(topUpSchema, ctx.request.body);
    ctx.body = await one(await mapped('usd', () => actions.topUp(nameOf(ctx), usd(amount, 'usd'), httpActor(ctx, 'api'))));
  });
  router.post('/keys/:name/disable', async (ctx) => {
    ctx.body = await one(await mapped('name', () => actions.setDisabled(nameOf(ctx), true, httpActor(ctx, 'api'))));
  });
  router.post('/keys/:name/enable', async (ctx) => {
    ctx.body = await one(await mapped('name', () => actions.setDisabled(nameOf(ctx), false, httpActor(ctx, 'api'))));
  });
  router.get('/usage', async (ctx) => {
    const query = parse(usageQuerySchema, ctx.query);
    const keyId = query.key === undefined ? undefined : (await store.listKeys()).find((k) => k.name === query.key)?.id;
    if (query.key !== undefined && keyId === undefined) throw ERR.adminNotFound(`no key named "${query.key}"`);
    const rows = await store.usage({
      limit: query.limit,
      ...(keyId !== undefined && { keyId }),
      ...(query.since !== undefined && { since: new Date(query.since) }),
      ...(query.until !== undefined && { until: new Date(query.until) }),
    });
    ctx.body = { data: rows.map(generationBody) };
  });
  router.get('/audit', async (ctx) => {
    const { limit } = parse(auditQuerySchema, ctx.query);
    ctx.body = { data: (await store.auditLog(limit)).map(auditBody) };
  });
  return router;
}

const amount = z.union([z.number().positive(), z.string().regex(/^\d+(\.\d+)?$/, 'must be an amount in USD')]);
const limit = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const newKeySchema = z
  .strictObject({
    name: z.string().min(1).max(64),
    balance_usd: amount.optional(),
    models: z.array(z.string().min(1)).min(1).optional(),
    limits: z.strictObject({ rpm: limit.optional(), tpm: limit.optional(), concurrency: limit.optional() }).optional(),
    /** The pre-`limits` spelling of limits.rpm, still accepted. */
    rpm: limit.optional(),
  })
  .refine((spec) => spec.rpm === undefined || spec.limits?.rpm === undefined || spec.rpm === spec.limits.rpm, {
    message: 'rpm and limits.rpm disagree: send limits.rpm only',
    path: ['rpm'],
  });
const topUpSchema = z.strictObject({ usd: amount });
const usageQuerySchema = z.looseObject({
  key: z.string().min(1).optional(),
  since: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  until: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});

const auditQuerySchema = z.looseObject({ limit: z.coerce.number().int().min(1).max(10_000).default(100) });

function auditBody(row: AuditRow): Record<string, unknown> {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: row.actor,
    channel: row.channel,
    client: row.client,
    action: row.action,
    key: row.keyName,
    amount_usd: row.amount === null ? null : picoToUsdNumber(row.amount),
    detail: row.detail,
  };
}

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value ?? {}, { error: issueMessage });
  if (result.success) return result.data;
  const issue = flattenIssues(result.error)[0];
  const field = issue?.path.map(String).join('.') || '(body)';
  throw ERR.invalidField(`${field}: ${issue?.message ?? 'invalid'}`, field);
}

function usd(value: number | string, field: string): bigint {
  const amount = balanceAmount(value);
  if (!amount.ok) throw ERR.invalidField(`${field}: ${amount.problem}`, field);
  return amount.pico;
}

/** The :name path segment. */
function nameOf(ctx: GatewayContext): string {
  const raw = String((ctx as unknown as { params: Record<string, string> }).params['name']);
  const name = decodeSegment(raw);
  if (name === undefined) throw ERR.adminNotFound(`no key named "${raw}"`);
  return name;
}

/** Store errors as the admin API's answers: an unknown key is 404, a refused request 400 naming `field`. */
async function mapped<T>(field: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (err instanceof KeyNotFoundError) throw ERR.adminNotFound(err.message);
    if (err instanceof KeyRequestError || err instanceof RangeError) throw ERR.invalidField(`${field}: ${err.message}`, field);
    throw err;
  }
}

function keyBody(key: KeyRecord): Record<string, unknown> {
  return {
    name: key.name,
    prefix: key.prefix,
    source: key.source,
    balance_usd: key.balance === null ? null : picoToUsdNumber(key.balance),
    held_usd: picoToUsdNumber(key.held),
    spent_usd: picoToUsdNumber(key.spent),
    requests: key.requests,
    models: key.models,
    limits: key.limits,
    // limits.rpm under its name from before `limits`, for existing callers.
    rpm: key.limits.rpm,
    status: key.disabled ? 'disabled' : 'active',
  };
}

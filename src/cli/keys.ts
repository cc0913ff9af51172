import { parseArgs } from 'node:util';
import { balanceAmount, picoToUsdText } from '../billing/money.ts';
import { AdminActions } from '../audit/admin-actions.ts';
import { cliActor } from '../audit/actor.ts';
import { loadStoreConfig, type StoreConfig } from '../config/load.ts';
import { withAllHolds } from '../billing/holds.ts';
import { redisHeld } from '../billing/redis-holds.ts';
import { closeRedis, connectRedis } from '../store/redis-connection.ts';
import { openStore } from '../store/open.ts';
import type { KeyRecord, Store } from '../store/store.ts';
import { UsageError } from './usage-error.ts';
import { PROCESS_OUTPUT, type CliOutput } from './output.ts';

/**
 * `junction keys create|list|topup|disable|enable --config <file>`: keys kept in the deployment's store.
 * A running gateway sees every change within a second (src/auth/key-store.ts). It reads only what
 * it uses from the file, the store, Redis and the key prefix, so the providers' secrets need not be
 * set in the operator's shell (issue #12).
 */
export async function keysCommand(args: readonly string[], io: CliOutput = PROCESS_OUTPUT): Promise<number> {
  const [action, ...rest] = args;
  const { values } = parseArgs({
    args: [...rest],
    options: {
      config: { type: 'string', short: 'c' },
      name: { type: 'string' },
      'balance-usd': { type: 'string' },
      usd: { type: 'string' },
      models: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      concurrency: { type: 'string' },
    },
  });
  if (values.config === undefined) throw new UsageError(`keys ${action ?? ''} needs --config <file>`);
  const config = loadStoreConfig(values.config);
  const store = await openStore(config.storage.url);
  // Writes leave audit rows naming the OS user and host, as the admin API's name its client (issue #16).
  const actions = new AdminActions(store, config.auth.keyPrefix);
  try {
    switch (action) {
      case 'create':
        return await create(actions, values, io);
      case 'list':
        return await list(store, config, io);
      case 'topup': {
        const key = await actions.topUp(required(values.name, '--name'), usdAmount(required(values.usd, '--usd'), '--usd'), cliActor());
        io.out(`${key.name}: balance ${usdText(key.balance)}\n`);
        return 0;
      }
      case 'disable': {
        const key = await actions.setDisabled(required(values.name, '--name'), true, cliActor());
        io.out(`${key.name}: disabled\n`);
        return 0;
      }
      case 'enable': {
        const key = await actions.setDisabled(required(values.name, '--name'), false, cliActor());
        io.out(`${key.name}: active\n`);
        return 0;
      }
      default:
        throw new UsageError(action === undefined ? 'keys needs an action' : `unknown keys action "${action}"`);
    }
  } finally {
    await store.close();
  }
}

type CreateFlags = { [flag in 'name' | 'balance-usd' | 'models' | 'rpm' | 'tpm' | 'concurrency']?: string | undefined };

async function create(actions: AdminActions, values: CreateFlags, io: CliOutput): Promise<number> {
  const limits = {
    rpm: positiveInt(values.rpm, '--rpm'),
    tpm: positiveInt(values.tpm, '--tpm'),
    concurrency: positiveInt(values.concurrency, '--concurrency'),
  };
  const models = values.models === undefined ? [] : values.models.split(',').map((m) => m.trim()).filter((m) => m !== '');
  const { key, record } = await actions.createKey({
    name: required(values.name, '--name'),
    balance: values['balance-usd'] === undefined ? null : usdAmount(values['balance-usd'], '--balance-usd'),
    models: models.length === 0 ? null : models,
    limits,
  }, cliActor());
  // The key itself goes to stdout, alone, so it can be captured; it is shown this once only.
  io.out(`${key}\n`);
  io.err(`created key "${record.name}" (balance ${usdText(record.balance)}); store it now: it cannot be shown again\n`);
  return 0;
}

async function list(store: Store, config: StoreConfig, io: CliOutput): Promise<number> {
  const keys = await withAllHolds(await store.listKeys(), (ids) => heldInRedis(config, ids));
  const rows = keys.map((k) => [
    k.name, `${k.prefix}…`, usdText(k.balance), `$${picoToUsdText(k.held)}`, usdText(k.spent), String(k.requests), limitsText(k), status(k),
  ]);
  const header = ['NAME', 'PREFIX', 'BALANCE', 'HELD', 'SPENT', 'REQUESTS', 'LIMITS', 'STATUS'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  for (const row of [header, ...rows]) io.out(`${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}\n`);
  return 0;
}

/** With `redis` set, holds live there, not in the store (issue #12); Redis must answer, as for serve. */
async function heldInRedis(config: StoreConfig, keyIds: readonly number[]): Promise<ReadonlyMap<number, bigint>> {
  if (config.redis === null) return new Map();
  const redis = await connectRedis(config.redis.url);
  try {
    return await redisHeld(redis, config.redis.prefix, keyIds);
  } finally {
    await closeRedis(redis);
  }
}

const status = (key: KeyRecord): string => (key.disabled ? 'disabled' : 'active');

/** `rpm=60,tpm=100000,concurrency=4`, only the limits the key sets; `-` for none (defaults apply). */
function limitsText(key: KeyRecord): string {
  const set = (['rpm', 'tpm', 'concurrency'] as const).filter((name) => key.limits[name] !== null);
  return set.length === 0 ? '-' : set.map((name) => `${name}=${key.limits[name]}`).join(',');
}
const usdText = (pico: bigint | null): string => (pico === null ? 'unlimited' : `$${picoToUsdText(pico)}`);

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required`);
  return value;
}

function positiveInt(text: string | undefined, flag: string): number | null {
  if (text === undefined) return null;
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} must be a positive integer`);
  }
  return Number(text);
}

function usdAmount(text: string, flag: string): bigint {
  const amount = balanceAmount(text);
  if (!amount.ok) throw new UsageError(`${flag} ${amount.problem}`);
  return amount.pico;
}

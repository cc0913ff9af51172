import { ERR, type GatewayError } from '../errors.ts';

/**
 * A PluginRequestError, recognised by shape rather than instanceof: a plugin installed as a
 * package may carry its own copy of the contract module. Only 4xx statuses count as the caller's.
 */
export function pluginRefusalOf(err: unknown): GatewayError | null {
  if (!(err instanceof Error) || err.name !== 'PluginRequestError') return null;
  const { status, param } = err as Error & { status?: unknown; param?: unknown };
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  return ERR.pluginRefused(status, err.message, typeof param === 'string' ? param : undefined);
}

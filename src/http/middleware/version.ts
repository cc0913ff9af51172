import { ERR } from '../../errors.ts';
import type { GatewayMiddleware } from '../state.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Requires `anthropic-version` on the Messages endpoints, as the Anthropic API does (protocol.md
 * §A.1). Any real date from `minimum` on is accepted: the 1.x SDK sends 2026-10-21, the 0.x SDK
 * and Claude Code 2023-06-01. Native routes forward the header unchanged.
 */
export function createVersionCheck(minimum = '2023-06-01'): GatewayMiddleware {
  return async (ctx, next) => {
    const version = ctx.get('anthropic-version').trim();
    if (version === '') throw ERR.versionMissing();
    if (!isRealDate(version) || version < minimum) throw ERR.versionInvalid(version);
    await next();
  };
}

function isRealDate(text: string): boolean {
  if (!DATE.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

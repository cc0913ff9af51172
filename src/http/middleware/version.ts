import { ERR } from '../../errors.ts';
import type { GatewayMiddleware } from '../state.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Requires `anthropic-version` on the Messages endpoints, as the Anthropic API does (protocol.md
 * §A.1). Any real date from `minimum` on is accepted: the 1.x SDK sends 2026-10-21, the 0.x SDK
 * and Claude Code 2023-06-01. Native routes forward the header unchanged.
 */
export function createVersionCheck(minimum = '2023-06-01'): GatewayMiddleware {
  // Clients send one or two values; each is checked once, not with a Date per request (issue #17).
  // Only accepted values are kept, and only a few, so a client cannot grow the set.
  const accepted = new Set<string>();
  return (ctx, next) => {
    const sent = ctx.state.headers['anthropic-version'];
    const version = (typeof sent === 'string' ? sent : (sent?.[0] ?? '')).trim();
    if (!accepted.has(version)) {
      if (version === '') throw ERR.versionMissing();
      if (!isRealDate(version) || version < minimum) throw ERR.versionInvalid(version);
      if (accepted.size < 16) accepted.add(version);
    }
    return next();
  };
}

function isRealDate(text: string): boolean {
  if (!DATE.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

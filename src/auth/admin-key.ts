import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { sha256 } from './key-store.ts';

/**
 * True when the request presents the admin key (`x-api-key` or a bearer token), compared by its
 * SHA-256 in constant time: /admin/* and, by default, /metrics (issue #16).
 */
export function presentsAdminKey(ctx: Pick<Context, 'get'>, adminDigest: Buffer): boolean {
  return isAdminKey(ctx.get('x-api-key') || /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1] || '', adminDigest);
}

/** The same check for a key typed elsewhere (the dashboard's login form). */
export function isAdminKey(presented: string, adminDigest: Buffer): boolean {
  return presented !== '' && timingSafeEqual(sha256(presented), adminDigest);
}

import { hostname, userInfo } from 'node:os';
import type { Context } from 'koa';
import type { AuditActor } from '../store/store.ts';

/**
 * Who acts over HTTP: whoever holds the admin key (it names nobody more precisely), on a channel,
 * from the socket's address. `app.proxy` is off, so a client cannot write its own address with
 * X-Forwarded-For; behind a proxy this is the proxy's address.
 */
export function httpActor(ctx: Pick<Context, 'ip'>, channel: 'api' | 'dashboard'): AuditActor {
  return { actor: 'admin', channel, client: ctx.ip || null };
}

/** Who acts from `junction keys`: the OS user running it, on this host. */
export function cliActor(): AuditActor {
  return { actor: osUser(), channel: 'cli', client: hostname() };
}

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    // A container user with no passwd entry has a uid and nothing else.
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

import type { Context } from 'koa';
import { ERR, GatewayError } from '../errors.ts';
import type { GatewayContext, GatewayMiddleware } from '../http/state.ts';
import { errorPage } from './layout.ts';
import { SESSION_COOKIE, type DashboardSessions } from './session.ts';

/**
 * No script runs on the dashboard and nothing loads from elsewhere; it is never framed. The
 * referrer policy is same-origin, not no-referrer: under no-referrer a browser sends
 * `Origin: null` with a form, and the same-origin check below would refuse the dashboard's own forms.
 */
const HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  // Pages show balances, and once a new key: nothing is kept by the browser or a proxy.
  'cache-control': 'no-store',
} as const;

/**
 * First on every dashboard route: its headers, and its errors as an HTML page rather than the API's
 * JSON. Errors that are not the gateway's own go on to the error handler, which logs them.
 */
export const dashboardFrame: GatewayMiddleware = async (ctx, next) => {
  ctx.set(HEADERS);
  try {
    await next();
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    ctx.state.outcome.error ??= err.code;
    ctx.status = err.status;
    ctx.type = 'html';
    ctx.body = errorPage(err);
  }
};

/**
 * CSRF (issue #16): besides the SameSite=Strict cookie, a form must come from the dashboard's own
 * origin. `Sec-Fetch-Site` decides when the browser sends it (all current ones do); else `Origin`
 * must name this host. The host only, not the scheme: behind a proxy that ends TLS, the browser's
 * origin is https while this server sees http. A POST saying neither is refused: every browser
 * sends at least one, and the dashboard has no other clients.
 */
export const sameOrigin: GatewayMiddleware = async (ctx, next) => {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !isSameOrigin(ctx)) throw ERR.dashboardCrossSite();
  await next();
};

export function isSameOrigin(ctx: Pick<Context, 'get' | 'host'>): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site !== '') return site === 'same-origin';
  const origin = ctx.get('origin');
  if (origin === '' || origin === 'null') return false;
  try {
    return new URL(origin).host === ctx.host;
  } catch {
    return false;
  }
}

/** Pages behind a login: without a valid session, the login page (and back here after it). */
export function requireSession(sessions: DashboardSessions): GatewayMiddleware {
  return async (ctx, next) => {
    if (sessions.isValid(ctx.cookies.get(SESSION_COOKIE), Date.now())) return next();
    ctx.status = 303;
    ctx.redirect(ctx.method === 'GET' ? `/dashboard/login?next=${encodeURIComponent(ctx.originalUrl)}` : '/dashboard/login');
  };
}

/**
 * Was the page served over TLS? `ctx.secure` only sees this server's own socket (`app.proxy` is
 * off); a browser's https `Origin` says the same through a proxy that ends TLS, and a cookie
 * marked Secure for it can only be stricter.
 */
export function servedOverTls(ctx: GatewayContext): boolean {
  return ctx.secure || ctx.get('origin').startsWith('https://');
}

/** Where to go after logging in: a dashboard page only, never another site. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/dashboard\/[\w/-]*(\?[\w=&%.+-]*)?$/.test(next) && !next.includes('//') ? next : '/dashboard/keys';
}

import Router from '@koa/router';
import type { AppParts } from '../app.ts';
import { AdminActions } from '../audit/admin-actions.ts';
import type { GatewayState } from '../http/state.ts';
import { createAuditPage } from './audit-page.ts';
import { createCataloguePage } from './catalogue-page.ts';
import { formBody } from './forms.ts';
import { dashboardFrame, requireSession, sameOrigin } from './guard.ts';
import { createHealthPage } from './health-page.ts';
import { createKeyActions } from './key-actions.ts';
import { createKeysPage } from './keys-page.ts';
import { createLogin } from './login-page.ts';
import { createRequestsPage } from './requests-page.ts';
import { DashboardSessions } from './session.ts';
import { ICON, STYLE } from './assets.ts';
import { createUsagePage } from './usage-page.ts';

export type DashboardParts = Pick<AppParts, 'config' | 'store' | 'holds' | 'catalogue' | 'providers' | 'breakers' | 'settlements' | 'instanceId' | 'log'>;

/**
 * /dashboard (issue #16): server-rendered pages behind the admin key, mounted only when
 * `auth.admin_key` is set (as /admin). No script, no framework, no build step: HTML from template
 * functions (html.ts), charts as inline SVG (charts.ts), one stylesheet. Every route has the
 * dashboard's headers and HTML errors, and every POST must come from the dashboard's own origin;
 * every page but the login needs a session (session.ts).
 */
export function createDashboardRouter(parts: DashboardParts, adminKeySha256: string): Router<GatewayState> {
  const sessions = new DashboardSessions(adminKeySha256);
  const { store, holds } = parts;
  const open = [dashboardFrame, sameOrigin, formBody];
  const closed = [...open, requireSession(sessions)];
  const login = createLogin({ sessions, adminDigest: Buffer.from(adminKeySha256, 'hex'), store, log: parts.log });
  const keys = createKeyActions({ store, holds, actions: new AdminActions(store, parts.config.auth.keyPrefix) });

  const router = new Router<GatewayState>({ prefix: '/dashboard' });
  router.get('/style.css', async (ctx) => {
    ctx.type = 'css';
    ctx.set('cache-control', 'public, max-age=3600');
    ctx.body = STYLE;
  });
  router.get('/icon.svg', async (ctx) => {
    ctx.type = 'image/svg+xml';
    ctx.set('cache-control', 'public, max-age=3600');
    ctx.body = ICON;
  });
  router.get('/login', ...open, login.show);
  router.post('/login', ...open, login.submit);
  router.post('/logout', ...closed, login.logout);
  router.get('/', ...closed, async (ctx) => ctx.redirect('/dashboard/keys'));
  router.get('/keys', ...closed, createKeysPage({ store, holds }));
  router.post('/keys', ...closed, keys.create);
  router.post('/keys/topup', ...closed, keys.topUp);
  router.post('/keys/disable', ...closed, keys.disable);
  router.post('/keys/enable', ...closed, keys.enable);
  router.get('/usage', ...closed, createUsagePage(store));
  router.get('/requests', ...closed, createRequestsPage(store));
  router.get('/catalogue', ...closed, createCataloguePage(parts.catalogue));
  router.get('/health', ...closed, createHealthPage(parts));
  router.get('/audit', ...closed, createAuditPage(store));
  return router;
}

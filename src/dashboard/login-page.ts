import { isAdminKey } from '../auth/admin-key.ts';
import { httpActor } from '../audit/actor.ts';
import { ERR } from '../errors.ts';
import type { GatewayMiddleware } from '../http/state.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/store.ts';
import { formFields, queryText, redirect } from './forms.ts';
import { safeNext, servedOverTls } from './guard.ts';
import { html } from './html.ts';
import { page, type Notice } from './layout.ts';
import { endedSessionCookie, SESSION_COOKIE, sessionCookie, type DashboardSessions } from './session.ts';

export interface LoginDeps {
  readonly sessions: DashboardSessions;
  readonly adminDigest: Buffer;
  readonly store: Store;
  readonly log: Logger;
}

/** GET and POST /dashboard/login, POST /dashboard/logout. */
export function createLogin(deps: LoginDeps): { show: GatewayMiddleware; submit: GatewayMiddleware; logout: GatewayMiddleware } {
  return {
    async show(ctx) {
      const next = safeNext(queryText(ctx, 'next'));
      if (deps.sessions.isValid(ctx.cookies.get(SESSION_COOKIE), Date.now())) return ctx.redirect(next);
      ctx.type = 'html';
      ctx.body = loginPage(next);
    },
    async submit(ctx) {
      const fields = formFields(ctx);
      const next = safeNext(fields['next']);
      // Compared by SHA-256 in constant time, as the admin API does; the key is kept nowhere.
      if (!isAdminKey(fields['admin_key'] ?? '', deps.adminDigest)) {
        deps.log.warn({ req_id: ctx.state.requestId, client: ctx.ip }, 'dashboard login refused: not the admin key');
        const refused = ERR.dashboardLoginFailed();
        ctx.state.outcome.error = refused.code;
        ctx.status = refused.status;
        ctx.type = 'html';
        ctx.body = loginPage(next, { kind: 'error', text: refused.message });
        return;
      }
      ctx.set('set-cookie', sessionCookie(deps.sessions.issue(Date.now()), servedOverTls(ctx)));
      await deps.store.recordAudit({ ...httpActor(ctx, 'dashboard'), action: 'session.login', keyName: null, amount: null, detail: null });
      redirect(ctx, next);
    },
    async logout(ctx) {
      ctx.set('set-cookie', endedSessionCookie(servedOverTls(ctx)));
      await deps.store.recordAudit({ ...httpActor(ctx, 'dashboard'), action: 'session.logout', keyName: null, amount: null, detail: null });
      redirect(ctx, '/dashboard/login');
    },
  };
}

function loginPage(next: string, notice?: Notice): string {
  return page({
    title: 'Sign in',
    notice,
    body: html`<section class="login">
<form method="post" action="/dashboard/login">
  <label>Admin key <input type="password" name="admin_key" autocomplete="current-password" required autofocus></label>
  <input type="hidden" name="next" value="${next}">
  <button class="primary">Sign in</button>
</form>
<p class="muted">The key set as <code>auth.admin_key</code>. The session lasts 12 hours.</p>
</section>`,
  });
}

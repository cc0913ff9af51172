import type { GatewayMiddleware } from '../http/state.ts';
import type { AuditRow, Store } from '../store/store.ts';
import { time, usd } from './format.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

const LATEST = 200;

/** GET /dashboard/audit: the latest admin actions from every channel (API, dashboard, CLI). */
export function createAuditPage(store: Store): GatewayMiddleware {
  return async (ctx) => {
    const rows = await store.auditLog(LATEST);
    ctx.type = 'html';
    ctx.body = page({ title: 'Audit', active: 'audit', body: html`<p class="muted">The latest ${LATEST} admin actions, newest first (UTC). Also at <code>GET /admin/audit</code>.</p>
<div class="scroll"><table id="audit">
<thead><tr><th>Time</th><th>Actor</th><th>Channel</th><th>Client</th><th>Action</th><th>Key</th><th class="num">Amount</th><th>Detail</th></tr></thead>
<tbody>${rows.map(row)}</tbody>
</table></div>` });
  };
}

function row(r: AuditRow) {
  return html`<tr><td class="when">${time(r.at)}</td><td>${r.actor}</td><td>${r.channel}</td><td class="mono">${r.client ?? '–'}</td><td>${r.action}</td>
<td>${r.keyName ?? '–'}</td><td class="num">${r.amount === null ? '–' : usd(r.amount)}</td><td>${r.detail ?? ''}</td></tr>`;
}

import type { GatewayMiddleware } from '../http/state.ts';
import type { LedgerRow, Store } from '../store/store.ts';
import { queryText } from './forms.ts';
import { count, ms, time, usd } from './format.ts';
import { html } from './html.ts';
import { page, type Notice } from './layout.ts';

const LATEST = 100;

/**
 * GET /dashboard/requests: the latest ledger rows, or one by `?id=` (the `x-request-id` a client
 * got), or one key's by `?key=`. Requests refused before the ledger (a bad key) have no row.
 */
export function createRequestsPage(store: Store): GatewayMiddleware {
  return async (ctx) => {
    const id = queryText(ctx, 'id');
    const keyName = queryText(ctx, 'key');
    const keyId = keyName === '' ? undefined : (await store.listKeys()).find((k) => k.name === keyName)?.id;
    let rows: LedgerRow[] = [];
    let notice: Notice | undefined;
    if (keyName !== '' && keyId === undefined) notice = { kind: 'error', text: `No key named "${keyName}".` };
    else rows = await store.usage({ limit: id === '' ? LATEST : 1, ...(id !== '' && { requestId: id }), ...(keyId !== undefined && { keyId }) });
    if (id !== '' && rows.length === 0 && !notice) notice = { kind: 'error', text: `No request "${id}" in the ledger.` };
    ctx.type = 'html';
    ctx.body = page({ title: 'Requests', active: 'requests', notice, body: html`<form class="inline" method="get" action="/dashboard/requests">
  <input name="id" value="${id}" placeholder="req_…" size="40" aria-label="Request id">
  <input name="key" value="${keyName}" placeholder="key name" aria-label="Key name">
  <button>Search</button> <a href="/dashboard/requests">Latest</a>
</form>
<p class="muted">${id === '' ? `The latest ${LATEST}, newest first.` : ''}</p>
<div class="scroll"><table id="requests">
<thead><tr><th>Time (UTC)</th><th>Request</th><th>Key</th><th>Model / provider → upstream</th><th>Endpoint / route</th><th>Outcome</th>
<th class="num">Tokens in → out</th><th class="num">Cost</th><th class="num">Duration / first byte</th></tr></thead>
<tbody>${rows.map(row)}</tbody>
</table></div>` });
  };
}

function row(r: LedgerRow) {
  const tone = r.outcome === 'ok' ? 'ok' : r.status >= 500 || r.status === 0 ? 'bad' : 'warn';
  return html`<tr data-request="${r.requestId}">
<td class="when">${time(r.startedAt).slice(5)}</td><td class="mono">${r.requestId}</td><td>${r.keyName}</td>
<td>${r.model ?? '–'}<div class="sub">${r.provider ?? '–'}${r.upstreamModel === null ? '' : ` → ${r.upstreamModel}`}</div></td>
<td>${r.endpoint ?? '–'}<div class="sub">${r.route ?? '–'}</div></td>
<td><span class="badge ${tone}">${r.status} ${r.outcome}</span></td>
<td class="num">${count(r.usage.input)} → ${count(r.usage.output)}${
    r.usage.cacheRead + r.usage.cacheWrite > 0 ? html`<div class="sub">cache read ${count(r.usage.cacheRead)}, written ${count(r.usage.cacheWrite)}</div>` : ''}</td>
<td class="num">${usd(r.charged)}${r.estimated ? html` <span class="muted" title="estimated">~</span>` : ''}${r.uncollected > 0n ? html` <span class="badge warn" title="uncollected">+${usd(r.uncollected)}</span>` : ''}</td>
<td class="num">${ms(r.durationMs)}<div class="sub">${ms(r.firstByteMs)}</div></td>
</tr>`;
}

import { withAllHolds, type Holds } from '../billing/holds.ts';
import type { GatewayContext, GatewayMiddleware } from '../http/state.ts';
import type { KeyRecord, Store } from '../store/store.ts';
import { queryText } from './forms.ts';
import { count, usd } from './format.ts';
import { html } from './html.ts';
import { page, type Notice } from './layout.ts';

export interface KeysDeps {
  readonly store: Store;
  readonly holds: Holds;
}

const DONE: Readonly<Record<string, string>> = { topup: 'Topped up', disable: 'Disabled', enable: 'Enabled' };

/** GET /dashboard/keys; after an action, `?done=topup&key=alice` says what it did. */
export function createKeysPage(deps: KeysDeps): GatewayMiddleware {
  return async (ctx) => {
    const done = DONE[queryText(ctx, 'done')];
    await renderKeys(ctx, deps, done ? { kind: 'ok', text: `${done} ${queryText(ctx, 'key')}.` } : undefined);
  };
}

/** The keys page, with a notice: also the answer to a refused form, or to a key just made. */
export async function renderKeys(ctx: GatewayContext, deps: KeysDeps, notice?: Notice, status = 200): Promise<void> {
  // Held counts holds wherever they live: in Redis they are not in the store's rows (issue #12).
  const keys = await withAllHolds(await deps.store.listKeys(), (ids) => deps.holds.heldOutsideStore(ids));
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = page({ title: 'Keys', active: 'keys', notice, body: html`${createForm()}
<div class="scroll"><table>
<thead><tr><th>Name</th><th>Prefix</th><th>Source</th><th class="num">Balance</th><th class="num">Held</th><th class="num">Spent</th><th class="num">Requests</th><th>Models</th><th>Limits</th><th>Status</th><th>Top up</th><th></th></tr></thead>
<tbody>${keys.map(keyRow)}</tbody>
</table></div>` });
}

function keyRow(key: KeyRecord) {
  const limits = (['rpm', 'tpm', 'concurrency'] as const).filter((l) => key.limits[l] !== null).map((l) => `${l} ${key.limits[l]}`);
  return html`<tr data-key="${key.name}">
<td><b>${key.name}</b></td><td class="mono">${key.prefix}…</td><td>${key.source}</td>
<td class="num">${usd(key.balance)}</td><td class="num">${usd(key.held)}</td><td class="num">${usd(key.spent)}</td><td class="num">${count(key.requests)}</td>
<td>${key.models === null ? html`<span class="muted">all</span>` : key.models.join(', ')}</td>
<td>${limits.length === 0 ? html`<span class="muted">defaults</span>` : limits.join(', ')}</td>
<td>${key.disabled ? html`<span class="badge bad">disabled</span>` : html`<span class="badge ok">active</span>`}</td>
<td>${key.balance === null ? html`<span class="muted">unlimited</span>` : html`<form class="inline" method="post" action="/dashboard/keys/topup">
  <input type="hidden" name="name" value="${key.name}"><input class="amount" name="usd" inputmode="decimal" placeholder="USD" required aria-label="Top up ${key.name} by (USD)"><button>Top up</button></form>`}</td>
<td><form class="inline" method="post" action="/dashboard/keys/${key.disabled ? 'enable' : 'disable'}"><input type="hidden" name="name" value="${key.name}"><button>${key.disabled ? 'Enable' : 'Disable'}</button></form></td>
</tr>`;
}

function createForm() {
  return html`<section><h2>New key</h2>
<form class="grid" method="post" action="/dashboard/keys">
  <label>Name <input name="name" required maxlength="64"></label>
  <label>Balance (USD; empty: unlimited) <input name="balance_usd" inputmode="decimal"></label>
  <label>Models (globs, comma-separated; empty: all) <input name="models" placeholder="claude-*, demo"></label>
  <label>Requests per minute <input name="rpm" inputmode="numeric"></label>
  <label>Tokens per minute <input name="tpm" inputmode="numeric"></label>
  <label>Concurrent requests <input name="concurrency" inputmode="numeric"></label>
  <button class="primary">Create key</button>
</form></section>`;
}

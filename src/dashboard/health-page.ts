import type { Settlements } from '../billing/settlements.ts';
import type { GatewayMiddleware } from '../http/state.ts';
import type { LoadedProvider } from '../plugin-host/loader.ts';
import type { Breakers } from '../routing/breaker.ts';
import type { SeriesPoint, Store } from '../store/store.ts';
import { count, ms, percent } from './format.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

export interface HealthDeps {
  readonly store: Store;
  readonly providers: ReadonlyMap<string, LoadedProvider>;
  readonly breakers: Breakers;
  readonly settlements: Settlements;
  readonly instanceId: string;
}

const WINDOWS = [['15 min', 15 * 60_000], ['1 hour', 60 * 60_000]] as const;

/**
 * GET /dashboard/health: each provider's recent failures from the ledger (shared by every worker
 * and instance), and this process's circuit breakers and requests in flight.
 */
export function createHealthPage(deps: HealthDeps): GatewayMiddleware {
  return async (ctx) => {
    const now = Date.now();
    const points = await deps.store.usageSeries({ since: new Date(now - 60 * 60_000), bucketSeconds: 60, by: 'provider' });
    const within = (provider: string, windowMs: number): { requests: number; failed: number } =>
      points
        .filter((p: SeriesPoint) => p.group === provider && p.bucket.getTime() >= now - windowMs)
        .reduce((t, p) => ({ requests: t.requests + p.requests, failed: t.failed + p.failed }), { requests: 0, failed: 0 });
    const routes = deps.breakers.routes();
    const providerRows = [...deps.providers.values()].map((provider) => {
      const id = provider.config.id;
      const open = routes.filter((r) => r.provider === id && r.state !== 'closed').length;
      const missing = provider.config.missingKeyVariables;
      const recent = WINDOWS.map(([, windowMs]) => within(id, windowMs));
      return html`<tr data-provider="${id}"><td><b>${id}</b></td><td>${provider.pluginName}</td>
<td>${missing === null ? html`<span class="badge ok">set</span>` : html`<span class="badge bad">missing</span> <span class="muted">${missing.join(', ')}</span>`}</td>
<td>${open === 0 ? html`<span class="badge ok">all closed</span>` : html`<span class="badge bad">${open} open</span>`}</td>
${recent.map((r) => html`<td class="num">${count(r.requests)}</td><td class="num">${count(r.failed)}</td><td class="num">${percent(r.failed, r.requests)}</td>`)}</tr>`;
    });
    const breakerRows = routes.map(
      (r) => html`<tr><td>${r.provider}</td><td>${r.upstreamModel}</td><td><span class="badge ${r.state === 'closed' ? 'ok' : r.state === 'open' ? 'bad' : 'warn'}">${r.state}</span></td>
<td class="num">${r.state === 'closed' ? '–' : ms(r.retryInMs)}</td></tr>`,
    );
    ctx.type = 'html';
    ctx.body = page({ title: 'Health', active: 'health', body: html`<div class="totals">
  <div>Requests in flight<b>${count(deps.settlements.inFlight)}</b></div><div>Settlements waiting to retry<b>${count(deps.settlements.pending)}</b></div>
  <div>Instance<b class="mono">${deps.instanceId.slice(0, 8)}</b></div>
</div>
<h2>Providers</h2>
<div class="scroll"><table id="providers"><thead><tr><th>Provider</th><th>Plugin</th><th>API key</th><th>Breakers</th>
${WINDOWS.map(([label]) => html`<th class="num">Requests ${label}</th><th class="num">Failed</th><th class="num">Rate</th>`)}</tr></thead>
<tbody>${providerRows}</tbody></table></div>
<p class="muted">Failed: answers of 5xx, and answers that broke after they started; from the ledger, all workers and instances.</p>
<h2>Circuit breakers</h2>
${breakerRows.length === 0 ? html`<p class="muted">No route has been tried yet.</p>` : html`<div class="scroll"><table id="breakers"><thead><tr><th>Provider</th><th>Upstream model</th><th>State</th><th class="num">Next probe in</th></tr></thead><tbody>${breakerRows}</tbody></table></div>`}
<p class="muted">Breakers, requests in flight and settlements are this process's own: under <code>serve --workers</code> each worker keeps its own.</p>` });
  };
}

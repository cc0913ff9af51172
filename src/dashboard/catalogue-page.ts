import type { Catalogue, CatalogueEntry } from '../catalogue/catalogue.ts';
import type { Pricing } from '../config/types.ts';
import type { GatewayMiddleware } from '../http/state.ts';
import { count } from './format.ts';
import { html } from './html.ts';
import { page } from './layout.ts';

/** GET /dashboard/catalogue: each model, its routes, modalities and prices as the YAML writes them. */
export function createCataloguePage(catalogue: Catalogue): GatewayMiddleware {
  return async (ctx) => {
    ctx.type = 'html';
    ctx.body = page({ title: 'Catalogue', active: 'catalogue', body: html`<p class="muted">Prices in USD per million tokens unless marked.
A route whose provider has no API key is skipped by requests (struck through).</p>
<div class="scroll"><table id="catalogue">
<thead><tr><th>Model</th><th>Routes</th><th>Modalities</th><th>Endpoints</th><th class="num">Context / max output</th><th>Prices</th></tr></thead>
<tbody>${[...catalogue.entries()].map(row)}</tbody>
</table></div>` });
  };
}

function row(entry: CatalogueEntry) {
  const { model } = entry;
  const p = model.pricing;
  const routes = entry.routes.map((r) => {
    const text = `${r.provider.config.id}: ${r.model}${r.weight === null ? '' : ` (weight ${r.weight})`}`;
    return r.provider.config.missingKeyVariables === null ? html`<div>${text}</div>` : html`<div><s>${text}</s> <span class="muted">no key: ${r.provider.config.missingKeyVariables.join(', ')}</span></div>`;
  });
  return html`<tr data-model="${model.id}">
<td><b>${model.id}</b>${model.name === model.id ? '' : html`<div class="muted">${model.name}</div>`}</td>
<td>${routes}</td>
<td>${model.inputModalities.join(', ')} → ${model.outputModalities.join(', ')}</td>
<td>${[...entry.endpoints].join(' · ')}</td>
<td class="num">${model.contextLength === null ? '–' : count(model.contextLength)}<div class="sub">${model.maxOutputTokens === null ? '–' : count(model.maxOutputTokens)}</div></td>
<td>in ${price(p.input)} · out ${price(p.output)}${p.cacheRead === null && p.cacheWrite === null ? '' : html`<div class="sub">cache read ${price(p.cacheRead)} · write ${price(p.cacheWrite)}</div>`}${
    otherPrices(p).length === 0 ? '' : html`<div class="sub">${otherPrices(p).join('; ')}</div>`}</td>
</tr>`;
}

const price = (usd: number | null): string => (usd === null ? '–' : `$${usd}`);

/** The prices beyond text tokens, only those the model has. */
function otherPrices(p: Pricing): string[] {
  const out: string[] = [];
  if (p.reasoning !== null) out.push(`reasoning $${p.reasoning}`);
  if (p.request !== null) out.push(`$${p.request} per request`);
  if (p.inputImage !== null) out.push(`image in $${p.inputImage}`);
  if (p.outputImage !== null) out.push(`image out $${p.outputImage}`);
  if (p.inputAudio !== null) out.push(`audio in $${p.inputAudio}`);
  if (p.outputAudio !== null) out.push(`audio out $${p.outputAudio}`);
  if (p.characters !== null) out.push(`$${p.characters} per million characters`);
  if (p.audioMinute !== null) out.push(`$${p.audioMinute} per audio minute`);
  if (typeof p.image === 'number') out.push(`$${p.image} per image`);
  else if (p.image !== null) out.push(`per image: ${Object.entries(p.image).map(([size, usd]) => `${size} $${usd}`).join(', ')}`);
  return out;
}

import type { AdminActions } from '../audit/admin-actions.ts';
import { httpActor } from '../audit/actor.ts';
import { KeyRequestError } from '../auth/issue-key.ts';
import { balanceAmount } from '../billing/money.ts';
import type { GatewayContext, GatewayMiddleware } from '../http/state.ts';
import { KeyNotFoundError } from '../store/store.ts';
import { formFields, redirect } from './forms.ts';
import { html } from './html.ts';
import { renderKeys, type KeysDeps } from './keys-page.ts';

/** A form field the dashboard cannot use. */
class FormProblem extends Error {}

/**
 * The keys page's forms: create, top up, disable, enable. Each goes through AdminActions, which
 * writes the audit row (channel `dashboard`, the client's address). A refused form answers the
 * keys page with the reason; a new key is shown in the answer to its form, once, never in a URL.
 */
export function createKeyActions(deps: KeysDeps & { readonly actions: AdminActions }): Record<'create' | 'topUp' | 'disable' | 'enable', GatewayMiddleware> {
  const attempt = (work: (ctx: GatewayContext, fields: Readonly<Record<string, string>>) => Promise<void>): GatewayMiddleware => async (ctx) => {
    try {
      await work(ctx, formFields(ctx));
    } catch (err) {
      const known = err instanceof FormProblem || err instanceof KeyRequestError || err instanceof RangeError || err instanceof KeyNotFoundError;
      if (!known) throw err;
      await renderKeys(ctx, deps, { kind: 'error', text: err.message }, err instanceof KeyNotFoundError ? 404 : 400);
    }
  };
  const toggle = (disabled: boolean) =>
    attempt(async (ctx, fields) => {
      const key = await deps.actions.setDisabled(required(fields, 'name'), disabled, httpActor(ctx, 'dashboard'));
      redirect(ctx, `/dashboard/keys?done=${disabled ? 'disable' : 'enable'}&key=${encodeURIComponent(key.name)}`);
    });
  return {
    create: attempt(async (ctx, fields) => {
      const models = (fields['models'] ?? '').split(',').map((m) => m.trim()).filter((m) => m !== '');
      const { key, record } = await deps.actions.createKey(
        {
          name: required(fields, 'name'),
          balance: fields['balance_usd'] ? amount(fields['balance_usd'], 'Balance') : null,
          models: models.length === 0 ? null : models,
          limits: { rpm: limit(fields, 'rpm'), tpm: limit(fields, 'tpm'), concurrency: limit(fields, 'concurrency') },
        },
        httpActor(ctx, 'dashboard'),
      );
      const text = html`Created key <b>${record.name}</b>. Copy it now: it is not shown again.<br><code id="new-key">${key}</code>`;
      await renderKeys(ctx, deps, { kind: 'ok', text: html`<span class="newkey">${text}</span>` });
    }),
    topUp: attempt(async (ctx, fields) => {
      const key = await deps.actions.topUp(required(fields, 'name'), amount(required(fields, 'usd'), 'The top-up'), httpActor(ctx, 'dashboard'));
      redirect(ctx, `/dashboard/keys?done=topup&key=${encodeURIComponent(key.name)}`);
    }),
    disable: toggle(true),
    enable: toggle(false),
  };
}

function required(fields: Readonly<Record<string, string>>, name: string): string {
  const value = fields[name];
  if (value === undefined || value === '') throw new FormProblem(`${name} is required`);
  return value;
}

function amount(text: string, what: string): bigint {
  const parsed = balanceAmount(text);
  if (!parsed.ok) throw new FormProblem(`${what} ${parsed.problem}`);
  return parsed.pico;
}

function limit(fields: Readonly<Record<string, string>>, name: string): number | null {
  const text = fields[name] ?? '';
  if (text === '') return null;
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw new FormProblem(`${name} must be a positive whole number`);
  return Number(text);
}

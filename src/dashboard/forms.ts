import { koaBody } from 'koa-body';
import { ERR } from '../errors.ts';
import type { GatewayContext } from '../http/state.ts';

/** The dashboard's forms: small url-encoded bodies, nothing else read. */
export const formBody = koaBody({
  json: false,
  urlencoded: true,
  text: false,
  multipart: false,
  formLimit: '16kb',
  onError: () => {
    throw ERR.invalidField('the dashboard takes small url-encoded forms', 'body');
  },
});

/** A posted form's text fields, trimmed; repeated or missing fields are absent. */
export function formFields(ctx: GatewayContext): Readonly<Record<string, string>> {
  const body = ctx.request.body;
  const fields: Record<string, string> = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return fields;
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value.trim();
  return fields;
}

/** A query parameter given once, trimmed; '' when absent. */
export function queryText(ctx: GatewayContext, name: string): string {
  const value = ctx.query[name];
  return typeof value === 'string' ? value.trim() : '';
}

/** After a form: 303, so the browser follows with a GET and a reload does not post again. */
export function redirect(ctx: GatewayContext, to: string): void {
  ctx.status = 303;
  ctx.redirect(to);
}

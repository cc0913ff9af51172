import type { GatewayError } from '../errors.ts';
import { html, type HtmlValue, type SafeHtml } from './html.ts';

export const PAGES = [
  ['keys', 'Keys'],
  ['usage', 'Usage'],
  ['requests', 'Requests'],
  ['catalogue', 'Catalogue'],
  ['health', 'Health'],
  ['audit', 'Audit'],
] as const;
export type PageName = (typeof PAGES)[number][0];

/** A line above the page's content: what an action did, or why it was refused. */
export interface Notice {
  readonly kind: 'ok' | 'error';
  readonly text: HtmlValue;
}

/** The page shell: the navigation (when signed in), a notice, the content. */
export function page(options: { readonly title: string; readonly active?: PageName; readonly notice?: Notice | undefined; readonly body: SafeHtml }): string {
  const nav = options.active
    ? html`<nav>
  <a class="brand" href="/dashboard/keys">Junction</a>
  ${PAGES.map(([name, label]) => html`<a href="/dashboard/${name}"${name === options.active ? html` aria-current="page"` : ''}>${label}</a>`)}
  <form method="post" action="/dashboard/logout"><button class="link">Log out</button></form>
</nav>`
    : html`<nav><span class="brand">Junction</span></nav>`;
  const notice = options.notice ? html`<p class="notice ${options.notice.kind}" role="status">${options.notice.text}</p>` : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Junction</title>
<link rel="stylesheet" href="/dashboard/style.css">
<link rel="icon" href="/dashboard/icon.svg" type="image/svg+xml">
</head>
<body>
${nav}
<main>
<h1>${options.title}</h1>
${notice}
${options.body}
</main>
</body>
</html>
`.text;
}

/** An error as a page: its message and code, and a way back. */
export function errorPage(err: GatewayError): string {
  return page({
    title: `Error ${err.status}`,
    body: html`<p class="notice error">${err.message}</p><p><code>${err.code}</code></p><p><a href="/dashboard/keys">Back to the dashboard</a></p>`,
  });
}

/**
 * HTML built from templates whose values are escaped unless they are HTML already (the output of
 * `html` itself). Every page goes through here, so text from a request, a key name or a model id
 * can never become markup.
 */
export class SafeHtml {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** What a template takes: text (escaped), numbers, HTML, lists of these, and nothing (`false`, null, undefined). */
export type HtmlValue = SafeHtml | string | number | bigint | false | null | undefined | readonly HtmlValue[];

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (typeof value === 'object') return value.map(render).join('');
  return escapeHtml(String(value));
}

/** A template tag: `html\`<td>${name}</td>\`` escapes `name`. */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** A dashboard link with a query, each value URL-encoded; the template escapes the result. */
export function href(path: string, query: Readonly<Record<string, string | number | undefined>> = {}): string {
  const pairs = Object.entries(query).filter((pair): pair is [string, string | number] => pair[1] !== undefined && pair[1] !== '');
  return pairs.length === 0 ? path : `${path}?${new URLSearchParams(pairs.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
}

import { FormFault } from './form-fault.ts';

/** What a part's headers say about it. */
export interface PartHeaders {
  /** The form field's name (`file`, `image[]`, `model`…). */
  readonly name: string;
  /** Set for a file part, even when empty (a browser's empty file input sends `filename=""`). */
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
}

const PARAM = /\s*;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/gy;

/**
 * A part's header block (RFC 7578 §4.2): `Content-Disposition: form-data; name="…"` with an
 * optional `filename`, and an optional `Content-Type`. Quoted values may escape with a backslash;
 * browsers percent-encode quotes instead (WHATWG HTML §4.10.21.8), which is left as sent.
 */
export function parsePartHeaders(block: string): PartHeaders {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const header = line.slice(0, colon).trim().toLowerCase();
    if (header === 'content-disposition') disposition = line.slice(colon + 1).trim();
    else if (header === 'content-type') contentType = line.slice(colon + 1).trim();
  }
  if (disposition === undefined || !/^form-data\s*(;|$)/i.test(disposition)) {
    throw new FormFault('a multipart part has no "Content-Disposition: form-data" header');
  }
  const params = new Map<string, string>();
  PARAM.lastIndex = disposition.indexOf(';');
  if (PARAM.lastIndex !== -1) {
    for (let match = PARAM.exec(disposition); match !== null; match = PARAM.exec(disposition)) {
      const [, key = '', quoted, bare] = match;
      params.set(key.toLowerCase(), quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : (bare ?? '').trim());
    }
  }
  const name = params.get('name');
  if (name === undefined) throw new FormFault('a multipart part has no name');
  // UTF-8 in the name and filename arrives as raw bytes, read here as latin1: read it again as UTF-8.
  const utf8 = (text: string | undefined): string | undefined => (text === undefined ? undefined : Buffer.from(text, 'latin1').toString('utf8'));
  return { name: utf8(name) ?? name, filename: utf8(params.get('filename')), contentType };
}

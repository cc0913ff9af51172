/** Text this long or shorter is scanned before JSON.stringify is asked: a stream's deltas are a few words. */
const SCANNED = 256;

/**
 * `JSON.stringify(text)`, for the strings a translated stream writes in every event (a delta's
 * text). JSON.stringify's fixed cost is most of it for a few words: about 1,300 instructions a call
 * on Node 20, against a few a character for this scan (issue #17: 85k instructions a 64-chunk
 * stream). Text with nothing to escape is written as it is, in quotes, which is what JSON.stringify
 * writes for it (ECMA-262 QuoteJSONString: only `"`, `\`, control characters and lone surrogates
 * are escaped). Anything else, surrogate pairs included, and long text go to JSON.stringify.
 */
export function jsonString(text: string): string {
  const length = text.length;
  if (length > SCANNED) return JSON.stringify(text);
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}

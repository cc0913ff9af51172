/**
 * The upstream's own id for a request (issue #16), for the request log: a support ticket with the
 * provider can then be traced across the hop. Anthropic sends `request-id`, OpenAI and most
 * compatible servers `x-request-id`, AWS `x-amzn-requestid`. Kept short and printable: it is the
 * upstream's text, written into Junction's log.
 */
const NAMES = ['request-id', 'x-request-id', 'x-amzn-requestid'] as const;

export function upstreamRequestId(header: (name: string) => string | string[] | undefined): string | undefined {
  for (const name of NAMES) {
    const raw = header(name);
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined && value !== '') return value.replace(/[^\x21-\x7e]/g, '').slice(0, 128) || undefined;
  }
  return undefined;
}

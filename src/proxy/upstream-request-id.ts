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
    if (value !== undefined && value !== '') return printable(value);
  }
  return undefined;
}

/** The names' lengths: a raw name of another length is not lowercased. */
const LENGTHS: readonly number[] = NAMES.map((name) => name.length);
/** Each name's value as Node's parsed headers would hold it (repeats joined by `, `); reset by each call. */
const joined: (string | undefined)[] = NAMES.map(() => undefined);

/**
 * The same id from a response's raw header list ([name, value, ...], as Node received it), for the
 * native path: each lookup by name in the parsed headers, a dictionary, cost about 1,000
 * instructions when the name was absent (issue #17, fifteenth session), where here only a name of
 * one of the three lengths is even lowercased. Repeats are joined as Node joins them, so the answer
 * is upstreamRequestId's on the parsed headers, which the other paths use.
 */
export function upstreamRequestIdIn(rawHeaders: readonly string[]): string | undefined {
  joined.fill(undefined);
  for (let i = 0; i < rawHeaders.length - 1; i += 2) {
    const name = rawHeaders[i] as string;
    if (!LENGTHS.includes(name.length)) continue;
    const at = (NAMES as readonly string[]).indexOf(name.toLowerCase());
    if (at === -1) continue;
    const value = rawHeaders[i + 1] as string;
    const before = joined[at];
    joined[at] = before === undefined ? value : `${before}, ${value}`;
  }
  for (const value of joined) if (value !== undefined && value !== '') return printable(value);
  return undefined;
}

function printable(value: string): string | undefined {
  return value.replace(/[^\x21-\x7e]/g, '').slice(0, 128) || undefined;
}

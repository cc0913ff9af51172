import { z } from 'zod';

/** Options every HTTP provider plugin accepts under `providers[].options`. */
export const httpProviderOptions = z
  .strictObject({
    /** Fixed headers sent upstream on every request (e.g. OpenRouter's HTTP-Referer and X-Title). */
    headers: z.record(z.string(), z.string()).optional(),
    /** Extra client request headers to forward upstream, by name. */
    forward_headers: z.array(z.string().min(1)).optional(),
  })
  .default({});

export type HttpProviderOptions = z.infer<typeof httpProviderOptions>;

/** Lower-cases header names so later lookups and overrides are exact. */
export function lowerCaseKeys(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

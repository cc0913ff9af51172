import type { IncomingMessage } from 'node:http';
import type { GatewayError } from '../errors.ts';
import { asObject } from '../formats/convert/json.ts';
import { reportedError } from '../formats/upstream-events.ts';

/** Upstream error bodies are small; past this the rest is drained unread. */
const MAX_ERROR_BODY = 64 * 1024;
/**
 * Past this, draining stops and the connection is closed: keeping a keep-alive connection is not
 * worth reading an upstream's runaway error body to its end (a 200 MB one took its time and, on
 * Node 24, about 100 MB of RSS in garbage chunks before GC caught up).
 */
const MAX_DRAIN = 1024 * 1024;

/** Response headers worth passing on with an error: they tell the client when to retry. */
export const RETRY_HEADERS = ['retry-after', 'retry-after-ms'] as const;

export interface ErrorBody {
  /** The first 64 KB. */
  readonly body: Buffer;
  /** The body was longer: what is kept is not the upstream's whole answer. */
  readonly truncated: boolean;
}

/**
 * An upstream error response's body, kept up to 64 KB and the rest drained unread up to 1 MB
 * (then the connection is closed), so a huge error body costs no memory; null if the connection
 * broke first. `onChunk` runs per chunk (the
 * idle timer).
 */
export function readErrorBody(response: IncomingMessage, onChunk?: () => void): Promise<ErrorBody | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const kept = (): ErrorBody => ({ body: Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY), truncated: size > MAX_ERROR_BODY });
    response.on('data', (chunk: Buffer) => {
      onChunk?.();
      if (size < MAX_ERROR_BODY) chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_DRAIN) {
        resolve(kept());
        response.destroy();
      }
    });
    response.once('end', () => resolve(kept()));
    response.once('close', () => resolve(response.complete ? kept() : null));
  });
}

/** The retry headers an upstream answer carried. */
export function retryHeaders(header: (name: string) => string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of RETRY_HEADERS) {
    const value = header(name);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/** The error an upstream body reports, in any of the three shapes (formats/upstream-events.ts). */
export function errorFromBody(body: Buffer | string, status: number, provider: string, headers: Record<string, string> = {}): GatewayError {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const error = asObject(asObject(parsed)['error']);
  if (Object.keys(error).length === 0) error['message'] = `HTTP ${status}`;
  return reportedError(provider, error, status, headers);
}

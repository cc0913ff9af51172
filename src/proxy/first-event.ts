import type { IncomingMessage } from 'node:http';
import { ERR, type GatewayError } from '../errors.ts';
import { asObject, isObject } from '../formats/convert/json.ts';
import { reportedError } from '../formats/upstream-events.ts';
import type { WireFormat } from '../formats/wire.ts';
import type { Terminator } from './sse-terminator.ts';
import { SseGuard } from './sse-guard.ts';
import type { UpstreamTimers } from './upstream-timers.ts';

/**
 * The error a stream reports in its very first event, if it does: an HTTP 200 stream that opens
 * with `event: error` (Anthropic's overloaded_error) or `data: {"error":…}` (OpenRouter) has sent
 * nothing of an answer, so the failover loop may still treat it like the status it names (issue #5;
 * TrueFoundry and Portkey#741 fail over on it too). `events` holds whole events only.
 */
export function leadingError(events: Buffer, format: WireFormat, provider: string): GatewayError | undefined {
  // Only the first real event matters: it is found by its blank line and decoded alone, rather
  // than the whole first read split into events (issue #17: 29 µs on a 64-event read).
  for (let start = 0; start < events.length; ) {
    const end = Math.min(eventEnd(events, start), start + 64 * 1024);
    const block = events.toString('utf8', start, end);
    start = end;
    // An event that never says "error" is not one: most streams end their check here, and a first
    // event that opens with a field rather than a comment is not even split into lines (issue #17).
    const opening = block.charCodeAt(0);
    const opensWithField = block.length > 0 && opening !== COLON && opening !== LF && opening !== CR;
    const saysError = block.includes('error');
    if (opensWithField && !saysError) return undefined;
    const lines = block.split(/\r?\n/).filter((line) => line !== '' && !line.startsWith(':'));
    if (lines.length === 0) continue; // a comment-only event: keep looking for the first real one
    if (!saysError) return undefined;
    const eventName = lines.find((line) => line.startsWith('event:'))?.slice(6).trim();
    const data = lines
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return undefined; // the guard reports malformed events
    }
    if (!isObject(payload)) return undefined;
    // Messages and Responses name their error events (Responses may nest the error or not:
    // responses-api.md §4.2); Chat sends `{"error":…}`.
    const isError = format === 'chat' ? isObject(payload['error']) : eventName === 'error' || payload['type'] === 'error';
    return isError ? reportedError(provider, asObject(payload['error'] ?? payload)) : undefined;
  }
  return undefined;
}

const LF = 0x0a;
const CR = 0x0d;
/** A comment line's first character. */
const COLON = 0x3a;

/** Where the event starting at `start` ends: just past its blank line (LF LF, or CRLF CRLF), or the buffer's end. */
function eventEnd(events: Buffer, start: number): number {
  for (let i = events.indexOf(LF, start); i !== -1; i = events.indexOf(LF, i + 1)) {
    const next = events[i + 1];
    if (next === LF) return i + 2;
    if (next === CR && events[i + 2] === LF) return i + 3;
  }
  return events.length;
}

/** What a stream sent before the gateway committed to it: the raw chunks (for the usage tap) and its first whole events. */
export interface Primed {
  readonly raw: readonly Buffer[];
  readonly events: Buffer;
  readonly guard: SseGuard;
}

export type FirstEvent =
  | { readonly kind: 'events'; readonly primed: Primed }
  | { readonly kind: 'error'; readonly error: GatewayError }
  | { readonly kind: 'broken'; readonly error: GatewayError };

/**
 * Reads a native 2xx stream up to its first whole event(s), then pauses it: only then does the
 * gateway commit to the answer. Keepalives, if any, keep running meanwhile.
 */
export function awaitFirstEvent(proxyRes: IncomingMessage, format: WireFormat, provider: string, timers: UpstreamTimers, terminator?: Terminator): Promise<FirstEvent> {
  return new Promise((resolve) => {
    const guard = new SseGuard(format, terminator);
    const raw: Buffer[] = [];
    const finish = (result: FirstEvent): void => {
      proxyRes.off('data', onData);
      proxyRes.off('close', onClose);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      timers.touch();
      raw.push(chunk);
      const events = guard.push(chunk);
      if (guard.malformed) {
        proxyRes.destroy();
        finish({ kind: 'broken', error: ERR.upstreamInvalid(provider, 'a stream event is not JSON') });
        return;
      }
      if (events.length === 0) return;
      proxyRes.pause();
      const error = leadingError(events, format, provider);
      if (error) {
        proxyRes.destroy();
        finish({ kind: 'error', error });
        return;
      }
      finish({ kind: 'events', primed: { raw, events, guard } });
    };
    const onClose = (): void => {
      const fired = timers.fired;
      finish({ kind: 'broken', error: fired ? ERR.upstreamTimeout(provider, fired.kind, fired.ms) : ERR.upstreamInterrupted(provider) });
    };
    proxyRes.on('data', onData);
    proxyRes.once('close', onClose);
  });
}

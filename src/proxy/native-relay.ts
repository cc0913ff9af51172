import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ERR, GatewayError } from '../errors.ts';
import { FORMAT_OF } from '../formats/wire.ts';
import { terminatorOf } from './sse-terminator.ts';
import { CLIENT_DISCONNECTED, headOf, type GatewayContext } from '../http/state.ts';
import { writeErrorResponse } from '../http/write-error.ts';
import { streamErrorFrame } from '../sse/encode.ts';
import { usageTapFor, type UsageTap } from '../usage/tap.ts';
import { speechCostHeader, speechUsage } from '../usage/speech.ts';
import { transcriptionFallback } from '../usage/transcription.ts';
import { asksForUsage } from '../usage/chat-stream-usage.ts';
import { costOf } from '../billing/pricing.ts';
import { picoToUsdNumber } from '../billing/money.ts';
import { applyChatUsage, emptyUsage } from '../usage/normalize.ts';
import { addCostToBody, ChatStreamRewriter, type AddCost } from './chat-usage-rewriter.ts';
import { filterResponseHeaders } from './headers.ts';
import { SseGuard } from './sse-guard.ts';
import type { Primed } from './first-event.ts';
import { errorFromBody, readErrorBody } from './upstream-error.ts';
import type { UpstreamTimers } from './upstream-timers.ts';

/**
 * Relays a native upstream's answer to the client once the gateway has committed to it: the
 * header allowlist, usage read as bytes pass, and honest endings (issue #5). A stream cut by a
 * reset, a stall, a malformed event, a missing terminator or a shutdown ends with an in-band error
 * at an event boundary, never with a clean end; a whole answer cut short ends with a broken
 * connection, which every HTTP client reports.
 */
export interface RelayInput {
  readonly ctx: GatewayContext;
  readonly provider: string;
  readonly proxyRes: IncomingMessage;
  /**
   * `proxyRes.headers`, read once by the caller: Node's getter does a megamorphic keyed load of a
   * symbol on every read, about 350 instructions each (issue #17, twenty-eighth session: five
   * reads an answer, now one).
   */
  readonly upstreamHeaders: IncomingHttpHeaders;
  readonly timers: UpstreamTimers;
  /** A stream's first whole events, read before committing (proxy/first-event.ts). */
  readonly primed: Primed | undefined;
}

/** Ends the relay early with an error (a shutdown); a no-op once the response is over. */
export type Interrupt = (err: GatewayError) => void;

export function relayNative({ ctx, provider, proxyRes, upstreamHeaders, timers, primed }: RelayInput): Interrupt {
  const { state, res } = ctx;
  const status = proxyRes.statusCode ?? 502;
  const endpoint = state.route?.endpoint ?? 'messages';
  const contentType = upstreamHeaders['content-type'];
  const isSse = contentType?.startsWith('text/event-stream') === true;
  const committed = res.headersSent; // keepalives already sent the status and headers
  let interruption: GatewayError | undefined;

  // A Responses stream's error frame continues its sequence numbers (sse/encode.ts).
  let lastSequence = -1;
  const fail = (err: GatewayError): void => {
    if (res.destroyed || res.writableEnded) return;
    state.outcome.error ??= err.code;
    if (res.headersSent) {
      const position = endpoint === 'responses' ? { sequence: lastSequence + 1, responseId: tap?.responseId?.() } : undefined;
      if (isSse || committed) res.end(streamErrorFrame(state.surface, err, state.requestId, position));
      else res.destroy();
    } else {
      writeErrorResponse(res, state.surface, err, state.requestId);
    }
  };

  const tap = status < 300 ? usageTapFor(endpoint, contentType) : null;
  // Frames a 2xx stream by events, and counts its content events for the estimate below.
  const guard = isSse && status < 300 ? (primed?.guard ?? new SseGuard(FORMAT_OF[endpoint], terminatorOf(endpoint, headOf(state)))) : undefined;
  /** What a cut answer is charged for as output: the tap's own estimate, else the stream's content events. */
  const outputEstimate = (): number => tap?.outputEstimate() ?? guard?.contentEvents ?? 0;
  let usageRead = false;
  const readUsage = (): void => {
    if (usageRead) return;
    usageRead = true;
    // Speech is charged by its characters, known from the request: its audio is never inspected.
    let usage = endpoint === 'audio_speech' && status < 300 ? speechUsage(ctx) : tap?.finish(arrivedWhole(proxyRes, upstreamHeaders));
    if (usage === undefined && tap && state.route && state.reservation?.audioMs !== undefined) {
      // A transcript in a format without usage: charged by the upload's own length (issue #13).
      const fallback = transcriptionFallback(state.route, state.upload, state.reservation.audioMs, outputEstimate());
      usage = fallback.usage;
      if (!fallback.exact) state.outcome.estimated = true;
    }
    if (usage) state.outcome.usage = usage;
    if (tap) state.outcome.outputEstimate = outputEstimate();
    const responseId = tap?.responseId?.();
    if (responseId !== undefined) state.outcome.responseId = responseId;
    const items = tap?.itemIds?.();
    if (items !== undefined) state.outcome.responseItems = items;
  };
  const track = endpoint === 'responses' && isSse ? (chunk: Buffer): void => void (lastSequence = lastSequenceIn(chunk, lastSequence)) : undefined;
  // A guarded stream's chunks reach the tap with the text the guard read them as (relaySse): one
  // latin1 copy of each, not two (issue #17).
  const unguardedTap = guard === undefined ? tap : null;
  if (primed) {
    // Only the last chunk the first-event read pushed can be the one the guard read last; asked
    // even without a tap (speech), so the guard lets its text go.
    const last = primed.raw.at(-1);
    const text = last === undefined ? undefined : primed.guard.takeText(last);
    for (const chunk of primed.raw) {
      tap?.push(chunk, chunk === last ? text : undefined);
      track?.(chunk);
    }
  }
  proxyRes.on('error', () => undefined); // reported through 'close' below
  // Paused by backpressure from a slow client (here or in pipe()): that silence is not the upstream's.
  proxyRes.on('pause', () => timers.hold());
  proxyRes.on('resume', () => timers.resume());
  proxyRes.on('data', (chunk: Buffer) => {
    timers.touch();
    unguardedTap?.push(chunk);
    track?.(chunk);
  });
  // Registered before the body is forwarded, so usage is recorded before the client response
  // ends and the request is settled.
  if (proxyRes.readableEnded) readUsage();
  else proxyRes.on('end', readUsage);
  proxyRes.on('close', () => {
    readUsage();
    if (proxyRes.complete && interruption === undefined) return;
    if (res.destroyed && !res.writableFinished) {
      state.outcome.error = CLIENT_DISCONNECTED;
      return;
    }
    const fired = timers.fired;
    fail(interruption ?? (fired ? ERR.upstreamTimeout(provider, fired.kind, fired.ms) : ERR.upstreamInterrupted(provider)));
  });

  if (committed && (status >= 300 || !isSse)) {
    // Keepalives went out, so the status is spent: report the upstream's answer in-band.
    void readErrorBody(proxyRes).then((read) =>
      fail(status >= 300 && read !== null ? errorFromBody(read.body, status, provider) : ERR.upstreamInvalid(provider, `HTTP ${status} without a stream`)),
    );
    return () => undefined;
  }
  const headers = filterResponseHeaders(upstreamHeaders);
  if (endpoint === 'audio_speech' && status < 300) headers['x-junction-cost-usd'] = speechCostHeader(ctx);
  const chat = endpoint === 'chat_completions' && status < 300 && state.route !== undefined;
  if (guard !== undefined) {
    const rewriter = chat && (state.usageForced === true || asksForUsage(headOf(state)))
      ? new ChatStreamRewriter({ dropUsageChunk: state.usageForced === true, addCost: costAdder(state) })
      : null;
    relaySse(res, proxyRes, status, headers, primed ?? { raw: [], events: Buffer.alloc(0), guard }, { rewriter, tap, fail, provider });
  } else if (chat && !isSse) {
    relayWithCost(proxyRes, res, status, headers, costAdder(state), tap);
  } else {
    res.writeHead(status, headers);
    proxyRes.pipe(res);
  }
  return (err) => {
    if (proxyRes.destroyed || res.writableEnded) return;
    interruption = err;
    proxyRes.destroy();
  };
}

/** What relaySse writes through (the Chat usage rewriter), feeds (the usage tap) and reports to. */
interface SseRelay {
  readonly rewriter: ChatStreamRewriter | null;
  readonly tap: UsageTap | null;
  readonly fail: (err: GatewayError) => void;
  readonly provider: string;
}

/** An SSE stream, whole events at a time, with backpressure, ending honestly. */
function relaySse(res: ServerResponse, proxyRes: IncomingMessage, status: number, headers: OutgoingHttpHeaders, primed: Primed, { rewriter, tap, fail, provider }: SseRelay): void {
  const guard = primed.guard;
  if (!res.headersSent) res.writeHead(status, headers);
  if (primed.events.length > 0) res.write(rewriter === null ? primed.events : rewriter.push(primed.events));
  proxyRes.on('data', (chunk: Buffer) => {
    const events = guard.push(chunk);
    const text = guard.takeText(chunk); // asked even without a tap, so the guard lets it go
    tap?.push(chunk, text);
    // The guard's text is of the chunk it read whole: the rewriter's too when it passed it all on.
    const out = rewriter === null ? events : rewriter.push(events, events === chunk ? text : undefined);
    if (out.length > 0 && !res.write(out)) proxyRes.pause();
    if (guard.malformed) {
      proxyRes.destroy();
      fail(ERR.upstreamInvalid(provider, 'a stream event is not JSON'));
    }
  });
  res.on('drain', () => proxyRes.resume());
  // Paused by the first-event read; flowing from here, with backpressure.
  proxyRes.resume();
  const onEnd = (): void => {
    if (guard.malformed) return;
    if (guard.pending || !guard.terminated) {
      fail(ERR.upstreamInterrupted(provider));
      return;
    }
    if (guard.upstreamError) res.end();
    else res.end(rewriter?.flush());
  };
  // A stream that came whole in its first chunk has already ended while the first-event read
  // held it paused (Node emits 'end' then): finish it now, or the client would wait forever.
  if (proxyRes.readableEnded) onEnd();
  else proxyRes.on('end', onEnd);
}

/** `usage.cost` in USD at the model's prices (OpenRouter's convention; issue #4). */
function costAdder(state: GatewayContext['state']): AddCost {
  return (raw) => {
    if (!state.route) return 0;
    const usage = emptyUsage();
    applyChatUsage(usage, raw);
    return picoToUsdNumber(costOf(usage, state.route.prices));
  };
}

/**
 * A whole Chat answer, held until complete to carry usage.cost (answers are small). The usage tap,
 * whose 'end' listener ran first (relayNative), saw the same chunks: where it kept the answer and
 * found its usage, both are used as they are, not joined and scanned again.
 */
function relayWithCost(proxyRes: IncomingMessage, res: ServerResponse, status: number, headers: OutgoingHttpHeaders, addCost: AddCost, tap: UsageTap | null): void {
  const chunks: Buffer[] = [];
  let size = 0;
  proxyRes.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
  });
  proxyRes.on('end', () => {
    const seen = tap?.answer?.();
    const body = seen !== undefined && seen.bytes.length === size
      ? addCostToBody(seen.bytes, addCost, seen.usage)
      : // Most answers arrive in one chunk: that Buffer as it is, not a copy.
        addCostToBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), addCost);
    // Set on the relay's own headers object (made for this response), not a copy: on Node 20 a
    // copy given more properties can get a map of its own each time (issue #17; docs/performance.md).
    headers['content-length'] = body.length;
    res.writeHead(status, headers);
    res.end(body);
  });
}

/**
 * Whether the tap saw all of an answer: it ended ('end', not only 'close': `complete` is set once
 * the parser has the last byte, which may still wait in the stream's buffer when a paused answer is
 * destroyed), and by its framing, a length or chunks. An answer delimited by the connection's close
 * ends as cleanly when the upstream dies in its middle.
 */
function arrivedWhole(proxyRes: IncomingMessage, headers: IncomingHttpHeaders): boolean {
  return proxyRes.readableEnded && (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined);
}

const SEQUENCE = Buffer.from('"sequence_number":');

/** The last `sequence_number` in a chunk of a Responses stream, else the one before (one lookup per chunk). */
function lastSequenceIn(chunk: Buffer, previous: number): number {
  const at = chunk.lastIndexOf(SEQUENCE);
  if (at === -1) return previous;
  let value = 0;
  let digits = 0;
  for (let i = at + SEQUENCE.length; i < chunk.length; i++) {
    const byte = chunk[i] ?? 0;
    if (byte < 0x30 || byte > 0x39) break;
    value = value * 10 + (byte - 0x30);
    digits++;
  }
  return digits > 0 && value > previous ? value : previous;
}

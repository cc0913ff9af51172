import { ERR, errorTypeForStatus, GatewayError } from '../../errors.ts';
import type { SseEvent, UpstreamFormat } from '../../plugin-host/api.ts';
import { ToolNames } from '../convert/tool-names.ts';
import type { Json } from '../convert/json.ts';
import { parse, parsedEvents, reportedError, type EventParser } from '../upstream-events.ts';
import { isObject } from '../convert/json.ts';
import type { UpstreamCodec } from './codecs.ts';
import type { CanonicalEvent, StreamDecoder } from './stream.ts';

/**
 * A plugin's own wire format as the upstream half of a codec (issue #14: a third party adds a
 * format without touching `src/`). The core keeps what it owns: SSE framing, the JSON parse, and
 * the check that a stream ended with its `stop` (a cut stream is an in-band error, never a clean
 * end). The plugin's throws become upstream faults the client is told of in-band.
 */
export function pluginCodec(format: UpstreamFormat): UpstreamCodec {
  return {
    encodeRequest: (request, options) => {
      const { body, state } = format.encodeRequest(request, { model: options.model, maxOutputTokens: options.maxOutputTokens });
      return { body, side: { toolNames: new ToolNames(), jsonTool: null, pluginState: state } };
    },
    parse: (events, provider) => parsedEvents(events, new PluginEventParser(provider)),
    eventParser: (provider) => new PluginEventParser(provider),
    applyUsage: () => false,
    decodeAnswer: (body, side) => format.decodeAnswer(body, side.pluginState),
    streamDecoder: (side, provider) => new PluginStreamDecoder(format.streamDecoder(side.pluginState), provider),
  };
}

/**
 * The plugin's decoder gets `{ event, data }`, its data parsed; `data: [DONE]` sentinels are
 * skipped. An event named `error` is the upstream's in-band failure, `{ error: { type, message } }`
 * (or Anthropic's `{ type: 'error', error }`): the client gets it in-band, typed (since 1.5.0).
 * Synchronous, so a chunk's events are parsed and converted in one step (issue #17), as the
 * built-in formats' are. It never ends a stream itself: the plugin's `stop` does
 * (PluginStreamDecoder), and the rest is read to its end.
 */
class PluginEventParser implements EventParser {
  readonly #provider: string;

  constructor(provider: string) {
    this.#provider = provider;
  }

  push(event: SseEvent, out: Json[]): boolean {
    if (event.data === '[DONE]') return false;
    // Never stamped with its text: a plugin's events are always converted (upstream-events.ts parse).
    const data = parse(event, this.#provider, false);
    if (event.event === 'error') throw reportedError(this.#provider, isObject(data['error']) ? data['error'] : data);
    out.push({ event: event.event, data });
    return false;
  }

  end(): void {
    // A stream without its stop is cut: PluginStreamDecoder.end says so, after the plugin's end.
  }
}

/**
 * What a plugin's decoder threw, as the error the caller gets: an UpstreamError (API 1.5) with its
 * status and type, anything else an unreadable upstream. Recognised by shape, not instanceof: a
 * plugin package may carry its own copy of the contract module.
 */
export function pluginDecodeError(err: unknown, provider: string): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof Error && err.name === 'UpstreamError' && typeof (err as { status?: unknown }).status === 'number') {
    const { status, type } = err as Error & { status: number; type?: unknown };
    const code = status >= 400 && status < 600 ? status : 502;
    return ERR.upstreamReported(provider, code, typeof type === 'string' ? type : errorTypeForStatus(code === 503 ? 529 : code), err.message.slice(0, 2000), {});
  }
  return ERR.upstreamInvalid(provider, err instanceof Error ? err.message.slice(0, 200) : 'its answer could not be read');
}

class PluginStreamDecoder implements StreamDecoder {
  readonly #inner: ReturnType<UpstreamFormat['streamDecoder']>;
  readonly #provider: string;
  #stopped = false;

  constructor(inner: ReturnType<UpstreamFormat['streamDecoder']>, provider: string) {
    this.#inner = inner;
    this.#provider = provider;
  }

  push(input: Json, out: CanonicalEvent[]): void {
    if (this.#stopped) return; // nothing follows the stop (stream.ts rule 12)
    const from = out.length;
    this.#guard(() => this.#inner.push(input as { event: string | undefined; data: Json }, out));
    this.#check(out, from);
  }

  end(out: CanonicalEvent[]): void {
    const from = out.length;
    if (!this.#stopped) this.#guard(() => this.#inner.end(out));
    this.#check(out, from);
    if (!this.#stopped) throw ERR.upstreamInterrupted(this.#provider);
  }

  #guard(run: () => void): void {
    try {
      run();
    } catch (err) {
      throw pluginDecodeError(err, this.#provider);
    }
  }

  /** Events after a stop are dropped: a client must never see anything after its stream's end. */
  #check(out: CanonicalEvent[], from: number): void {
    for (let i = from; i < out.length; i++) {
      if (this.#stopped) {
        out.length = i;
        return;
      }
      if (out[i]!.type === 'stop') this.#stopped = true;
    }
  }
}

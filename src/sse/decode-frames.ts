import type { SseEvent, StreamFraming } from '../plugin-host/api.ts';

/**
 * Bytes of a stream framed other than as SSE (AWS's binary event stream: issue #15) → events,
 * through the plugin's decoder. The core keeps what decodeSse keeps: the idle timer per chunk,
 * a broken source named by `onBrokenSource`, and one async step per chunk, not per event. A
 * frame the decoder refuses (a bad checksum, a cut last frame) is `onCorrupt`'s error: an upstream
 * fault the client is told of in-band, never a hang or a clean end.
 */
export async function* decodeFrames(
  body: AsyncIterable<Uint8Array>,
  decoder: ReturnType<StreamFraming['decoder']>,
  onBrokenSource: (err: unknown) => Error,
  onCorrupt: (err: unknown) => Error,
  onChunk?: () => void,
): AsyncGenerator<SseEvent> {
  for await (const batch of decodeFrameBatches(body, decoder, onBrokenSource, onCorrupt, onChunk)) yield* batch;
}

/**
 * The same events a chunk at a time, as decodeSseBatches gives SSE's: for a plan that parses and
 * converts a chunk's events in one step (dispatch/translate.ts; issue #17).
 */
export async function* decodeFrameBatches(
  body: AsyncIterable<Uint8Array>,
  decoder: ReturnType<StreamFraming['decoder']>,
  onBrokenSource: (err: unknown) => Error,
  onCorrupt: (err: unknown) => Error,
  onChunk?: () => void,
): AsyncGenerator<SseEvent[]> {
  let pending: SseEvent[] = [];
  // The events a decoder gave before refusing a frame are good: they go out, then the error.
  let corrupt: Error | undefined;
  const push = (chunk: Uint8Array): void => {
    try {
      decoder.push(chunk, pending);
    } catch (err) {
      corrupt = onCorrupt(err);
    }
  };
  try {
    for await (const chunk of body) {
      onChunk?.();
      push(chunk);
      if (pending.length > 0) {
        const ready = pending;
        pending = [];
        yield ready;
      }
      if (corrupt) break;
    }
  } catch (err) {
    throw onBrokenSource(err);
  }
  if (corrupt) throw corrupt;
  try {
    decoder.end(pending);
  } catch (err) {
    corrupt = onCorrupt(err);
  }
  if (pending.length > 0) yield pending;
  if (corrupt) throw corrupt;
}

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
  let pending: SseEvent[] = [];
  const push = (chunk: Uint8Array): void => {
    try {
      decoder.push(chunk, pending);
    } catch (err) {
      throw new Corrupt(onCorrupt(err));
    }
  };
  try {
    for await (const chunk of body) {
      onChunk?.();
      push(chunk);
      if (pending.length > 0) {
        const ready = pending;
        pending = [];
        yield* ready;
      }
    }
  } catch (err) {
    throw err instanceof Corrupt ? err.error : onBrokenSource(err);
  }
  try {
    decoder.end(pending);
  } catch (err) {
    throw onCorrupt(err);
  }
  yield* pending;
}

/** Tells a refused frame from a broken source inside the loop. */
class Corrupt extends Error {
  readonly error: Error;
  constructor(error: Error) {
    super(error.message);
    this.error = error;
  }
}

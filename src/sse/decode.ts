import { createParser } from 'eventsource-parser';
import type { SseEvent } from '../plugin-host/api.ts';
import { Utf8Chunks } from './utf8-chunks.ts';

/**
 * Bytes of an event stream → events, with eventsource-parser: CRLF or LF, events split across
 * chunks, multi-line data, comments (OpenRouter's `: OPENROUTER PROCESSING`) skipped. `onChunk`
 * runs per chunk (the upstream idle timer). A failure
 * of the byte source (a reset, an abort) is passed to `onBrokenSource` to name it.
 */
export async function* decodeSse(
  body: AsyncIterable<Uint8Array>,
  onBrokenSource: (err: unknown) => Error,
  onChunk?: () => void,
): AsyncGenerator<SseEvent> {
  for await (const batch of decodeSseBatches(body, onBrokenSource, onChunk)) yield* batch;
}

/**
 * The same events a chunk at a time: one async step per chunk of bytes rather than per event, for
 * a caller that converts each chunk's events in one go (dispatch/translate.ts; issue #17).
 */
export async function* decodeSseBatches(
  body: AsyncIterable<Uint8Array>,
  onBrokenSource: (err: unknown) => Error,
  onChunk?: () => void,
): AsyncGenerator<SseEvent[]> {
  const decoder = new Utf8Chunks();
  let pending: SseEvent[] = [];
  const parser = createParser({ onEvent: (e) => pending.push({ event: e.event, data: e.data }) });
  try {
    for await (const chunk of body) {
      onChunk?.();
      parser.feed(decoder.write(chunk));
      if (pending.length > 0) {
        const ready = pending;
        pending = [];
        yield ready;
      }
    }
  } catch (err) {
    throw onBrokenSource(err);
  }
  parser.feed(decoder.end());
  if (pending.length > 0) yield pending;
}

import { SSE_TERMINATOR_OF, type Endpoint } from '../formats/wire.ts';

/** An endpoint's own last event, and how many of them a whole stream holds. */
export interface Terminator {
  /** Any of these ends one unit (one image, the whole stream). */
  readonly markers: readonly Buffer[];
  readonly count: number;
}

/**
 * What ends a native stream of an endpoint that is not Messages or Chat (issue #13): one
 * `speech.audio.done`; one `image_generation.completed` per image asked for (`n`), so a stream
 * that stops after the first of two images is reported as cut, not passed off as whole.
 */
export function terminatorOf(endpoint: Endpoint, body: Record<string, unknown> | undefined): Terminator | undefined {
  const markers = SSE_TERMINATOR_OF[endpoint];
  if (markers === undefined) return undefined;
  const n = body?.['n'];
  const images = endpoint === 'images_generations' || endpoint === 'images_edits';
  return { markers, count: images && typeof n === 'number' && n > 1 ? n : 1 };
}

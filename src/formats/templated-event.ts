/**
 * A stream event whose JSON text its encoder writes from a template: the same bytes
 * JSON.stringify gives for it (its own properties, in order), at a fifth of the cost. Only the
 * events a translated stream sends most, its text deltas, are made this way (issue #17: 0.5 µs →
 * 0.1 µs a Messages delta, 0.7 → 0.25 µs a Chat chunk, sixty a stream). The frame writer finds them
 * with instanceof (upstream-events.ts rawJson): a copy made by spreading one is a plain object and
 * is stringified as any other, so a changed event never goes out in its old text.
 */
export abstract class TemplatedEvent {
  [key: string]: unknown;
  abstract json(): string;
  /**
   * Its whole SSE frame in the format it belongs to: the bytes sse/encode.ts writes for it. The
   * stream writer takes it from here without reading the event's properties, which at that site
   * see every event shape of a stream and so are megamorphic lookups (issue #17).
   */
  abstract frame(): string;
  /** Characters of model output it carries, for a cut stream's estimate (dispatch/send-result.ts). A templated event never carries usage. */
  abstract outputChars(): number;
}

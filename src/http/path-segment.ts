/**
 * A percent-encoded path segment (a model id, a request id, a key name), or undefined when it is
 * not valid percent-encoding: such a segment names nothing, which is a 404, never a 500.
 */
export function decodeSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

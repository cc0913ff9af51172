/**
 * Empties an array that is refilled at once, per stream event (issue #17). `array.length = 0` is
 * not inlined by V8: it calls its runtime's length setter, which also drops the backing store, so
 * the next push grows a new one. Both cost about 400 instructions an event on a translated stream
 * (callgrind, twenty-ninth session: 50k of a 64-chunk stream's 1,483k), where popping the one or
 * two entries an event leaves is inlined and keeps the store (45 → 10 ns, Node 20).
 */
export function empty(array: unknown[]): void {
  while (array.length > 0) array.pop();
}

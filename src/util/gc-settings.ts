import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings a gateway process runs better with, set once at start-up by createGateway. Each is
 * left as the operator set it where they named its flag in node's arguments or in NODE_OPTIONS
 * (either way round). Both are flags V8 reads at each collection, so setting them at start-up has
 * the effect of passing them to node. Found on Node 24 under 76 KB requests, where each once made
 * a request cost about twice its CPU (issue #17, its ninth session in bench/RESULTS.md).
 */
export const GC_SETTINGS: readonly { readonly flag: string; readonly set: string }[] = [
  /**
   * V8 watches how many objects from each literal in the code survive a young collection, and past
   * 85% allocates that literal's objects in the old generation from then on. Once some per-request
   * object is allocated there, it holds its request's young objects, the body's Buffers among them,
   * through every young collection until a full one, since V8 cannot tell an old object is dead
   * without one. Those Buffers' external memory then starts full collections: every 300 ms in a
   * build that stepped at once, which with this flag off stayed out of it.
   */
  { flag: 'allocation-site-pretenuring', set: '--no-allocation-site-pretenuring' },
  /**
   * When to start marking the old generation. V8's own rule starts it as soon as the room left
   * below the old generation's limit is smaller than the young generation's target size, which on
   * Node 24 grows past 100 MB (134 MB measured; 34 MB on Node 20): with about 60 MB live and the
   * limit 80 MB above it, that held after every full collection, so marking started again at once,
   * and full collections (35 in 5 s) took the place of scavenges. These two replace that rule with
   * shares of the room used since the last full collection: marking starts at 70%, and at once at
   * 90%. Marking still finishes before the limit, with the room's last 30% to do it in. On Node 20,
   * whose young generation stays small, the bench's mix ran with no more full collections with
   * them than without.
   */
  { flag: 'incremental-marking-soft-trigger', set: '--incremental-marking-soft-trigger=70' },
  { flag: 'incremental-marking-hard-trigger', set: '--incremental-marking-hard-trigger=90' },
];

/** Applies GC_SETTINGS but those the operator named; returns the flags it set. */
export function tuneGc(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): string[] {
  const named = [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.replace(/_/g, '-'));
  const set: string[] = [];
  for (const { flag, set: value } of GC_SETTINGS) {
    if (named.some((arg) => arg.includes(flag))) continue;
    setFlagsFromString(value);
    set.push(value);
  }
  return set;
}

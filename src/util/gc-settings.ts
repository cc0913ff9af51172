import { getHeapStatistics, setFlagsFromString } from 'node:v8';

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

/**
 * The young generation's size, which V8 reads only when it sets up the heap: unlike GC_SETTINGS it
 * must be on node's command line (v8.setFlagsFromString at start-up changes nothing, as a test
 * shows). Measured in memory cgroups of 1–12 GB and on a 24 GB machine (issue #17, nineteenth
 * session): V8 sizes a semi-space from the heap's limit, which node sets from the memory it has
 * (524 MB with 1 GB, 2,096 MB from 4 GB, 4,144 MB with 24 GB uncontained), rounded down to a power
 * of two: 1/128 of it and at most 16 MB on Node 20 and 22, 1/32 and at most 32 MB on Node 24. A
 * scavenge costs about the same at either size, so twice the room is half the scavenges: on Node
 * 20, 4.45 → 2.2 per 1,000 small Chat requests, about 19 → 10 µs of CPU a request on a slow EPYC
 * (eighteenth session). `npm start` and the bench pass 32, Node 24's choice from 2 GB up; the
 * workers of `--workers` get Node 24's choice for their machine.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';
/** The first Node whose V8 sizes its semi-spaces as below by itself. */
const SIZES_BY_ITSELF = 24;
/** Before Node 24 and on it: a semi-space's share of the heap limit, and its cap in MB. */
const BEFORE = { share: 128, capMb: 16 };
const NODE_24 = { share: 32, capMb: 32 };

/** A semi-space size in MB as V8 takes it: a power of two (V8 rounds a flag's 17 up to 32). */
const semiMb = (limitMb: number, { share, capMb }: typeof BEFORE): number => (limitMb < share ? 0 : Math.min(capMb, 2 ** Math.floor(Math.log2(limitMb / share))));

/** Flags node was started with, from its arguments and NODE_OPTIONS, spelled with dashes. */
function namedFlags(execArgv: readonly string[], nodeOptions: string): string[] {
  return [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.replace(/_/g, '-'));
}

export interface NodeRuntime {
  readonly version: string;
  readonly execArgv: readonly string[];
  readonly nodeOptions: string;
  /** v8.getHeapStatistics().heap_size_limit, in bytes: the old generation's limit and the young's. */
  readonly heapSizeLimit: number;
}

/** This process's node, as youngGenerationFlags reads it. */
export const thisNode = (): NodeRuntime => ({
  version: process.versions.node,
  execArgv: process.execArgv,
  nodeOptions: process.env['NODE_OPTIONS'] ?? '',
  heapSizeLimit: getHeapStatistics().heap_size_limit,
});

/**
 * The semi-space size Node 24 would choose with this heap limit, as a flag, on a Node that would
 * choose less, unless the operator named a semi-space size (either way round); else none.
 */
export function youngGenerationFlags(node: NodeRuntime = thisNode()): string[] {
  if (Number(node.version.split('.')[0]) >= SIZES_BY_ITSELF) return [];
  if (namedFlags(node.execArgv, node.nodeOptions).some((arg) => arg.includes('semi-space-size'))) return [];
  const limitMb = node.heapSizeLimit / 2 ** 20;
  const wanted = semiMb(limitMb, NODE_24);
  return wanted > semiMb(limitMb, BEFORE) ? [`--max-semi-space-size=${wanted}`] : [];
}

/** Applies GC_SETTINGS but those the operator named; returns the flags it set. */
export function tuneGc(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): string[] {
  const named = namedFlags(execArgv, nodeOptions);
  const set: string[] = [];
  for (const { flag, set: value } of GC_SETTINGS) {
    if (named.some((arg) => arg.includes(flag))) continue;
    setFlagsFromString(value);
    set.push(value);
  }
  return set;
}

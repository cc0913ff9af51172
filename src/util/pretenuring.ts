import { setFlagsFromString } from 'node:v8';

const FLAG = 'allocation-site-pretenuring';

/**
 * Turns V8's allocation-site pretenuring off for this process, unless the operator named the flag
 * on the command line or in NODE_OPTIONS (either way round): Junction's request objects die young,
 * and V8's guess that they do not is one way large requests came to cost up to twice their CPU
 * (issue #17, ninth session, bench/RESULTS.md; a full Node 24 run still showed that slowdown, so
 * it is not the only one).
 *
 * How: V8 watches how many objects from each literal in the code survive a young collection, and
 * past 85% allocates that literal's objects in the old generation from then on. Once some
 * per-request object is allocated there, it holds the request's young objects, the body's Buffers
 * among them, through every young collection until a full one, since V8 cannot tell an old object
 * is dead without one. Those Buffers are memory outside V8's heap, so they pile up until V8's
 * external-memory trigger starts a full collection, and the cycle repeats: on Node 24 a full
 * collection every 300 ms under 76 KB requests, where young collections had freed them. Whether
 * a literal crosses the line depends on timing, hence runs of the same build that stayed fast and
 * runs that did not. Measured: with the flag off, young collections freed the Buffers again, and
 * paired probes of small Chat, a Messages stream and the 76 KB request cost the same or less.
 *
 * The flag is read by V8 at each collection and each optimisation, so setting it at start-up,
 * before any load, has the effect of passing it to node.
 */
export function avoidPretenuring(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): boolean {
  const named = [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => arg.replace(/_/g, '-').includes(FLAG));
  if (named) return false;
  setFlagsFromString(`--no-${FLAG}`);
  return true;
}

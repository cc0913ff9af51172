// Scenario 7's readings, answered over IPC by every arm's server (run.mjs, heldStreams).
// - `rss`: the process's resident set as it stands, as the scenario has always read it.
// - `live`: what the heap and its external memory hold after two full collections, or null unless
//   node runs with --expose-gc. Unlike RSS it does not move with when V8 grows its spaces or frees
//   pages: 1,000 native streams on Node 20 read 33–55 KB a stream in RSS run to run (−1 to 7 when
//   collections ran just before each reading), and 28.9–29.8 KB live every time, for the first
//   thousand and the second, with 16 or 32 MB semi-spaces alike (issue #17, nineteenth session).
export function answerMemory(msg) {
  if (msg === 'rss') process.send?.({ rss: process.memoryUsage().rss });
  if (msg === 'live') {
    const { gc } = globalThis;
    if (typeof gc !== 'function') return void process.send?.({ live: null });
    gc();
    gc();
    const { heapUsed, external } = process.memoryUsage();
    process.send?.({ live: heapUsed + external });
  }
}

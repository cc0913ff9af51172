// mocha's settings (issue #12: `npm test` in under a minute on the 2-core CI machine).
// - Files run in parallel worker processes: much of the suite waits on timers, sockets and the
//   gateway processes some tests start, so one job more than there are cores keeps both busy.
//   Each file is independent of the others (its own gateways, ports, ledgers, Redis prefixes).
// - The files that take longest (those starting `junction serve` processes) are queued first, so
//   none of them is left running alone at the end.
const { availableParallelism } = require('node:os');

module.exports = {
  'node-option': ['import=tsx/esm'],
  spec: ['test/cli/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/store/**/*.test.ts', 'test/usage/**/*.test.ts', 'test/!(cli|e2e|store|usage)/**/*.test.ts'],
  parallel: true,
  jobs: Math.min(4, availableParallelism() + 1),
  timeout: 15000,
  reporter: 'dot',
  exit: false,
};

// Issue #17, seventh session: Junction's 76 KB request on Node 24 doubles in CPU per request once
// the process has idled, and stays doubled (bench/RESULTS.md). This reproduces it: cycles of the 76
// KB Claude Code request, native then translated, 4 s each at concurrency 32, with idle gaps
// between them like the ones the bench's other arms leave. It prints CPU per request per arm per
// cycle. Run back to back (idleSeconds 0), the step was not seen in 630 s.
//
//   node bench/idle-gc.mjs [cycles=8] [idleSeconds=30]
//   GC_LOG=/tmp/gc.log  also run Junction with --trace-gc, its output to that file
//   IDLE_SERVER=bench/floor-server.ts  run that server instead of Junction (native arm only)
//   IDLE_NODE_ARGS="--flag …"  node arguments added before the server's
//   IDLE_MIX=1  each cycle runs the bench's five scenarios in its order instead (small Chat, the
//               Messages stream, the 76 KB request whole and streamed, the Chat stream), all native:
//               the pattern of the full Node 24 run that stepped from its second round (ninth session)
//
// Run it on Node 24 with the addon built for that Node, as bench/node24.sh does. The step came in
// the 4th to 7th cycle in the seventh session's runs, and in none of one 8-cycle run in the eighth's:
// it is V8's external-memory trigger winning a race (bench/RESULTS.md, eighth session). To see what
// starts each collection, run it with --trace-incremental-marking added beside --trace-gc.
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pinned, startServer, throughput } from './load.mjs';
import { claudeCode, HEADERS, PATH, SIM, small } from './requests.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [cycles = '8', idle = '30'] = process.argv.slice(2);
if (pinned) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]);
const body = (prefix, stream = false) => claudeCode(`${prefix}${SIM}`, stream);
const CHAT = [PATH.chat, HEADERS.chat];
const MESSAGES = [PATH.messages, HEADERS.messages];
const server = process.env.IDLE_SERVER ?? 'bench/junction-server.ts';
// [name, path, headers, body]
const ARMS = process.env.IDLE_MIX
  ? [
      ['small Chat', ...CHAT, small(`o/${SIM}`, false)],
      ['Messages stream', ...MESSAGES, small(`a/${SIM}`, true)],
      ['76 KB', ...MESSAGES, body('a/')],
      ['76 KB streamed', ...MESSAGES, body('a/', true)],
      ['Chat stream', ...CHAT, small(`o/${SIM}`, true)],
    ]
  : server.includes('floor')
    ? [['native', ...MESSAGES, body('a/')]]
    : [['native', ...MESSAGES, body('a/')], ['translated', ...MESSAGES, body('o/')]];
const nodeArgs = (process.env.IDLE_NODE_ARGS ?? '').split(' ').filter(Boolean);

const upstream = await startServer(0, process.execPath, [path.join(ROOT, 'bench/upstream.mjs')], { cwd: ROOT });
const gcLog = process.env.GC_LOG;
const junction = await startServer(1, process.execPath, [...(gcLog ? ['--trace-gc'] : []), ...nodeArgs, '--import', './bin/register.mjs', server, upstream.url, SIM], { cwd: ROOT });
// With the trace on, each arm's line also counts the collections that ran during its window.
const seen = { markCompact: 0, scavenge: 0 };
if (gcLog) {
  const log = createWriteStream(gcLog);
  junction.child.stdout.on('data', (d) => {
    log.write(d);
    const text = String(d);
    seen.markCompact += text.split('Mark-Compact').length - 1;
    seen.scavenge += text.split('Scavenge').length - 1;
  });
}
try {
  for (let cycle = 1; cycle <= Number(cycles); cycle++) {
    const out = [];
    for (const [arm, route, headers, bytes] of ARMS) {
      const before = { ...seen };
      const { cpuUs } = await throughput(junction.url, route, headers, bytes, 32, 4, junction.child.pid);
      const gcs = gcLog ? ` (${seen.markCompact - before.markCompact} MC, ${seen.scavenge - before.scavenge} scavenges)` : '';
      out.push(`${arm} ${Math.round(cpuUs)} µs${gcs}`);
      await new Promise((resolve) => setTimeout(resolve, Number(idle) * 1000));
    }
    console.log(`cycle ${cycle}: ${out.join(', ')}`);
  }
} finally {
  junction.child.kill('SIGTERM');
  upstream.child.kill('SIGTERM');
}

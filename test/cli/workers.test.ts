import type Database from 'better-sqlite3';
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/sqlite/database.ts';
import { FakeUpstream, FIXTURES } from '../support/fake-upstream.ts';
import { serveProcess, stopProcess, type ServedProcess } from '../support/serve-process.ts';
import { limiterBackends } from '../support/services.ts';
import { junction } from '../support/cli.ts';
import { thisNode, youngGenerationFlags } from '../../src/util/gc-settings.ts';

// `junction serve --workers N` (issue #7): N full gateways on one port, one ledger file.
const KEY = 'sk-jct-workers-0123456789abcdef';
const headers = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };
const ask = (url: string, stream = false) =>
  fetch(`${url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ model: 'm', max_tokens: 50, stream, messages: [{ role: 'user', content: 'x' }] }) });
const redis = limiterBackends('the --workers suite').find((l) => l.name === 'Redis');

describe('serve --workers', function () {
  this.timeout(60_000);
  let upstream: FakeUpstream;
  let dir: string;
  let served: ServedProcess | undefined;
  before(async () => {
    upstream = await new FakeUpstream().start();
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'junction-workers-'));
  });
  afterEach(async () => {
    upstream.script(undefined);
    // A test's own group (the group describe below keeps its own until its end).
    if (served) await stopProcess(served, 'SIGKILL');
    served = undefined;
  });
  after(() => upstream.close());

  const config = (limits = '', extra = ''): string => {
    const file = path.join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `storage: { url: "sqlite://ledger.db" }
log: { level: silent }
auth: { keys: [{ name: k, key: "${KEY}", balance_usd: 10${limits} }] }
providers: [{ id: up, plugin: anthropic, base_url: "${upstream.url}", api_key: x }]
models: [{ id: m, routes: [{ provider: up }], pricing: { input: 3, output: 15 } }]
${extra}`,
    );
    return file;
  };
  /** The ledger file, read as another process would. */
  const ledger = <T>(read: (db: Database.Database) => T): T => {
    const db = openDatabase(path.join(dir, 'ledger.db'), { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  };
  const alivePids = (): number[] => ledger((db) => (db.prepare('SELECT pid FROM instances ORDER BY pid').all() as { pid: number }[]).map((r) => Number(r.pid)));

  // One group of two workers through its life, start to drain: each process start costs about
  // 2 s of CPU, so the group is shared by these tests (issue #12), which run in this order.
  describe('one group, from start to drain', () => {
    let groupDir: string;
    let group: ServedProcess | undefined;
    const served = (): ServedProcess => {
      if (!group) throw new Error('the group did not start');
      return group;
    };
    before(async () => {
      groupDir = dir = mkdtempSync(path.join(tmpdir(), 'junction-workers-'));
      group = await serveProcess(config('', 'server: { metrics: public }'), ['--workers', '2']);
    });
    beforeEach(() => {
      dir = groupDir;
    });
    after(async () => {
      if (group) await stopProcess(group, 'SIGKILL');
    });

    it('serves from two workers on one port, both registered on the one ledger', async () => {
      const statuses = await Promise.all(Array.from({ length: 20 }, async () => (await ask(served().url)).status));
      expect(statuses.every((s) => s === 200)).to.equal(true);
      const pids = alivePids();
      expect(pids).to.have.length(2);
      expect(new Set(pids).size).to.equal(2);
      expect(pids).not.to.include(served().child.pid);
      // Forked with the young generation Node 24 would choose here, where this Node chooses less
      // (issue #17); the primary was started without it. Read from /proc, so on Linux only.
      const wanted = youngGenerationFlags({ ...thisNode(), execArgv: [] });
      for (const pid of existsSync('/proc/self/cmdline') ? pids : []) {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        expect(argv.filter((arg) => arg.includes('semi-space')), argv.join(' ')).to.deep.equal(wanted);
      }
      // Each request is settled just after its answer ends: allow the last ones a moment.
      let rows = { n: 0 };
      for (let i = 0; i < 100 && rows.n < 20; i++) {
        rows = ledger((db) => db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number });
        if (rows.n < 20) await new Promise((r) => setTimeout(r, 20));
      }
      expect(rows).to.deep.equal({ n: 20 });
      if (!redis) expect(served().stderr()).to.match(/no redis configured: each of the 2 workers enforces rate limits on its own/);
    });

    it('a scrape of /metrics on the shared port counts every worker\'s requests, whichever worker answers', async () => {
      // The 20 requests above went to both workers; each scrape lands on one of them.
      for (let i = 0; i < 4; i++) {
        const text = await (await fetch(`${served().url}/metrics`)).text();
        const line = text.split('\n').find((l) => l.startsWith('junction_requests_total{') && l.includes('model="m"') && l.includes('status_class="2xx"'));
        expect(line, text.slice(0, 500)).to.match(/ 20$/);
      }
    });

    it('replaces a worker killed mid-stream, and the replacement settles the hold it left', async () => {
      upstream.script(() => ({ sse: FIXTURES.anthropicTextSse(), eventDelayMs: 5000 }));
      const streaming = await ask(served().url, true);
      const inFlight = streaming.headers.get('x-request-id')!;
      await streaming.body!.getReader().read();
      upstream.script(undefined);
      // The worker holding the stream, found through its hold.
      const pid = ledger((db) => (db.prepare('SELECT pid FROM instances JOIN holds ON holds.instance = instances.id').get() as { pid: number }).pid);
      process.kill(Number(pid), 'SIGKILL');
      await served().saidOnStderr(/starting a replacement/);
      expect(served().stderr()).to.match(new RegExp(`worker ${pid} exited \\(SIGKILL\\); starting a replacement`));
      // The replacement reconciles before it serves: once it says it serves, the hold is settled.
      await served().saidOnStderr(/(junction worker \d+ serving[^]*){3}/);
      const row = ledger((db) => db.prepare('SELECT outcome, estimated FROM ledger WHERE request_id = ?').get(inFlight));
      expect(row).to.deep.equal({ outcome: 'interrupted', estimated: 1 });
      expect(ledger((db) => db.prepare('SELECT held FROM key_counters').get())).to.deep.equal({ held: 0 });
      expect((await ask(served().url)).status).to.equal(200);
      expect(alivePids()).to.have.length(2);
    });

    it('drains on SIGTERM: a stream in flight ends whole, then every process exits 0', async () => {
      upstream.script(() => ({ sse: FIXTURES.anthropicTextSse(), eventDelayMs: 150 }));
      const streaming = await ask(served().url, true);
      const reader = streaming.body!.getReader();
      await reader.read();
      const exited = stopProcess(served(), 'SIGTERM');
      let text = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += Buffer.from(chunk.value).toString();
      expect(text).to.contain('event: message_stop');
      expect(await exited).to.equal(0);
      expect(served().stderr()).to.match(/SIGTERM received, draining 2 workers/);
    });
  });

  (redis ? it : it.skip)('shares one rpm limit between the workers through Redis', async () => {
    served = await serveProcess(config(', limits: { rpm: 5 }', redis?.yaml()), ['--workers', '2']);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await ask(served.url);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
  });

  // Refused before anything starts, so in-process (support/cli.ts).
  it('refuses a bad worker count, and a ledger the workers could not share', async () => {
    const zero = await junction('serve', '--config', config(), '--workers', '0');
    expect(zero.code).to.equal(2);
    expect(zero.stderr).to.match(/--workers must be an integer from 1 to 256 or "auto", got "0"/);
    const file = path.join(dir, 'memory.yaml');
    writeFileSync(file, 'storage: { url: "sqlite://:memory:" }\nlog: { level: silent }\n');
    const memory = await junction('serve', '--config', file, '--workers', '2');
    expect(memory.code).to.equal(2);
    expect(memory.stderr).to.match(/--workers needs a shared store: sqlite:\/\/:memory:/);
  });
});

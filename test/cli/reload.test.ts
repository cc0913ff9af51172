import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serveProcess, stopProcess, type ServedProcess } from '../support/serve-process.ts';

// Hot reload from outside (issue #16): SIGHUP, server.watch_config, and with --workers, every worker.
const KEY = 'sk-jct-reload-0123456789abcdef';
const ADMIN = 'sk-jct-reload-admin-0123456789';

/** A deployment of offline mock models named `models`. */
function yaml(models: readonly string[], server = ''): string {
  return `storage: { url: "sqlite://ledger.db" }
log: { level: silent }
server: { ${server} }
auth: { admin_key: ${ADMIN}, keys: [{ name: k, key: "${KEY}", balance_usd: 10 }] }
providers: [{ id: mock, plugin: mock }]
models:
${models.map((id) => `  - { id: ${id}, routes: [{ provider: mock }], pricing: { input: 1, output: 1 } }`).join('\n')}
`;
}

/** The model's status on a fresh connection each time, so that the workers take turns. */
async function status(url: string, model: string): Promise<number> {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

const count = (text: string, pattern: RegExp): number => text.match(new RegExp(pattern, 'g'))?.length ?? 0;

describe('hot reload of a running serve (issue #16)', function () {
  this.timeout(60_000);
  let dir: string;
  let file: string;
  let served: ServedProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'junction-reload-cli-'));
    file = path.join(dir, 'gateway.yaml');
  });
  afterEach(async () => {
    if (served) await stopProcess(served, 'SIGKILL');
    served = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('one process: SIGHUP reloads, a broken file is reported and changes nothing, and watch_config reloads on save', async () => {
    writeFileSync(file, yaml(['first'], 'watch_config: true'));
    served = await serveProcess(file);
    const gw = served;
    expect(await status(gw.url, 'first')).to.equal(200);

    writeFileSync(file, yaml(['second'], 'watch_config: true'));
    // The watcher may see the save first: either way, one reload brings `second` in.
    await gw.saidOnStderr(/(SIGHUP|file changed): configuration reloaded/);
    expect(await status(gw.url, 'second')).to.equal(200);
    expect(await status(gw.url, 'first')).to.equal(404);

    writeFileSync(file, yaml(['third'], 'watch_config: true').replace('provider: mock', 'provider: mok'));
    await gw.saidOnStderr(/the configuration was not reloaded, nothing changed:\n {2}models\[0\]\.routes\[0\]\.provider: unknown provider "mok"/);
    expect(await status(gw.url, 'second')).to.equal(200);

    const before = count(gw.stderr(), /SIGHUP: configuration reloaded/g);
    writeFileSync(file, yaml(['fourth'], 'watch_config: true'));
    gw.child.kill('SIGHUP');
    await gw.saidOnStderr(new RegExp(`(SIGHUP: configuration reloaded[^]*){${before + 1}}`));
    expect(await status(gw.url, 'fourth')).to.equal(200);
    expect(gw.child.exitCode).to.equal(null);
  });

  it('--workers: POST /admin/reload on one worker reloads them all, and so does SIGHUP to the supervisor', async () => {
    writeFileSync(file, yaml(['first']));
    served = await serveProcess(file, ['--workers', '2']);
    const gw = served;

    writeFileSync(file, yaml(['second']));
    const res = await fetch(`${gw.url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).to.equal(200);
    // The worker that answered has reloaded; the supervisor reloads the other one.
    await gw.saidOnStderr(/worker \d+: configuration reloaded/);
    const statuses = await Promise.all(Array.from({ length: 6 }, () => status(gw.url, 'second')));
    expect(statuses).to.deep.equal(Array(6).fill(200));

    writeFileSync(file, yaml(['third']));
    gw.child.kill('SIGHUP');
    await gw.saidOnStderr(/(worker \d+: configuration reloaded[^]*){3}/);
    const after = await Promise.all(Array.from({ length: 6 }, async () => [await status(gw.url, 'third'), await status(gw.url, 'second')]));
    expect(after).to.deep.equal(Array(6).fill([200, 404]));
  });
});

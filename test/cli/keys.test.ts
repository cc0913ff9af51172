import { expect } from 'chai';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { LogCapture, msUntilStatus } from '../support/gateway.ts';
import { junction } from '../support/cli.ts';

const BIN = fileURLToPath(new URL('../../bin/junction.js', import.meta.url));

/** The real bin in a process of its own, with the shell's environment. */
function spawned(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The commands run in-process (support/cli.ts), against a gateway running beside them on the same
 * ledger file; the shell test below runs the real bin.
 */
describe('junction keys (CLI) against a running gateway', () => {
  let file: string;
  let gateway: Gateway;
  let url: string;
  const ask = (key: string) =>
    fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
  const msUntil = (key: string, status: number) => msUntilStatus(url, key, status);

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'junction-keys-'));
    file = path.join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      `storage: { url: "sqlite://ledger.db" }
providers: [{ id: mock, plugin: mock }]
models: [{ id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }]
`,
    );
    gateway = await createGateway(loadConfig(file), { logDestination: new LogCapture() });
    url = `http://127.0.0.1:${(await gateway.listen('127.0.0.1', 0)).port}`;
  });
  after(() => gateway.close());

  it('creates a key that works on the running gateway within a second, then tops it up, lists and disables it', async () => {
    const created = await junction('keys', 'create', '--config', file, '--name', 'bob', '--balance-usd', '5', '--models', 'demo,gpt-*', '--rpm', '60');
    expect(created.code).to.equal(0);
    const key = created.stdout.trim();
    expect(key).to.match(/^sk-jct-[A-Za-z0-9_-]{32}$/);
    expect(created.stderr).to.include('created key "bob" (balance $5)');
    expect(await msUntil(key, 200)).to.be.below(1000);

    const topped = await junction('keys', 'topup', '--config', file, '--name', 'bob', '--usd', '2.50');
    expect(topped).to.deep.include({ code: 0, stdout: 'bob: balance $7.5\n' });

    const listed = await junction('keys', 'list', '--config', file);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).to.match(/^NAME\s+PREFIX\s+BALANCE\s+HELD\s+SPENT\s+REQUESTS\s+LIMITS\s+STATUS$/);
    expect(row).to.match(new RegExp(`^bob\\s+${key.slice(0, 11)}…\\s+\\$7\\.5\\s+\\$0\\s+\\$0\\s+\\d+\\s+rpm=60\\s+active$`));
    expect(listed.stdout).not.to.include(key);

    expect((await junction('keys', 'disable', '--config', file, '--name', 'bob')).code).to.equal(0);
    expect(await msUntil(key, 401)).to.be.below(1000);
    expect(((await (await ask(key)).json()) as { error: { message: string } }).error.message).to.equal('this API key has been disabled');
    expect(await junction('keys', 'enable', '--config', file, '--name', 'bob')).to.deep.include({ code: 0, stdout: 'bob: active\n' });
    expect(await msUntil(key, 200)).to.be.below(1000);
  });

  it('refuses a key disabled while a keep-alive connection carries it, on that same connection', async () => {
    // The connection remembers the key it presented (auth/key-store.ts, issue #17): a reload
    // must still reach it.
    const created = await junction('keys', 'create', '--config', file, '--name', 'kept');
    const key = created.stdout.trim();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const body = JSON.stringify({ model: 'demo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const send = (): Promise<{ status: number; reused: boolean }> =>
      new Promise((resolve, reject) => {
        const req = http.request(`${url}/v1/messages`, { method: 'POST', agent, headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      // A key the cache has not loaded yet is found in the store (authenticate); then it is cached.
      expect(await send()).to.include({ status: 200 });
      expect(await send()).to.deep.equal({ status: 200, reused: true });
      expect(await send()).to.deep.equal({ status: 200, reused: true });
      expect((await junction('keys', 'disable', '--config', file, '--name', 'kept')).code).to.equal(0);
      // Reloading refreshes the keys at once, where the poll would within a second.
      await gateway.reload();
      expect(await send()).to.deep.equal({ status: 401, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('creates a key with --rpm, --tpm and --concurrency, lists them and the running gateway enforces them', async () => {
    const created = await junction('keys', 'create', '--config', file, '--name', 'limited', '--rpm', '2', '--tpm', '100000', '--concurrency', '3');
    expect(created.code).to.equal(0);
    const key = created.stdout.trim();
    expect((await gateway.store.listKeys()).find((k) => k.name === 'limited')?.limits).to.deep.equal({ rpm: 2, tpm: 100000, concurrency: 3 });
    const listed = await junction('keys', 'list', '--config', file);
    expect(listed.stdout).to.match(/\nlimited\s+\S+\s+unlimited\s+\$0\s+\$0\s+\d+\s+rpm=2,tpm=100000,concurrency=3\s+active\n/);
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const res = await ask(key);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).to.deep.equal([200, 200, 429]);
  });

  it('refuses limits that are not positive integers', async () => {
    for (const [flag, value] of [['--rpm', '0'], ['--tpm', '1.5'], ['--concurrency', 'many'], ['--rpm', '-3'], ['--tpm', '']]) {
      const res = await junction('keys', 'create', '--config', file, '--name', 'bad-limits', `${flag}=${value}`);
      expect(res.code, `${flag} ${value}`).to.equal(2);
      expect(res.stderr).to.include(`junction: ${flag} must be a positive integer`);
    }
    expect((await gateway.store.listKeys()).some((k) => k.name === 'bad-limits')).to.equal(false);
  });

  it('stores only the key’s digest', async () => {
    const created = await junction('keys', 'create', '--config', file, '--name', 'carol');
    const key = created.stdout.trim();
    const stored = await gateway.store.listKeys();
    expect(JSON.stringify(stored, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.to.include(key.slice(11));
    expect(stored.find((k) => k.name === 'carol')).to.deep.include({ balance: null, disabled: false });
  });

  it('fails clearly for a duplicate name, an unknown key, a bad amount and a missing --config', async () => {
    await junction('keys', 'create', '--config', file, '--name', 'dup');
    const duplicate = await junction('keys', 'create', '--config', file, '--name', 'dup');
    expect(duplicate).to.deep.include({ code: 1, stderr: 'junction: a key named "dup" already exists\n' });
    const unknown = await junction('keys', 'topup', '--config', file, '--name', 'nobody', '--usd', '1');
    expect(unknown).to.deep.include({ code: 1, stderr: 'junction: no key named "nobody"\n' });
    const bad = await junction('keys', 'topup', '--config', file, '--name', 'dup', '--usd', 'lots');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/^junction: --usd must be an amount in USD/);
    const noConfig = await junction('keys', 'list');
    expect(noConfig.code).to.equal(2);
  });

  it('needs no provider secret in the shell: keys work where check-config refuses the file (issue #12)', async () => {
    const deployed = path.join(path.dirname(file), 'deployed.yaml');
    writeFileSync(
      deployed,
      `storage: { url: "sqlite://ledger.db" }
auth: { keys: [{ name: ops, key: "\${JCT_TEST_UNSET_OPS_KEY}" }] }
providers:
  - { id: anthropic, plugin: anthropic, api_key: "\${JCT_TEST_UNSET_ANTHROPIC_API_KEY}" }
  - { id: mock, plugin: mock }
models: [{ id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }]
`,
    );
    const created = await spawned('keys', 'create', '--config', deployed, '--name', 'no-secrets', '--balance-usd', '5');
    expect(created.stderr).to.include('created key "no-secrets" (balance $5)');
    expect(created.code).to.equal(0);
    // The same ledger the running gateway uses: the key works there.
    expect(await msUntil(created.stdout.trim(), 200)).to.be.below(1000);
    expect((await junction('keys', 'list', '--config', deployed)).stdout).to.match(/\nno-secrets\s+\S+\s+\$5\s/);
    const checked = await junction('check-config', deployed);
    expect(checked.code).to.equal(1);
    expect(checked.stderr).to.include('providers[0].api_key: environment variable JCT_TEST_UNSET_ANTHROPIC_API_KEY is not set');
  });
});

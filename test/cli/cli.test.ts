import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { junction } from '../support/cli.ts';
import { thisNode, youngGenerationFlags } from '../../src/util/gc-settings.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = path.join(ROOT, 'bin/junction.js');
const DEMO_KEY = 'sk-jct-local-demo-key-change-me';

/** A ledger of the tests' own, so serving the default config writes nothing into the repository. */
const STORAGE = `sqlite://${path.join(mkdtempSync(path.join(tmpdir(), 'junction-cli-store-')), 'ledger.db')}`;

/** The environment of a newcomer's machine: no provider keys. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, JUNCTION_STORAGE_URL: STORAGE };
  for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'JUNCTION_KEY']) delete env[name];
  return env;
}

function run(args: string[], command = process.execPath): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, command === process.execPath ? [BIN, ...args] : args, { cwd: ROOT, env: cleanEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `junction serve` and resolves once it prints its address. */
function serve(args: string[]): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve', ...args], { cwd: ROOT, env: cleanEnv() });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(stderr);
      if (match?.[1]) resolve({ child, url: match[1], stderr: () => stderr });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

function tempConfig(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'junction-cli-'));
  const file = path.join(dir, 'gateway.yaml');
  writeFileSync(file, text);
  return file;
}

describe('command line', () => {
  // check-config and the usage errors run in-process (support/cli.ts); the bin itself, npx and serve
  // run as processes below.
  it('check-config accepts the default config', async () => {
    const { code, stdout } = await junction('check-config', path.relative(process.cwd(), path.join(ROOT, 'config/gateway.yaml')));
    expect(code).to.equal(0);
    expect(stdout).to.match(/config\/gateway\.yaml: ok \(4 providers, 17 models, 1 keys\)\n$/);
  });

  it('check-config prints every problem on its own line with its YAML path, and exits non-zero', async () => {
    const file = tempConfig(`
server: { port: "eighty" }
providers:
  - { id: a, plugin: ./nowhere.js }
models:
  - { id: m, routes: [{ provider: antropic }], pricing: { input: 1, output: 1 } }
  - { id: n, routes: [{ provider: a }], pricing: { input: 1 } }
`);
    const { code, stderr } = await junction('check-config', file);
    expect(code).to.equal(1);
    const lines = stderr.trim().split('\n');
    expect(lines[0]).to.equal(`${file}: 3 problems`);
    expect(lines.slice(1)).to.have.members([
      'server.port: must be number, got string (line 2)',
      'models[1].pricing.output: is required for a model with text output (line 7)',
      'models[0].routes[0].provider: unknown provider "antropic" (line 6)',
    ]);
  });

  it('check-config reports a bad plugin with its YAML path', async () => {
    const file = tempConfig('providers: [{ id: a, plugin: ./nowhere.js }]\n');
    const { code, stderr } = await junction('check-config', file);
    expect(code).to.equal(1);
    expect(stderr).to.match(/^providers\[0\]\.plugin: cannot load "\.\/nowhere\.js": /);
  });

  it('fails clearly for a missing file, a missing argument and an unknown command', async () => {
    const missing = await junction('check-config', 'no/such/file.yaml');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal('no/such/file.yaml: 1 problem\ncannot read the file: ENOENT\n');
    const noArg = await junction('serve');
    expect(noArg.code).to.equal(2);
    expect(noArg.stderr).to.match(/^junction: serve needs --config <file>\n/);
    const unknown = await junction('frobnicate');
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/^junction: unknown command "frobnicate"/);
  });

  it('is installed as the `junction` bin: npx junction works in the repo', async () => {
    const { code, stdout } = await run(['--no-install', 'junction', 'check-config', 'config/gateway.yaml'], 'npx');
    expect(code).to.equal(0);
    expect(stdout).to.include('config/gateway.yaml: ok');
  });

  it('serves the default config (npm start) with --host/--port overrides: the demo works, keyless providers answer 503', async () => {
    const { child, url, stderr } = await serve(['--config', 'config/gateway.yaml', '--host', '127.0.0.1', '--port', '0']);
    try {
      expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.to.equal('http://127.0.0.1:8080');
      expect(stderr()).to.include('provider "anthropic" has no API key: set ANTHROPIC_API_KEY');
      // Started without the young-generation flag: Node 20 and 22 are told how to add it (issue
      // #17); here the flag is what this process would be told, were node's arguments its own.
      const [flag] = youngGenerationFlags({ ...thisNode(), execArgv: [] });
      expect(stderr().includes('young generation'), stderr()).to.equal(flag !== undefined);
      if (flag !== undefined) expect(stderr()).to.include(`start it with ${flag} for fewer young collections (docs/deployment.md)`);
      const demo = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': DEMO_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }),
      });
      expect(demo.status).to.equal(200);
      expect(((await demo.json()) as { content: { text: string }[] }).content[0]?.text).to.include('"Hello"');
      for (const [model, variable] of [
        ['claude-sonnet-4-6', 'ANTHROPIC_API_KEY'],
        ['gpt-4o', 'OPENAI_API_KEY'],
        ['gpt-4o-mini', 'OPENROUTER_API_KEY'],
      ] as const) {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] }),
        });
        expect(res.status, model).to.equal(503);
        expect(((await res.json()) as { error: { message: string } }).error.message).to.include(`set ${variable}`);
      }
    } finally {
      expect(await stop(child)).to.equal(0);
    }
  });

  it('refuses to start on a busy port with one clear line', async () => {
    const occupant = net.createServer();
    await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((occupant.address() as net.AddressInfo).port);
      const second = await run(['serve', '--config', 'config/gateway.yaml', '--port', port]);
      expect(second.code).to.equal(1);
      expect(second.stderr).to.match(/^junction: cannot listen: listen EADDRINUSE/);
    } finally {
      await new Promise((resolve) => occupant.close(resolve));
    }
  });
});

import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RecordedRequest, Reply } from '../support/fake-upstream.ts';
import { call, KEYS, PROVIDER_KEYS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * Codex CLI itself (`@openai/codex`, a native binary from npm), driven by `codex exec` against
 * Junction as a custom provider with `wire_api = "responses"` (issue #14; responses-api.md §9), on
 * a native route to a loopback upstream that answers with a recorded-format stream, and on a
 * translated route to a Messages upstream.
 *
 * Opt-in: set JUNCTION_TEST_CODEX to the `codex` binary. `.ci/run` fetches it
 * (`npm pack @openai/codex@<version>-linux-x64`) and sets it.
 */

const CODEX = process.env['JUNCTION_TEST_CODEX'];
const STREAM = readFileSync(new URL('../fixtures/openai/responses.sse', import.meta.url), 'utf8');
const MESSAGES_STREAM = readFileSync(new URL('../fixtures/anthropic/text.sse', import.meta.url), 'utf8');

const EXTRA = `  - id: gpt-5
    routes: [{ provider: openai-responses, model: gpt-5-2025-08-07 }]
    pricing: { input: 1.25, output: 10, cache_read: 0.125 }
`;

function codexExec(binary: string, home: string, cwd: string, prompt: string, extra: readonly string[] = []): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['exec', '--skip-git-repo-check', ...extra, prompt], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '', HOME: home, CODEX_HOME: home, JUNCTION_API_KEY: KEYS.alice, RUST_LOG: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

(CODEX ? describe : describe.skip)('Codex CLI (opt-in: JUNCTION_TEST_CODEX)', () => {
  const env = useUpstreamAndGateway((url) =>
    standardConfig(url, EXTRA).replace(
      '  - { id: mock, plugin: mock }',
      `  - { id: mock, plugin: mock }\n  - { id: openai-responses, plugin: openai, base_url: "${url}/v1", api_key: "${PROVIDER_KEYS.openai}", options: { formats: [responses] } }`,
    ),
  );
  let home = '';
  before(function () {
    this.timeout(10_000);
    home = mkdtempSync(path.join(tmpdir(), 'junction-codex-'));
    writeFileSync(
      path.join(home, 'config.toml'),
      `model = "gpt-5"\nmodel_provider = "junction"\n[model_providers.junction]\nname = "Junction"\nbase_url = "${env.gw.url}/v1"\nenv_key = "JUNCTION_API_KEY"\nwire_api = "responses"\n`,
    );
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('codex exec on a native route: the turn streams through, Codex prints the answer, the ledger has it', async function () {
    this.timeout(70_000);
    env.upstream.script((req: RecordedRequest): Reply | undefined => (req.url === '/v1/responses' ? { sse: STREAM } : undefined));
    const { code, out } = await codexExec(CODEX ?? '', home, home, 'reply with one word');
    expect(code, out).to.equal(0);
    expect(out).to.include('Olá!');
    const turn = env.upstream.requests.find((r) => r.url === '/v1/responses');
    expect(turn, 'Codex reached the upstream through Junction').to.not.equal(undefined);
    const body = turn?.json() ?? {};
    expect(body).to.include({ model: 'gpt-5-2025-08-07', stream: true });
    expect(turn?.headers['authorization']).to.equal(`Bearer ${PROVIDER_KEYS.openai}`);
    expect(String(turn?.headers['originator'])).to.match(/^codex_/);
    const balance = (await call(`${env.gw.url}/v1/balance`, { headers: { authorization: `Bearer ${KEYS.alice}` } })).json();
    expect(balance['spent_usd']).to.be.above(0);
  });

  it('codex exec on the offline demo model: the in-process answer streamed as Responses events', async function () {
    this.timeout(70_000);
    const { code, out } = await codexExec(CODEX ?? '', home, home, 'hello from codex', ['-m', 'demo']);
    expect(code, out).to.equal(0);
    expect(out).to.include("This is Junction's offline demo model");
    expect(env.upstream.requests.filter((r) => r.url === '/v1/responses')).to.have.length(0);
  });

  it('codex exec on a translated route to a Messages upstream: its tools go up as Anthropic tools (a freeform apply_patch, when this Codex sends one, as a one-string function), the answer comes back', async function () {
    this.timeout(70_000);
    env.upstream.script((req: RecordedRequest): Reply | undefined => (req.url === '/v1/messages' ? { sse: MESSAGES_STREAM } : undefined));
    // Codex offers OpenAI's hosted web search by default; a translated route refuses it (issue #14), so
    // Codex users turn it off for such models, as the README says.
    const { code, out } = await codexExec(CODEX ?? '', home, home, 'say hello', ['-m', 'claude-sonnet-4-6', '-c', 'web_search="disabled"']);
    expect(code, out).to.equal(0);
    expect(out).to.include('Hello!');
    const turn = env.upstream.requests.find((r) => r.url === '/v1/messages');
    expect(turn, 'Codex reached the Messages upstream through Junction').to.not.equal(undefined);
    const body = turn?.json() ?? {};
    expect(body).to.include({ model: 'claude-sonnet-4-6-20260217', stream: true });
    expect(body['system'], 'the instructions became the system prompt').to.be.an('array').that.is.not.empty;
    expect(turn?.headers['x-api-key']).to.equal(PROVIDER_KEYS.anthropic);
    const tools = (body['tools'] as Record<string, unknown>[] | undefined) ?? [];
    expect(tools.length).to.be.greaterThan(0);
    const patch = tools.find((t) => t['name'] === 'apply_patch');
    if (patch) expect(patch['input_schema']).to.have.nested.property('properties.input.type', 'string');
  });
});

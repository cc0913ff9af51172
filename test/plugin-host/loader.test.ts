import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/load.ts';
import { createGateway } from '../../src/gateway.ts';
import { PluginLoadError } from '../../src/plugin-host/loader.ts';
import { call, CHAT_HEADERS, KEYS, MESSAGES_HEADERS, startGateway, LogCapture } from '../support/gateway.ts';

const PLUGINS_DIR = fileURLToPath(new URL('../fixtures/plugins/', import.meta.url));

const config = (providers: string) => `
auth: { keys: [{ name: alice, key: "${KEYS.alice}" }] }
providers:
${providers}
models:
  - { id: echo-model, routes: [{ provider: p0 }], pricing: { input: 1, output: 1 } }
`;

async function loadProblems(providers: string): Promise<string[]> {
  const parsed = parseConfig(config(providers), path.join(PLUGINS_DIR, 'gateway.yaml'), {});
  try {
    const gateway = await createGateway(parsed, { logDestination: new LogCapture() });
    await gateway.close();
  } catch (err) {
    if (err instanceof PluginLoadError) return [...err.problems];
    throw err;
  }
  throw new Error('expected start-up to fail');
}

describe('plugin loading', () => {
  it('loads a plugin from a path relative to the YAML file, with its options, and serves through it', async () => {
    const gw = await startGateway(config('  - { id: p0, plugin: ./echo-plugin.js, options: { prefix: hey } }'), { dir: PLUGINS_DIR });
    try {
      const m = await call(`${gw.url}/v1/messages`, {
        headers: MESSAGES_HEADERS,
        body: { model: 'echo-model', max_tokens: 5, messages: [{ role: 'user', content: 'ping' }] },
      });
      expect(m.status).to.equal(200);
      expect(m.json()['content']).to.deep.equal([{ type: 'text', text: 'hey: ping' }]);
      const c = await call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'echo-model', messages: [{ role: 'user', content: 'pong' }] } });
      expect((c.json()['choices'] as { message: { content: string } }[])[0]?.message.content).to.equal('hey: pong');
    } finally {
      await gw.close();
    }
  });

  it('never hands a plugin that does not declare `invokes` a request of the media endpoints (contract 1.0 and 1.1)', async () => {
    const yaml = `${config('  - { id: p0, plugin: ./echo-plugin.js }')}  - { id: echo-embed, routes: [{ provider: p0 }], pricing: { input: 1 }, output_modalities: [embeddings] }\n`;
    const gw = await startGateway(yaml, { dir: PLUGINS_DIR });
    try {
      const res = await call(`${gw.url}/v1/embeddings`, { headers: CHAT_HEADERS, body: { model: 'echo-embed', input: 'x' } });
      expect(res.status).to.equal(400);
      expect((res.json()['error'] as { message: string }).message).to.equal('model "echo-embed" cannot be served on /v1/embeddings: its provider "p0" does not speak this format');
    } finally {
      await gw.close();
    }
  });

  it('loads a plugin by npm package name, resolved from the YAML file’s folder', async () => {
    const gw = await startGateway(config('  - { id: p0, plugin: junction-plugin-echo }'), { dir: PLUGINS_DIR });
    try {
      const c = await call(`${gw.url}/v1/chat/completions`, { headers: CHAT_HEADERS, body: { model: 'echo-model', messages: [{ role: 'user', content: 'pkg' }] } });
      expect((c.json()['choices'] as { message: { content: string } }[])[0]?.message.content).to.equal('echo: pkg');
    } finally {
      await gw.close();
    }
  });

  it('stops start-up for each bad plugin, naming its YAML path, and lists them all', async () => {
    const problems = await loadProblems(`
  - { id: p0, plugin: ./missing.js }
  - { id: p1, plugin: ./not-a-plugin.js }
  - { id: p2, plugin: ./wrong-api.js }
  - { id: p3, plugin: ./no-capability.js }
  - { id: p4, plugin: ./syntax-error.js }
  - { id: p5, plugin: no-such-package-xyz }
  - { id: p6, plugin: anthropic, options: { headers: 5 } }
  - { id: p7, plugin: anthropic, base_url: "https://api.anthropic.com/v1" }
  - { id: p8, plugin: openai, options: { unknown_option: 1 } }
  - { id: p9, plugin: ./bad-invokes.js }`);
    expect(problems).to.have.length(10);
    expect(problems[0]).to.match(/^providers\[0\]\.plugin: cannot load "\.\/missing\.js": /);
    expect(problems[1]).to.equal('providers[1].plugin: "./not-a-plugin.js" is not a Junction plugin: its default export needs name, apiVersion and create()');
    expect(problems[2]).to.equal('providers[2].plugin: plugin "from-the-future" needs plugin API ^2.0.0; this gateway provides 1.5.0');
    expect(problems[3]).to.equal('providers[3].plugin: plugin "empty" returned an invalid provider: it offers none of native, translate, translateFor or invoke');
    expect(problems[4]).to.match(/^providers\[4\]\.plugin: cannot load "\.\/syntax-error\.js": /);
    expect(problems[5]).to.match(/^providers\[5\]\.plugin: cannot load "no-such-package-xyz": /);
    expect(problems[6]).to.match(/^providers\[6\]\.options\.headers: /);
    expect(problems[7]).to.equal('providers[7].base_url: must not end in /v1 (Anthropic SDK convention): use https://api.anthropic.com');
    expect(problems[8]).to.match(/^providers\[8\]\.options: /);
    expect(problems[8]).to.include('unknown_option');
    expect(problems[9]).to.equal('providers[9].plugin: plugin "bad-invokes" returned an invalid provider: invokes has an unknown endpoint "videos"');
  });
});

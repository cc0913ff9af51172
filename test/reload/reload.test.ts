import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { call, generationOf, KEYS, LogCapture, MESSAGES_HEADERS } from '../support/gateway.ts';
import { GatedUpstream } from './gated-upstream.ts';

const ADMIN = 'sk-jct-admin-0123456789abcdef';
const ADMIN_HEADERS = { authorization: `Bearer ${ADMIN}` };
/** 10 input and 20 output tokens, at `price` USD per million input tokens and twice that for output. */
const costAt = (price: number): number => (10 * price + 20 * 2 * price) / 1e6;

interface Shape {
  readonly price?: number;
  /** Extra models, YAML list items. */
  readonly models?: string;
  readonly upstreamKey?: string;
  readonly keys?: string;
  readonly server?: string;
}

/** The deployment under test: `claude` on the gated upstream, `plain` on a second provider. */
function yaml(upstream: string, shape: Shape = {}): string {
  const price = shape.price ?? 1;
  return `
server: { ${shape.server ?? 'port: 8080'} }
log: { level: info }
storage: { url: "sqlite://:memory:" }
auth:
  admin_key: ${ADMIN}
  keys:
    - { name: alice, key: "${KEYS.alice}", balance_usd: 100 }
${shape.keys ?? ''}
providers:
  - { id: up, plugin: anthropic, base_url: "${upstream}", api_key: "${shape.upstreamKey ?? 'sk-ant-first'}" }
  - { id: steady, plugin: anthropic, base_url: "${upstream}", api_key: sk-ant-steady }
models:
  - id: claude
    routes: [{ provider: up }]
    pricing: { input: ${price}, output: ${price * 2} }
  - id: plain
    routes: [{ provider: steady }]
    pricing: { input: 1, output: 2 }
${shape.models ?? ''}`;
}

/** Waits for `ready`, a few milliseconds at a time, failing after two seconds (a close that never comes). */
async function until(ready: () => boolean): Promise<void> {
  for (let waited = 0; !ready(); waited += 5) {
    if (waited > 2000) throw new Error('not within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const streamBody = (model: string): string => JSON.stringify({ model, max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] });

function openStream(url: string, model: string, key: string = KEYS.alice): Promise<Response> {
  return fetch(`${url}/v1/messages`, { method: 'POST', headers: { ...MESSAGES_HEADERS, 'x-api-key': key, 'content-type': 'application/json' }, body: streamBody(model) });
}

/** A gateway serving the YAML file, on a loopback port. */
async function serve(file: string, logs: LogCapture): Promise<{ gateway: Gateway; url: string }> {
  const gateway = await createGateway(loadConfig(file), { logDestination: logs });
  return { gateway, url: `http://127.0.0.1:${(await gateway.listen('127.0.0.1', 0)).port}` };
}

/** Ends the test's streams, gateway, upstream and folder. */
async function stop(gateway: Gateway, upstream: GatedUpstream, dir: string): Promise<void> {
  upstream.release();
  await gateway.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
}

/** POST /admin/reload with the admin key. */
const reloadAt = (url: string): Promise<Awaited<ReturnType<typeof call>>> => call(`${url}/admin/reload`, { method: 'POST', headers: ADMIN_HEADERS });

describe('hot reload (issue #16)', function () {
  let dir: string;
  let file: string;
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let url: string;
  let logs: LogCapture;

  const write = (shape: Shape = {}): void => writeFileSync(file, yaml(upstream.url, shape));
  const reload = (): ReturnType<typeof reloadAt> => reloadAt(url);

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'junction-reload-'));
    file = path.join(dir, 'gateway.yaml');
    upstream = await new GatedUpstream().start();
    write();
    logs = new LogCapture();
    ({ gateway, url } = await serve(file, logs));
  });

  afterEach(() => stop(gateway, upstream, dir));

  it('a reload during 100 open streams loses none, and charges each at the prices it started with', async () => {
    const streams = await Promise.all(Array.from({ length: 100 }, () => openStream(url, 'claude')));
    await upstream.holding(100);
    expect(streams.map((s) => s.status)).to.deep.equal(Array(100).fill(200));

    write({ price: 100 });
    const reloaded = await reload();
    expect(reloaded.status, reloaded.text).to.equal(200);
    expect(reloaded.json()).to.deep.include({ reloaded: true, restart_required: [] });
    expect(reloaded.json()['models']).to.deep.equal({ added: [], changed: ['claude'], removed: [] });

    // A request after the reload is priced by the new file.
    upstream.gated = false;
    const after = await openStream(url, 'claude');
    expect(await after.text()).to.contain('message_stop');

    upstream.release();
    const bodies = await Promise.all(streams.map((s) => s.text()));
    for (const body of bodies) expect(body).to.contain('event: message_stop');
    const costs = await Promise.all(streams.map(async (s) => (await generationOf(url, s.headers.get('x-request-id'))).cost_usd));
    for (const cost of costs) expect(cost).to.be.closeTo(costAt(1), 1e-12);
    expect((await generationOf(url, after.headers.get('x-request-id'))).cost_usd).to.be.closeTo(costAt(100), 1e-12);
  });

  it('a broken file changes nothing: 400 naming each problem by its YAML path, and the old config serves on', async () => {
    writeFileSync(file, `${yaml(upstream.url, { price: 7 })}\n  - id: typo\n    routes: [{ provider: antropic }]\n    pricing: { input: 1, output: 1 }\n`);
    const refused = await reload();
    expect(refused.status).to.equal(400);
    const error = refused.json()['error'] as { code: string; problems: string[]; message: string };
    expect(error.code).to.equal('config_invalid');
    expect(error.problems.join('\n')).to.match(/^models\[2\]\.routes\[0\]\.provider: unknown provider "antropic"/m);
    expect(error.message).to.contain('nothing changed');
    expect(logs.lines.some((l) => l['msg'] === 'configuration reload refused; nothing changed')).to.equal(true);

    // A plugin that cannot load is refused the same way, before anything is swapped.
    writeFileSync(file, yaml(upstream.url, { price: 7 }).replace('plugin: anthropic, base_url', 'plugin: ./missing-plugin.js, base_url'));
    const unloadable = await reload();
    expect(unloadable.status).to.equal(400);
    expect((unloadable.json()['error'] as { problems: string[] }).problems[0]).to.match(/^providers\[0\]\.plugin: cannot load/);

    upstream.gated = false;
    const res = await openStream(url, 'claude');
    expect(await res.text()).to.contain('message_stop');
    expect((await generationOf(url, res.headers.get('x-request-id'))).cost_usd).to.be.closeTo(costAt(1), 1e-12);
    expect(gateway.config.models.map((m) => m.id)).to.deep.equal(['claude', 'plain']);
  });

  it('a removed model answers 404 to new requests only: its open stream finishes and is charged', async () => {
    const open = await openStream(url, 'plain');
    await upstream.holding(1);
    writeFileSync(file, yaml(upstream.url).replace(/  - id: plain\n.*\n.*\n/, ''));
    const reloaded = await reload();
    expect(reloaded.json()['models']).to.deep.equal({ added: [], changed: [], removed: ['plain'] });
    expect(reloaded.json()['providers']).to.deep.equal({ added: [], changed: [], removed: [] });

    const refused = await call(`${url}/v1/messages`, { headers: MESSAGES_HEADERS, body: streamBody('plain') });
    expect(refused.status).to.equal(404);
    expect(refused.text).to.contain('plain');

    upstream.release();
    expect(await open.text()).to.contain('event: message_stop');
    expect((await generationOf(url, open.headers.get('x-request-id'))).cost_usd).to.be.closeTo(costAt(1), 1e-12);
  });

  it('applies new keys and models at once; settings that need a restart are reported and keep their running values', async () => {
    const bob = 'sk-jct-bob-0123456789abcdef01';
    write({ keys: `    - { name: bob, key: "${bob}", balance_usd: 1 }`, models: '  - id: fresh\n    routes: [{ provider: steady }]\n    pricing: { input: 1, output: 2 }', server: 'port: 9999, max_body_mb: 1' });
    const reloaded = await reload();
    expect(reloaded.status).to.equal(200);
    expect(reloaded.json()['restart_required']).to.deep.equal(['server.port']);
    expect(gateway.config.server.port).to.equal(8080);
    expect(gateway.config.server.maxBodyBytes).to.equal(1048576);

    upstream.gated = false;
    const res = await openStream(url, 'fresh', bob);
    expect(res.status).to.equal(200);
    expect(await res.text()).to.contain('message_stop');
    // The body limit is the new one.
    const big = await call(`${url}/v1/messages`, { headers: MESSAGES_HEADERS, body: JSON.stringify({ model: 'claude', max_tokens: 1, messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }] }) });
    expect(big.status).to.equal(413);

    // A key removed from the file is refused at once.
    write();
    expect((await reload()).status).to.equal(200);
    expect((await openStream(url, 'claude', bob)).status).to.equal(401);
  });

  it('a changed provider gets a fresh connection pool and the old one closes once idle; an unchanged one keeps its connection', async () => {
    // Two connections in the changed provider's pool, one in the unchanged one's.
    const first = await Promise.all([openStream(url, 'claude'), openStream(url, 'claude')]);
    await upstream.holding(2);
    upstream.release();
    await Promise.all(first.map((s) => s.text()));
    upstream.gated = false;
    await (await openStream(url, 'plain')).text();
    expect(upstream.connections).to.equal(3);
    // One stream stays open on the old pool across the reload, on one of its idle connections.
    upstream.gated = true;
    const open = await openStream(url, 'claude');
    await upstream.holding(1);
    expect(upstream.connections).to.equal(3);

    write({ upstreamKey: 'sk-ant-second' });
    const reloaded = await reload();
    expect(reloaded.json()['providers']).to.deep.equal({ added: [], changed: ['up'], removed: [] });
    upstream.gated = false;
    await (await openStream(url, 'claude')).text();
    await (await openStream(url, 'plain')).text();
    // claude: a new connection, with the new key; plain: its warm one.
    expect(upstream.connections).to.equal(4);
    expect(upstream.keys.slice(-2)).to.deep.equal(['sk-ant-second', 'sk-ant-steady']);
    // The old pool's idle connection was closed by the reload; its busy one closes when its stream ends.
    while (upstream.openSockets > 3) await new Promise((resolve) => upstream.events.once('socket-closed', resolve));
    expect(upstream.openSockets).to.equal(3);
    upstream.release();
    expect(await open.text()).to.contain('message_stop');
    while (upstream.openSockets > 2) await new Promise((resolve) => upstream.events.once('socket-closed', resolve));
    expect(upstream.openSockets).to.equal(2);
  });

  it('refuses a reload without the admin key', async () => {
    const res = await call(`${url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${KEYS.alice}` } });
    expect(res.status).to.equal(401);
  });
});

describe('hot reload: plugin lifetimes (issue #16 review)', function () {
  let dir: string;
  let file: string;
  let upstream: GatedUpstream;
  let gateway: Gateway;
  let url: string;
  const closed = (): string[] => ((globalThis as { __junctionClosed?: string[] }).__junctionClosed ??= []);

  /** p and q: the anthropic plugin, recording each instance's close() by provider id and key. */
  const write = (pKey: string, qKey: string): void =>
    writeFileSync(
      file,
      `log: { level: silent }
storage: { url: "sqlite://:memory:" }
auth: { admin_key: ${ADMIN}, keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 100 }] }
providers:
  - { id: p, plugin: ./closing.mts, base_url: "${upstream.url}", api_key: ${pKey} }
  - { id: q, plugin: ./closing.mts, base_url: "${upstream.url}", api_key: ${qKey} }
models:
  - { id: mp, routes: [{ provider: p }], pricing: { input: 1, output: 2 } }
  - { id: mq, routes: [{ provider: q }], pricing: { input: 1, output: 2 } }
`,
    );

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'junction-reload-close-'));
    file = path.join(dir, 'gateway.yaml');
    const anthropic = path.resolve('plugins/anthropic/index.ts');
    writeFileSync(
      path.join(dir, 'closing.mts'),
      `import anthropic from ${JSON.stringify(anthropic)};
export default { ...anthropic, name: 'closing', create: async (ctx) => ({ ...(await anthropic.create(ctx)), close() { (globalThis.__junctionClosed ??= []).push(ctx.id + ':' + ctx.apiKey); } }) };
`,
    );
    upstream = await new GatedUpstream().start();
    write('p1', 'q1');
    closed().length = 0;
    ({ gateway, url } = await serve(file, new LogCapture()));
  });

  afterEach(() => stop(gateway, upstream, dir));

  it('closes a replaced plugin only once every request that could use it has ended, older generations included', async () => {
    const open = await openStream(url, 'mp');
    await upstream.holding(1);
    write('p1', 'q2'); // q changes: p's plugin is shared by both generations
    expect((await reload()).status).to.equal(200);
    write('p2', 'q2'); // now p changes, while the first generation's stream still uses p1
    expect((await reload()).status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Neither p1 (the stream's own) nor q1 (a request of that generation could have used it) yet.
    expect(closed()).to.deep.equal([]);

    upstream.release();
    expect(await open.text()).to.contain('message_stop');
    await until(() => closed().length === 2);
    expect(closed()).to.have.members(['q:q1', 'p:p1']);
  });

  it('refuses a reload once shutdown has begun, and closes each plugin once', async () => {
    write('p1', 'q2');
    const closing = gateway.close();
    const refused = await gateway.reload();
    expect(refused).to.deep.equal({ ok: false, problems: ['the gateway is shutting down'] });
    await closing;
    expect(closed()).to.have.members(['p:p1', 'q:q1']);
    expect(closed()).to.have.length(2);
  });

  const reload = (): ReturnType<typeof reloadAt> => reloadAt(url);
});

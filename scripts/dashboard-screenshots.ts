/**
 * Screenshots of the dashboard for the docs (issue #16): docs/images/dashboard-*.png, 1200 px wide.
 *
 *   node --import tsx/esm scripts/dashboard-screenshots.ts
 *
 * Starts the default deployment (config/gateway.yaml) in this process, on a loopback port with a
 * temporary SQLite ledger and an admin key, plus two priced models on the offline `mock` provider so
 * that spend shows. Real requests cannot be dated in the past, so the past week is written to the
 * ledger as settlements (deterministic, the same on every run); the latest requests are real ones,
 * sent through the gateway. Needs Chromium (test/dashboard/chromium.ts says where it looks).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { perMillionToPicoPerToken } from '../src/billing/money.ts';
import { keysCommand } from '../src/cli/keys.ts';
import { parseConfig } from '../src/config/load.ts';
import { createGateway } from '../src/gateway.ts';
import { CHROMIUM, chromiumFound, launchChromium } from '../test/dashboard/chromium.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = path.join(ROOT, 'docs/images');
const ADMIN = 'adm-screenshots-0123456789abcdef';
const PAGES = ['keys', 'usage', 'requests', 'catalogue', 'health', 'audit'] as const;
const PRICED = `
  - id: demo-pro
    name: Junction demo, priced as a large model (offline)
    routes: [{ provider: mock }]
    pricing: { input: 3, output: 15, cache_read: 0.3 }
  - id: demo-mini
    name: Junction demo, priced as a small model (offline)
    routes: [{ provider: mock }]
    pricing: { input: 0.15, output: 0.6 }
`;
const KEYS = [
  { name: 'research', balance_usd: 250, models: ['demo*'] },
  { name: 'support-bot', balance_usd: 60, limits: { rpm: 120 } },
  { name: 'ci', balance_usd: 15, models: ['demo-mini'], limits: { concurrency: 4 } },
  { name: 'alice', balance_usd: 40 },
];

if (!chromiumFound()) {
  console.error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set JUNCTION_TEST_CHROMIUM`);
  process.exit(1);
}
const dir = mkdtempSync(path.join(tmpdir(), 'junction-screens-'));
const file = path.join(ROOT, 'config/gateway.yaml');
const yaml = readFileSync(file, 'utf8').replace(/^models:\n/m, `models:${PRICED}`);
const config = parseConfig(yaml, file, { JUNCTION_ADMIN_KEY: ADMIN, JUNCTION_STORAGE_URL: `sqlite://${dir}/ledger.db` });
const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
const gateway = await createGateway(config, { logDestination: quiet });
const url = `http://127.0.0.1:${(await gateway.listen('127.0.0.1', 0)).port}`;
const post = (route: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const asAdmin = { authorization: `Bearer ${ADMIN}` };

try {
  const issued = new Map<string, string>();
  for (const key of KEYS) issued.set(key.name, String(((await (await post('/admin/keys', key, asAdmin)).json()) as Record<string, unknown>)['key']));
  await post('/admin/keys/support-bot/topup', { usd: 25 }, asAdmin);
  await backfill();
  await new Promise((r) => setTimeout(r, 1200)); // the key cache takes up to a second to see new keys
  await realTraffic(issued);
  await post('/admin/keys/ci/disable', {}, asAdmin);
  // An operator's top-up from the shell, on the same ledger: the audit shows all three channels.
  const cli = path.join(dir, 'cli.yaml');
  writeFileSync(cli, `storage: { url: "sqlite://${dir}/ledger.db" }\nproviders: [{ id: mock, plugin: mock }]\nmodels: [{ id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }]\n`);
  await keysCommand(['topup', '--config', cli, '--name', 'alice', '--usd', '10'], { out: () => undefined, err: () => undefined });
  await screenshots();
  console.log(`wrote ${PAGES.map((p) => `docs/images/dashboard-${p}.png`).join(', ')}`);
} finally {
  await gateway.close();
  rmSync(dir, { recursive: true, force: true });
}

/** A week of hourly traffic per key and model, busier in working hours, as ledger settlements. */
async function backfill(): Promise<void> {
  const random = mulberry32(16);
  const keys = await gateway.store.listKeys();
  const models = new Map(config.models.map((m) => [m.id, m]));
  const mix: Record<string, readonly string[]> = { research: ['demo-pro', 'demo-pro', 'demo-mini'], 'support-bot': ['demo-mini', 'demo'], ci: ['demo-mini'], alice: ['demo-pro', 'demo'], local: ['demo'] };
  const hour = 3600_000;
  const now = Math.floor(Date.now() / hour) * hour;
  let n = 0;
  for (let h = 7 * 24; h >= 1; h--) {
    const start = now - h * hour;
    const busy = [8, 9, 10, 11, 13, 14, 15, 16, 17].includes(new Date(start).getUTCHours()) ? 1 : 0.25;
    for (const key of keys) {
      const choices = mix[key.name] ?? ['demo'];
      for (let i = Math.floor(random() * 6 * busy); i > 0; i--) {
        const model = models.get(choices[Math.floor(random() * choices.length)] ?? 'demo');
        if (!model) continue;
        const input = 200 + Math.floor(random() * 4000);
        const output = 50 + Math.floor(random() * 900);
        const cost = BigInt(input) * perMillionToPicoPerToken(model.pricing.input) + BigInt(output) * perMillionToPicoPerToken(model.pricing.output);
        await gateway.store.settle({
          requestId: `req_history${String(n++).padStart(6, '0')}`, keyId: key.id, endpoint: 'messages', model: model.id, provider: 'mock',
          upstreamModel: model.id, route: 'in-process', usage: { input, output, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, cost,
          status: 200, outcome: 'ok', estimated: false, startedAtMs: start + Math.floor(random() * hour),
          firstByteMs: 80 + random() * 400, durationMs: 400 + random() * 3000,
        });
      }
    }
  }
}

/** Requests through the gateway now, in both formats, some streamed. */
async function realTraffic(issued: ReadonlyMap<string, string>): Promise<void> {
  const plan: [string, string, 'messages' | 'chat', boolean][] = [
    ['research', 'demo-pro', 'messages', true], ['research', 'demo-mini', 'chat', false], ['support-bot', 'demo-mini', 'chat', true],
    ['alice', 'demo-pro', 'messages', false], ['support-bot', 'demo', 'messages', false], ['ci', 'demo-mini', 'chat', false],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [name, model, format, stream] of plan) {
      const key = issued.get(name) ?? '';
      const content = `Round ${round}: summarise the ledger for ${name}.`;
      const res = format === 'messages'
        ? await post('/v1/messages', { model, max_tokens: 200, stream, messages: [{ role: 'user', content }] }, { 'x-api-key': key, 'anthropic-version': '2023-06-01' })
        : await post('/v1/chat/completions', { model, stream, messages: [{ role: 'user', content }] }, { authorization: `Bearer ${key}` });
      await res.arrayBuffer();
    }
  }
  await new Promise((r) => setTimeout(r, 300)); // settlements land after each response ends
}

async function screenshots(): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
    await page.goto(`${url}/dashboard/login`);
    await page.fill('input[name=admin_key]', ADMIN);
    await Promise.all([page.waitForURL('**/dashboard/keys'), page.click('button:has-text("Sign in")')]);
    // The keys page as it answers a new key: shown once, in the notice.
    await page.fill('form[action="/dashboard/keys"] input[name=name]', 'new-hire');
    await page.fill('input[name=balance_usd]', '10');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create key")')]);
    await page.screenshot({ path: path.join(OUT, 'dashboard-keys.png'), fullPage: true });
    // The long lists (requests, catalogue) as far as the first screen goes: the images stay small.
    for (const name of PAGES.slice(1)) {
      await page.goto(`${url}/dashboard/${name}${name === 'usage' ? '?range=7d' : ''}`);
      await page.screenshot({ path: path.join(OUT, `dashboard-${name}.png`), fullPage: name !== 'requests' && name !== 'catalogue' });
    }
  } finally {
    await browser.close();
  }
}

/** A small seeded generator: the same week on every run. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

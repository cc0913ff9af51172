import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FakeUpstream } from './fake-upstream.ts';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { parseConfig } from '../../src/config/load.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import type { Clock } from '../../src/util/clock.ts';
import { TestClock } from './clock.ts';

/** Keys used across the tests. Long enough for the config's 16-character minimum. */
export const KEYS = {
  alice: 'sk-jct-alice-0123456789abcdef',
  restricted: 'sk-jct-restricted-0123456789ab',
  hashed: 'sk-jct-hashed-0123456789abcdef',
} as const;

/** Provider credentials the fake upstream should see, and the client must never see. */
export const PROVIDER_KEYS = { anthropic: 'sk-ant-PROVIDER-SECRET-1', openai: 'sk-proj-PROVIDER-SECRET-2' } as const;

export const TEST_DIR = path.dirname(fileURLToPath(new URL('.', import.meta.url)));

/** A config wired to a fake upstream: one native route per format, plus the mock. */
export function standardConfig(upstreamUrl: string, extra = ''): string {
  return `
log: { level: info }
# Suites share one gateway and provoke upstream failures on purpose: keep their breakers closed.
routing: { circuit_breaker: { failures: 1000 } }
auth:
  keys:
    - { name: alice, key: "${KEYS.alice}", balance_usd: 100 }
    - { name: restricted, key: "${KEYS.restricted}", models: ["gpt-*", "demo"] }
providers:
  - { id: anthropic, plugin: anthropic, base_url: "${upstreamUrl}", api_key: "${PROVIDER_KEYS.anthropic}" }
  - { id: openai, plugin: openai, base_url: "${upstreamUrl}/v1", api_key: "${PROVIDER_KEYS.openai}" }
  - { id: mock, plugin: mock }
models:
  - id: claude-sonnet-4-6
    name: Claude Sonnet 4.5
    routes: [{ provider: anthropic, model: claude-sonnet-4-6-20260217 }]
    pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
    context_length: 200000
    max_output_tokens: 64000
    input_modalities: [text, image]
  - id: claude-same
    routes: [{ provider: anthropic }]
    pricing: { input: 3, output: 15 }
  - id: gpt-4o
    name: GPT-4o
    routes: [{ provider: openai, model: gpt-4o-2024-08-06 }]
    pricing: { input: 2.5, output: 10, cache_read: 1.25 }
  - id: gpt-same
    routes: [{ provider: openai }]
    pricing: { input: 2.5, output: 10 }
  - id: demo
    routes: [{ provider: mock }]
    pricing: { input: 0, output: 0 }
${extra}`;
}

/**
 * The provider suites' config: one funded key (alice), no retries, breakers that stay closed
 * (they provoke failures on purpose); `rest` adds the providers and models.
 */
export function oneKeyConfig(rest: string): string {
  return `
log: { level: info }
routing: { retries: 0, circuit_breaker: { failures: 1000 } }
auth: { keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 10 }] }
${rest}`;
}

/**
 * The standard config plus Chat upstreams in other dialects, all on the fake upstream: `or-*`
 * models go through an OpenRouter-style provider, `ds-chat` through a DeepSeek-style one.
 */
export function translationConfig(upstreamUrl: string): string {
  return standardConfig(
    upstreamUrl,
    `  - id: or-claude
    routes: [{ provider: openrouter, model: anthropic/claude-sonnet-4.6 }]
    pricing: { input: 3, output: 15 }
    max_output_tokens: 16000
  - id: ds-chat
    routes: [{ provider: deepseek, model: deepseek-reasoner }]
    pricing: { input: 0.5, output: 2 }
    max_output_tokens: 8192
`,
  ).replace(
    '  - { id: mock, plugin: mock }',
    `  - { id: mock, plugin: mock }
  - id: openrouter
    plugin: openai
    base_url: "${upstreamUrl}/v1"
    api_key: sk-or-test
    options: { reasoning: openrouter, max_tokens_field: max_tokens, top_k: true, cache_control: true }
  - id: deepseek
    plugin: openai
    base_url: "${upstreamUrl}/v1"
    api_key: sk-ds-test
    options: { reasoning: deepseek, max_tokens_field: max_tokens }`,
  );
}

/** Collects the gateway's log lines as parsed objects. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  readonly raw: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      this.raw.push(line);
      this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    callback();
  }
  /** Request lines (one per finished request). */
  requests(): Record<string, unknown>[] {
    return this.lines.filter((l) => l['msg'] === 'request');
  }
}

export interface TestGateway {
  readonly url: string;
  readonly gateway: Gateway;
  readonly logs: LogCapture;
  close(): Promise<void>;
  /** Waits until `n` request lines were logged (the line is written when the response ends). */
  requestLogs(n?: number): Promise<Record<string, unknown>[]>;
}

export interface GatewayTestOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly dir?: string;
  /** The gateway's clock for retry waits and breaker cool-downs (support/clock.ts); the system's by default. */
  readonly clock?: Clock;
}

export async function startGateway(yaml: string, options: GatewayTestOptions = {}): Promise<TestGateway> {
  const file = path.join(options.dir ?? TEST_DIR, 'gateway.test.yaml');
  // Each test gateway gets its own ledger unless the test names one.
  const isolated = /^storage:/m.test(yaml) ? yaml : `${yaml}\nstorage: { url: "sqlite://:memory:" }\n`;
  const config = parseConfig(isolated, file, options.env ?? {});
  const logs = new LogCapture();
  const gateway = await createGateway(config, { logDestination: logs, ...(options.clock && { clock: options.clock }) });
  const address = await gateway.listen('127.0.0.1', 0);
  return {
    url: `http://127.0.0.1:${address.port}`,
    gateway,
    logs,
    close: () => gateway.close(),
    async requestLogs(n = 1) {
      for (let i = 0; i < 200 && logs.requests().length < n; i++) await new Promise((r) => setTimeout(r, 5));
      return logs.requests();
    },
  };
}

/** A request's ledger row as /v1/generations/{id} shows it (the fields the media and Responses suites read). */
export interface Generation {
  endpoint: string;
  route: string;
  estimated: boolean;
  tokens: Record<string, number>;
  cost_usd: number;
}

/** The ledger row of the request answered with `id` (its x-request-id), as `key` sees it. */
export async function generationOf(gatewayUrl: string, id: string | string[] | null | undefined, key: string = KEYS.alice): Promise<Generation> {
  return (await call(`${gatewayUrl}/v1/generations/${String(id)}`, { headers: { authorization: `Bearer ${key}` } })).json() as unknown as Generation;
}

/** A plain fetch against the gateway. */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => Record<string, unknown> }> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined && { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

export const MESSAGES_HEADERS = { 'x-api-key': KEYS.alice, 'anthropic-version': '2023-06-01' } as const;
export const CHAT_HEADERS = { authorization: `Bearer ${KEYS.alice}` } as const;

/**
 * Registers mocha hooks that start a fake upstream and a gateway routed to it for the enclosing
 * `describe`, reset the upstream's record after each test, and stop both at the end.
 */
export function useUpstreamAndGateway(
  yaml: (upstreamUrl: string) => string = (url) => standardConfig(url),
  options: GatewayTestOptions = {},
): { readonly upstream: FakeUpstream; readonly gw: TestGateway } {
  let upstream: FakeUpstream | undefined;
  let gw: TestGateway | undefined;
  before(async () => {
    upstream = await new FakeUpstream().start();
    gw = await startGateway(yaml(upstream.url), options);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });
  afterEach(() => {
    upstream?.reset();
    if (options.clock instanceof TestClock) options.clock.reset();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('used before the before() hook ran');
    return value;
  };
  return {
    get upstream() {
      return started(upstream);
    },
    get gw() {
      return started(gw);
    },
  };
}

/** The official SDK clients, pointed at the gateway once it has started, with the test key. */
export function useSdkClients(env: { readonly gw: TestGateway }): { readonly anthropic: Anthropic; readonly openai: OpenAI } {
  let clients: { anthropic: Anthropic; openai: OpenAI } | undefined;
  before(() => {
    clients = {
      anthropic: new Anthropic({ baseURL: env.gw.url, apiKey: KEYS.alice, maxRetries: 0 }),
      openai: new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: KEYS.alice, maxRetries: 0 }),
    };
  });
  return {
    get anthropic() {
      if (!clients) throw new Error('used before the before() hook ran');
      return clients.anthropic;
    },
    get openai() {
      if (!clients) throw new Error('used before the before() hook ran');
      return clients.openai;
    },
  };
}

/**
 * Milliseconds until a demo-model request with `key` gets `status`, polling for at most 2 s
 * (Infinity if it never does): how long a key change takes to reach a running gateway.
 */
export async function msUntilStatus(url: string, key: string, status: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < 2000) {
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    if (res.status === status) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  return Infinity;
}

/**
 * Registers hooks for a `describe` of refused requests: after each test, nothing reached the
 * upstream and the key's spending and holds are as before it (issue #13: "nothing is charged").
 */
export function expectNothingSentOrCharged(env: { readonly upstream: FakeUpstream; readonly gw: TestGateway }, key: string = KEYS.alice): void {
  const balance = async () => (await call(`${env.gw.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).json();
  let before: Record<string, unknown>;
  beforeEach(async () => {
    before = await balance();
  });
  afterEach(async () => {
    if (env.upstream.requests.length > 0) throw new Error(`a refused request reached the upstream: ${env.upstream.requests.map((r) => r.url).join(', ')}`);
    const after = await balance();
    if (after['spent_usd'] !== before['spent_usd'] || after['held_usd'] !== 0) {
      throw new Error(`a refused request was charged: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
    }
  });
}

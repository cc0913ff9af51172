import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, parseConfig, parseStoreConfig } from '../../src/config/load.ts';

const FILE = '/etc/junction/gateway.yaml';

function problems(yaml: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(yaml, FILE, env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('expected the config to be refused');
}

// The exact shape from issue #2: it must load.
const ISSUE_SHAPE = `
server: { host: 127.0.0.1, port: 8080 }
storage: { url: sqlite://data/junction.db }
auth:
  key_prefix: sk-jct-
  keys:
    - { name: alice, key: "\${ALICE_KEY}", balance_usd: 100 }
    - { name: ci, key_sha256: "${'ab'.repeat(32)}", models: ["gpt-*", "claude-*"] }
providers:
  - { id: anthropic, plugin: anthropic, base_url: https://api.anthropic.com, api_key: "\${ANTHROPIC_API_KEY:-}" }
  - { id: openai, plugin: openai, base_url: https://api.openai.com/v1, api_key: "\${OPENAI_API_KEY:-}" }
  - { id: acme, plugin: ./my-plugins/acme.js, options: { region: eu } }
models:
  - id: claude-sonnet-4-5
    name: Claude Sonnet 4.5
    routes: [{ provider: anthropic, model: claude-sonnet-4-5-20250929 }]
    pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }
    context_length: 200000
    max_output_tokens: 64000
    input_modalities: [text, image]
    output_modalities: [text]
`;

const SERVER_DEFAULTS = { shutdownGraceMs: 30_000, headersTimeoutMs: 20_000, requestTimeoutMs: 120_000, keepaliveMs: 15_000, metrics: 'admin', watchConfig: false };

describe('config loading', () => {
  it('loads the exact YAML shape of issue #2', () => {
    const config = parseConfig(ISSUE_SHAPE, FILE, { ALICE_KEY: 'sk-jct-alice-secret-000000', OPENAI_API_KEY: 'sk-o' });
    expect(config.server).to.deep.equal({ host: '127.0.0.1', port: 8080, maxBodyBytes: 32 * 1048576, ...SERVER_DEFAULTS });
    expect(config.storage.url).to.equal('sqlite:///etc/junction/data/junction.db');
    expect(config.auth.keyPrefix).to.equal('sk-jct-');
    expect(config.auth.keys[0]).to.include({ name: 'alice', balanceUsd: 100, models: null });
    expect(config.auth.keys[0]?.sha256).to.match(/^[0-9a-f]{64}$/);
    expect(config.auth.keys[1]).to.deep.include({ name: 'ci', sha256: 'ab'.repeat(32), models: ['gpt-*', 'claude-*'] });
    expect(config.providers.map((p) => p.id)).to.deep.equal(['anthropic', 'openai', 'acme']);
    expect(config.providers[2]?.options).to.deep.equal({ region: 'eu' });
    const model = config.models[0];
    expect(model?.routes).to.deep.equal([{ provider: 'anthropic', model: 'claude-sonnet-4-5-20250929', weight: null }]);
    expect(model?.pricing).to.deep.include({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(model).to.include({ contextLength: 200000, maxOutputTokens: 64000, name: 'Claude Sonnet 4.5' });
  });

  it('keeps no plaintext key in the loaded config', () => {
    const config = parseConfig(ISSUE_SHAPE, FILE, { ALICE_KEY: 'sk-jct-alice-secret-000000' });
    expect(JSON.stringify(config)).not.to.include('sk-jct-alice-secret-000000');
  });

  it('interpolates ${VAR} and ${VAR:-default}, and marks a provider whose key came out empty', () => {
    const config = parseConfig(ISSUE_SHAPE, FILE, { ALICE_KEY: 'sk-jct-alice-secret-000000', OPENAI_API_KEY: 'sk-o' });
    const anthropic = config.providers[0];
    expect(anthropic?.apiKey).to.equal(undefined);
    expect(anthropic?.missingKeyVariables).to.deep.equal(['ANTHROPIC_API_KEY']);
    expect(config.providers[1]).to.include({ apiKey: 'sk-o', missingKeyVariables: null });
    // A provider with no api_key at all needs none (a local vLLM, the mock).
    expect(config.providers[2]).to.include({ apiKey: undefined, missingKeyVariables: null });
  });

  it('treats ${VAR:-default} like the shell: the default also replaces an empty value', () => {
    const yaml = 'server: { host: "${HOST:-0.0.0.0}", port: "${PORT:-9090}" }';
    expect(parseConfig(yaml, FILE, { HOST: '' }).server).to.include({ host: '0.0.0.0', port: 9090 });
    expect(parseConfig(yaml, FILE, { PORT: '7000' }).server.port).to.equal(7000);
  });

  it('keeps $${ as a literal ${', () => {
    const yaml = 'auth: { keys: [{ name: a, key: "sk-jct-$${literal}-0123456789" }] }';
    const withLiteral = parseConfig(yaml, FILE, {});
    const plain = parseConfig('auth: { keys: [{ name: a, key: "sk-jct-${literal}-0123456789" }] }', FILE, { literal: '${literal}' });
    expect(withLiteral.auth.keys[0]?.sha256).to.equal(plain.auth.keys[0]?.sha256);
  });

  it('reports a missing ${VAR} without default at its YAML path', () => {
    expect(problems(ISSUE_SHAPE)).to.deep.equal([
      'auth.keys[0].key: environment variable ALICE_KEY is not set (write ${ALICE_KEY:-} to allow it to be empty) (line 7)',
    ]);
  });

  it('names the YAML path of an unknown provider, with a suggestion', () => {
    const yaml = ISSUE_SHAPE.replace('routes: [{ provider: anthropic,', 'routes: [{ provider: antropic,');
    const found = problems(yaml, { ALICE_KEY: 'sk-jct-alice-secret-000000' });
    expect(found).to.have.length(1);
    expect(found[0]).to.match(/^models\[0\]\.routes\[0\]\.provider: unknown provider "antropic" \(did you mean "anthropic"\?\)/);
  });

  it('rejects unknown keys everywhere, naming the path and the closest known key', () => {
    const yaml = `
server: { hots: 1.2.3.4 }
providers:
  - { id: a, plugin: mock, api_kye: x }
models:
  - { id: m, routes: [{ provider: a }], pricing: { input: 1, output: 2, cache_reed: 1 } }
`;
    expect(problems(yaml)).to.deep.equal([
      'server.hots: unknown key (did you mean "host"?) (line 2)',
      'providers[0].api_kye: unknown key (did you mean "api_key"?) (line 4)',
      'models[0].pricing.cache_reed: unknown key (did you mean "cache_read"?) (line 6)',
    ]);
  });

  it('lists every problem at once, each with its path', () => {
    const yaml = `
server: { port: 70000 }
auth:
  keys:
    - { name: short, key: abc }
    - { name: both, key: sk-jct-0123456789abcdef, key_sha256: "${'0'.repeat(64)}" }
providers:
  - { id: p, plugin: mock, base_url: "ftp://x" }
models:
  - { id: m, routes: [], pricing: { input: -1 } }
  - { id: n, routes: [{ provider: p }], pricing: { input: 1, output: 1 }, supported_parameters: [tools, "Max Tokens"] }
`;
    const found = problems(yaml);
    expect(found).to.include.members([
      'server.port: must be <= 65535 (line 2)',
      'auth.keys[0].key: a key must be at least 16 characters (line 5)',
      'auth.keys[1]: set exactly one of key or key_sha256 (line 6)',
      'providers[0].base_url: must be an http:// or https:// URL (line 8)',
      'models[0].routes: must have at least 1 item (line 10)',
      'models[0].pricing.input: must be >= 0 (line 10)',
      'models[0].pricing.output: is required for a model with text output (line 10)',
      'models[1].supported_parameters[1]: must be a parameter name such as "tools" (line 11)',
    ]);
  });

  it('needs an output price for a model with text output, and none for an embedding model (issue #13)', () => {
    const yaml = `
providers: [{ id: p, plugin: mock }]
models:
  - { id: chat, routes: [{ provider: p }], pricing: { input: 1 } }
  - { id: embed, routes: [{ provider: p }], pricing: { input: 1 }, output_modalities: [embeddings] }
`;
    expect(problems(yaml)).to.deep.equal(['models[0].pricing.output: is required for a model with text output (line 4)']);
    const embed = parseConfig(yaml.replace('pricing: { input: 1 } }', 'pricing: { input: 1, output: 2 } }'), 'x.yaml', {}).models[1];
    expect(embed?.pricing).to.deep.include({ input: 1, output: 0 });
    expect(embed?.outputModalities).to.deep.equal(['embeddings']);
  });

  it('loads per-key limits and auth.default_limits; unset fields are null', () => {
    const config = parseConfig(
      `
auth:
  default_limits: { rpm: 60, concurrency: "4" }
  keys:
    - { name: a, key: sk-jct-a-0123456789abcdef, limits: { tpm: 100000 } }
    - { name: b, key: sk-jct-b-0123456789abcdef }
`,
      FILE,
      {},
    );
    expect(config.auth.defaultLimits).to.deep.equal({ rpm: 60, tpm: null, concurrency: 4 });
    expect(config.auth.keys.map((k) => k.limits)).to.deep.equal([
      { rpm: null, tpm: 100000, concurrency: null },
      { rpm: null, tpm: null, concurrency: null },
    ]);
    expect(parseConfig('{}', FILE, {}).auth.defaultLimits).to.deep.equal({ rpm: null, tpm: null, concurrency: null });
  });

  it('refuses a typo or a bad value in limits, naming its YAML path', () => {
    const yaml = `
auth:
  default_limits: { rmp: 60 }
  keys:
    - { name: a, key: sk-jct-a-0123456789abcdef, limits: { rpm: 0, tpm: 1.5, concurency: 2 } }
    - { name: b, key: sk-jct-b-0123456789abcdef, limit: { rpm: 1 } }
`;
    expect(problems(yaml)).to.have.members([
      'auth.default_limits.rmp: unknown key (did you mean "rpm"?) (line 3)',
      'auth.keys[0].limits.rpm: must be >= 1 (line 5)',
      'auth.keys[0].limits.tpm: must be an integer, got 1.5 (line 5)',
      'auth.keys[0].limits.concurency: unknown key (did you mean "concurrency"?) (line 5)',
      'auth.keys[1].limit: unknown key (did you mean "limits"?) (line 6)',
    ]);
  });

  it('refuses a starting balance past the per-key maximum (int64 pico-dollars)', () => {
    expect(problems('auth: { keys: [{ name: rich, key: sk-jct-rich-0123456789abcdef, balance_usd: 10000000 }] }')).to.deep.equal([
      'auth.keys[0].balance_usd: must be <= 9000000 (line 1)',
    ]);
  });

  it('refuses duplicate ids and duplicate keys without printing the key', () => {
    const yaml = `
auth:
  keys:
    - { name: a, key: sk-jct-same-key-0123456789 }
    - { name: b, key: sk-jct-same-key-0123456789 }
providers:
  - { id: p, plugin: mock }
  - { id: p, plugin: mock }
models:
  - { id: m, routes: [{ provider: p }], pricing: { input: 1, output: 1 } }
  - { id: m, routes: [{ provider: p }], pricing: { input: 1, output: 1 } }
`;
    const found = problems(yaml);
    expect(found).to.deep.equal([
      'providers[1].id: duplicate id "p" (first at providers[0]) (line 8)',
      'models[1].id: duplicate id "m" (first at models[0]) (line 11)',
      'auth.keys[1].key: duplicate key (first at auth.keys[0]) (line 5)',
    ]);
    expect(found.join('\n')).not.to.include('same-key');
  });

  it('reports YAML syntax errors with their line', () => {
    const found = problems('server:\n  host: [unclosed\n');
    expect(found[0]).to.match(/^line \d+: /);
  });

  it('applies defaults for an empty file', () => {
    const config = parseConfig('', FILE, {});
    expect(config.server).to.deep.equal({ host: '127.0.0.1', port: 8080, maxBodyBytes: 32 * 1048576, ...SERVER_DEFAULTS });
    expect(config.auth.keyPrefix).to.equal('sk-jct-');
    expect(config.storage.url).to.equal(`sqlite://${path.resolve('/etc/junction', 'data/junction.db')}`);
  });

  it('keeps sqlite:///absolute and :memory: storage URLs as written', () => {
    expect(parseConfig('storage: { url: "sqlite:///var/lib/j.db" }', FILE, {}).storage.url).to.equal('sqlite:///var/lib/j.db');
    expect(parseConfig('storage: { url: "sqlite://:memory:" }', FILE, {}).storage.url).to.equal('sqlite://:memory:');
    expect(problems('storage: { url: "mysql://x" }')[0]).to.match(/^storage\.url: must be sqlite/);
  });

  it('takes postgres:// storage and a redis block (issue #7); mistakes name their path', () => {
    expect(parseConfig('storage: { url: "postgres://u@db:5432/j" }', FILE, {}).storage.url).to.equal('postgres://u@db:5432/j');
    expect(parseConfig('', FILE, {}).redis).to.equal(null);
    expect(parseConfig('redis: { url: "redis://127.0.0.1:6379" }', FILE, {}).redis).to.deep.equal({ url: 'redis://127.0.0.1:6379', prefix: 'junction:' });
    expect(parseConfig('redis: { url: "rediss://r:6380", prefix: "eu:" }', FILE, {}).redis).to.deep.equal({ url: 'rediss://r:6380', prefix: 'eu:' });
    expect(problems('redis: { url: "http://r" }')[0]).to.match(/^redis\.url: must be redis:\/\//);
    expect(problems('redis: { url: "redis://r", prefx: "a" }')[0]).to.match(/^redis\.prefx: unknown key \(did you mean "prefix"/);
  });

  it('defaults a route model to the model id and a display name to the id', () => {
    const config = parseConfig(
      'providers: [{ id: p, plugin: mock }]\nmodels: [{ id: m1, routes: [{ provider: p }], pricing: { input: 0, output: 0 } }]',
      FILE,
      {},
    );
    expect(config.models[0]).to.deep.include({ name: 'm1', routes: [{ provider: 'p', model: 'm1', weight: null }] });
  });

  it('loads resilience settings (issue #5): timeouts, weights, routing, server timers; typos name their path', () => {
    const yaml = `server: { shutdown_grace_s: 5, keepalive_s: 0.5 }
routing: { retries: 2, max_retry_after_s: 4, circuit_breaker: { failures: 3, cooldown_s: 1.5 } }
providers: [{ id: p, plugin: mock, timeouts: { first_byte_ms: 30000, idle_ms: 60000 } }]
models: [{ id: m, routes: [{ provider: p, weight: 3 }, { provider: p, model: m2 }], pricing: { input: 0, output: 0 } }]`;
    const config = parseConfig(yaml, FILE, {});
    expect(config.server).to.include({ shutdownGraceMs: 5000, keepaliveMs: 500, headersTimeoutMs: 20_000 });
    expect(config.routing).to.deep.equal({ retries: 2, backoffMs: 250, maxRetryAfterMs: 4000, breakerFailures: 3, breakerCooldownMs: 1500 });
    expect(config.providers[0]?.timeouts).to.deep.equal({ connectMs: 10_000, firstByteMs: 30_000, idleMs: 60_000, totalMs: null });
    expect(config.models[0]?.routes).to.deep.equal([
      { provider: 'p', model: 'm', weight: 3 },
      { provider: 'p', model: 'm2', weight: null },
    ]);
    const typo = problems(yaml.replace('idle_ms', 'idle').replace('weight: 3', 'weight: 0'));
    expect(typo.join('\n')).to.match(/providers\[0\]\.timeouts.*idle/).and.to.match(/models\[0\]\.routes\[0\]\.weight/);
  });

  describe('for key management (junction keys, issue #12)', () => {
    // A deployment's file as an operator's shell meets it: provider secrets, and even a provider's
    // URL and a YAML key, come from variables that shell does not set.
    const DEPLOYED = `
storage: { url: "\${LEDGER_URL:-sqlite://ledger.db}" }
redis: { url: "redis://127.0.0.1:6379", prefix: "acme:" }
auth:
  key_prefix: sk-acme-
  keys: [{ name: alice, key: "\${ALICE_KEY}" }]
providers:
  - { id: anthropic, plugin: anthropic, api_key: "\${ANTHROPIC_API_KEY}" }
  - { id: local, plugin: openai, base_url: "\${VLLM_URL}" }
models: [{ id: claude, routes: [{ provider: anthropic }], pricing: { input: 3, output: 15 } }]
`;

    it('needs none of the providers’ secrets, where serve and check-config do', () => {
      expect(parseStoreConfig(DEPLOYED, FILE, {})).to.deep.equal({
        file: FILE,
        storage: { url: 'sqlite:///etc/junction/ledger.db' },
        redis: { url: 'redis://127.0.0.1:6379', prefix: 'acme:' },
        auth: { keyPrefix: 'sk-acme-' },
      });
      expect(problems(DEPLOYED)).to.deep.equal([
        'auth.keys[0].key: environment variable ALICE_KEY is not set (write ${ALICE_KEY:-} to allow it to be empty) (line 6)',
        'providers[0].api_key: environment variable ANTHROPIC_API_KEY is not set (write ${ANTHROPIC_API_KEY:-} to allow it to be empty) (line 8)',
        'providers[1].base_url: environment variable VLLM_URL is not set (write ${VLLM_URL:-} to allow it to be empty) (line 9)',
      ]);
    });

    it('still needs what it uses, and still refuses a typo anywhere in the file', () => {
      const refused = (yaml: string): string[] => {
        try {
          parseStoreConfig(yaml, FILE, {});
        } catch (err) {
          if (err instanceof ConfigError) return [...err.problems];
          throw err;
        }
        throw new Error('expected the config to be refused');
      };
      expect(refused(DEPLOYED.replace('"\${LEDGER_URL:-sqlite://ledger.db}"', '"\${LEDGER_URL}"'))).to.deep.equal([
        'storage.url: environment variable LEDGER_URL is not set (write ${LEDGER_URL:-} to allow it to be empty) (line 2)',
      ]);
      expect(refused(DEPLOYED.replace('"redis://127.0.0.1:6379"', '"\${REDIS_URL}"'))[0]).to.match(/^redis\.url: environment variable REDIS_URL is not set/);
      expect(refused(DEPLOYED.replace('key_prefix: sk-acme-', 'key_prefix: "\${PREFIX}"'))[0]).to.match(/^auth\.key_prefix: environment variable PREFIX is not set/);
      // A misspelt section would otherwise open another ledger without a word.
      expect(refused(DEPLOYED.replace('storage:', 'storag:'))).to.deep.equal(['storag: unknown key (did you mean "storage"?) (line 2)']);
      expect(refused(DEPLOYED.replace('pricing: { input: 3', 'pricing: { input: -3'))).to.deep.equal([
        'models[0].pricing.input: must be >= 0 (line 10)',
      ]);
    });
  });
});

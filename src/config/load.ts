import { createHash } from 'node:crypto';
import { DEFAULT_ROUTING, DEFAULT_SERVER, DEFAULT_TIMEOUTS } from './defaults.ts';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { flattenIssues, issueMessage } from '../validation/issues.ts';
import { suggest } from '../util/suggest.ts';
import { interpolate, type ConfigIssue } from './interpolate.ts';
import { configSchema, KNOWN_KEYS, type RawConfig, type RawKey } from './schema.ts';
import type { RateLimits } from '../limits/limiter.ts';
import type { GatewayConfig, ModelConfig, ProviderConfig, StaticKeyConfig } from './types.ts';
import { formatPath, type PathSegment } from './yaml-path.ts';

/** A config file that cannot be used; `problems` holds one line per problem, each naming its YAML path. */
export class ConfigError extends Error {
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Reads, interpolates and validates a gateway YAML file. Throws ConfigError listing every problem. */
export function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const { text, absolute, modified } = readConfig(file);
  return parseConfig(text, absolute, env, modified);
}

function readConfig(file: string): { text: string; absolute: string; modified: Date } {
  const absolute = path.resolve(file);
  try {
    return { text: readFileSync(absolute, 'utf8'), absolute, modified: statSync(absolute).mtime };
  } catch (err) {
    throw new ConfigError(file, [`cannot read the file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`]);
  }
}

/** Validates config text as if it were read from `file` (relative paths resolve against its folder). */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv, modified = new Date(0)): GatewayConfig {
  const { parsed, references } = check(text, file, env, () => false);
  if (!parsed.success) throw new Error('unreachable: check() reports every schema problem');
  return build(parsed.data, file, references, modified);
}

/** What `junction keys` reads (issue #12): the store, Redis where set, and the key prefix. */
export interface StoreConfig {
  readonly file: string;
  readonly storage: GatewayConfig['storage'];
  readonly redis: GatewayConfig['redis'];
  readonly auth: { readonly keyPrefix: string };
}

/** The sections `junction keys` uses; an unset variable anywhere else is not its problem. */
const STORE_SECTIONS = /^(storage|redis|auth\.key_prefix)(\.|\[|$)/;
const storeSchema = z.object({
  storage: configSchema.shape.storage,
  redis: configSchema.shape.redis,
  auth: z.object({ key_prefix: configSchema.shape.auth.unwrap().shape.key_prefix }).default({ key_prefix: 'sk-jct-' }),
});

/**
 * Loads a config for key management (issue #12). An operator's shell rarely holds the providers'
 * secrets, and `junction keys` never uses them: a `${VAR}` left unset outside storage, redis and
 * auth.key_prefix is not a problem, nor is the value it left empty. Everything else is checked as
 * for `serve`, so a typo in the file (a misspelt `storage:` would silently open another ledger)
 * still stops it.
 */
export function loadStoreConfig(file: string, env: NodeJS.ProcessEnv = process.env): StoreConfig {
  const { text, absolute } = readConfig(file);
  return parseStoreConfig(text, absolute, env);
}

export function parseStoreConfig(text: string, file: string, env: NodeJS.ProcessEnv): StoreConfig {
  const { value } = check(text, file, env, (issue) => !STORE_SECTIONS.test(formatPath(issue.path)));
  const raw = storeSchema.parse(value);
  return {
    file,
    storage: { url: resolveStorage(raw.storage.url, path.dirname(file)) },
    redis: raw.redis ? { url: raw.redis.url, prefix: raw.redis.prefix } : null,
    auth: { keyPrefix: raw.auth.key_prefix },
  };
}

/**
 * Parses, interpolates and validates, throwing ConfigError with every problem at its YAML path.
 * `unused(issue)` says an unset variable may be ignored: it and whatever is wrong with the value it
 * left empty (at its path, or the object holding it) are not reported.
 */
function check(text: string, file: string, env: NodeJS.ProcessEnv, unused: (issue: ConfigIssue) => boolean) {
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => `line ${lineCounter.linePos(e.pos[0]).line}: ${e.message.split('\n')[0] ?? 'invalid YAML'}`),
    );
  }
  const where = (issue: ConfigIssue): string => {
    const line = lineOf(doc, lineCounter, issue.path);
    return `${formatPath(issue.path)}: ${issue.message}${line === undefined ? '' : ` (line ${line})`}`;
  };

  const { value, issues: unset, references } = interpolate(doc.toJS() ?? {}, env);
  const parsed = configSchema.safeParse(value, { error: issueMessage });
  // References between sections are checked even when the schema fails, so one run lists every problem.
  const crossIssues = checkReferences(value);
  const ignored = unset.filter(unused);
  const issues = unset.filter((issue) => !unused(issue));
  if (!parsed.success || issues.length > 0 || crossIssues.length > 0) {
    const schemaIssues = parsed.success ? [] : flattenIssues(parsed.error).map((issue) => {
      const last = issue.path[issue.path.length - 1];
      const hint = issue.message === 'unknown key' && typeof last === 'string' ? suggest(last, KNOWN_KEYS) : undefined;
      return {
        path: issue.path as PathSegment[],
        message: hint === undefined ? issue.message : `${issue.message} (did you mean "${hint}"?)`,
      };
    });
    // A variable that was not set already explains whatever else is wrong with its value.
    const explained = new Set([
      ...unset.map((issue) => formatPath(issue.path)),
      ...ignored.map((issue) => formatPath(issue.path.slice(0, -1))),
    ]);
    const rest = [...schemaIssues, ...crossIssues].filter((issue) => !explained.has(formatPath(issue.path)));
    if (issues.length > 0 || rest.length > 0) throw new ConfigError(file, [...issues, ...rest].map(where));
  }
  return { parsed, value, references };
}

function lineOf(doc: YAML.Document, counter: YAML.LineCounter, at: readonly PathSegment[]): number | undefined {
  for (let depth = at.length; depth >= 0; depth--) {
    const node = doc.getIn(at.slice(0, depth), true);
    if (YAML.isNode(node) && node.range) return counter.linePos(node.range[0]).line;
    // An unknown key has no value node of its own path in getIn; find the key in its parent map.
    const parent = doc.getIn(at.slice(0, depth - 1), true);
    const key = at[depth - 1];
    if (YAML.isMap(parent) && typeof key === 'string') {
      const pair = parent.items.find((p) => YAML.isScalar(p.key) && p.key.value === key);
      if (pair && YAML.isNode(pair.key) && pair.key.range) return counter.linePos(pair.key.range[0]).line;
    }
  }
  return undefined;
}

/**
 * Cross-field rules zod cannot express: unique ids and references between sections. It reads the
 * interpolated tree loosely, so it also runs when the schema found problems elsewhere.
 */
function checkReferences(tree: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const root = asRecord(tree);
  const providers = asArray(root['providers']).map(asRecord);
  const models = asArray(root['models']).map(asRecord);
  const keys = asArray(asRecord(root['auth'])['keys']).map(asRecord);
  const duplicates = (
    items: Record<string, unknown>[],
    id: (item: Record<string, unknown>) => unknown,
    section: PathSegment[],
    field: string,
  ) => {
    const seen = new Map<string, number>();
    items.forEach((item, index) => {
      const value = id(item);
      if (typeof value !== 'string') return;
      const first = seen.get(value);
      if (first === undefined) seen.set(value, index);
      else {
        // A duplicated key is reported by position only: its value is a secret.
        const shown = field === 'key' ? '' : ` "${value}"`;
        const at = formatPath([...section, first]);
        issues.push({ path: [...section, index, field], message: `duplicate ${field}${shown} (first at ${at})` });
      }
    });
  };
  duplicates(providers, (p) => p['id'], ['providers'], 'id');
  duplicates(models, (m) => m['id'], ['models'], 'id');
  duplicates(keys, (k) => k['name'], ['auth', 'keys'], 'name');
  duplicates(keys, digestOf, ['auth', 'keys'], 'key');

  const providerIds = new Set(providers.map((p) => p['id']).filter((id): id is string => typeof id === 'string'));
  models.forEach((model, m) =>
    asArray(model['routes']).forEach((route, r) => {
      const provider = asRecord(route)['provider'];
      if (typeof provider !== 'string' || providerIds.has(provider)) return;
      const hint = suggest(provider, providerIds);
      issues.push({
        path: ['models', m, 'routes', r, 'provider'],
        message: `unknown provider "${provider}"${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`,
      });
    }),
  );
  // The admin key must never double as a user key (issue #4).
  const adminKey = asRecord(root['auth'])['admin_key'];
  if (typeof adminKey === 'string' && adminKey !== '' && keys.some((k) => digestOf(k) === digestOf({ key: adminKey }))) {
    issues.push({ path: ['auth', 'admin_key'], message: 'must not be the same as a key in auth.keys' });
  }
  const storage = asRecord(root['storage'])['url'];
  if (typeof storage === 'string' && !/^(sqlite:\/\/.+|postgres(ql)?:\/\/.+)$/.test(storage)) {
    issues.push({ path: ['storage', 'url'], message: 'must be sqlite://<path>, sqlite://:memory: or postgres://…' });
  }
  return issues;
}

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function digestOf(key: { readonly key?: unknown; readonly key_sha256?: unknown }): string | undefined {
  if (typeof key.key_sha256 === 'string') return key.key_sha256.toLowerCase();
  return typeof key.key === 'string' ? createHash('sha256').update(key.key).digest('hex') : undefined;
}

const seconds = (value: number | undefined): number | undefined => (value === undefined ? undefined : Math.round(value * 1000));

function limitsOf(limits: RawKey['limits']): RateLimits {
  return { rpm: limits?.rpm ?? null, tpm: limits?.tpm ?? null, concurrency: limits?.concurrency ?? null };
}

function resolveStorage(url: string, dir: string): string {
  if (!url.startsWith('sqlite://')) return url;
  const rest = url.slice('sqlite://'.length);
  if (rest === ':memory:' || path.isAbsolute(rest)) return url;
  return `sqlite://${path.resolve(dir, rest)}`;
}

function build(
  raw: RawConfig,
  file: string,
  references: ReadonlyMap<string, readonly string[]>,
  modified: Date,
): GatewayConfig {
  const dir = path.dirname(file);
  const keys: StaticKeyConfig[] = raw.auth.keys.map((k) => ({
    name: k.name,
    sha256: digestOf(k) ?? '',
    balanceUsd: k.balance_usd ?? null,
    models: k.models ?? null,
    limits: limitsOf(k.limits),
  }));
  const providers: ProviderConfig[] = raw.providers.map((p, index) => ({
    id: p.id,
    plugin: p.plugin,
    baseUrl: p.base_url?.replace(/\/+$/, ''),
    apiKey: p.api_key === '' ? undefined : p.api_key,
    // api_key written but empty after interpolation: the provider is unusable until it is set.
    missingKeyVariables: p.api_key === '' ? (references.get(`providers[${index}].api_key`) ?? []) : null,
    options: p.options ?? {},
    timeouts: {
      connectMs: p.timeouts?.connect_ms ?? DEFAULT_TIMEOUTS.connectMs,
      firstByteMs: p.timeouts?.first_byte_ms ?? DEFAULT_TIMEOUTS.firstByteMs,
      idleMs: p.timeouts?.idle_ms ?? DEFAULT_TIMEOUTS.idleMs,
      totalMs: p.timeouts?.total_ms ?? DEFAULT_TIMEOUTS.totalMs,
    },
    yamlPath: `providers[${index}]`,
  }));
  const models: ModelConfig[] = raw.models.map((m) => ({
    id: m.id,
    name: m.name ?? m.id,
    routes: m.routes.map((r) => ({ provider: r.provider, model: r.model ?? m.id, weight: r.weight ?? null })),
    pricing: {
      input: m.pricing.input,
      output: m.pricing.output ?? 0,
      cacheRead: m.pricing.cache_read ?? null,
      cacheWrite: m.pricing.cache_write ?? null,
      reasoning: m.pricing.reasoning ?? null,
      request: m.pricing.request ?? null,
      inputAudio: m.pricing.input_audio ?? null,
      outputAudio: m.pricing.output_audio ?? null,
      inputImage: m.pricing.input_image ?? null,
      outputImage: m.pricing.output_image ?? null,
      image: m.pricing.image ?? null,
      characters: m.pricing.characters ?? null,
      audioMinute: m.pricing.audio_minute ?? null,
    },
    contextLength: m.context_length ?? null,
    maxOutputTokens: m.max_output_tokens ?? null,
    maxImages: m.max_images ?? null,
    inputModalities: m.input_modalities ?? ['text'],
    outputModalities: m.output_modalities ?? ['text'],
    created: m.created === undefined ? modified : new Date(m.created),
    supportedParameters: m.supported_parameters ?? null,
  }));
  return {
    file,
    dir,
    telemetry: raw.telemetry ? { otlpEndpoint: raw.telemetry.otlp_endpoint, serviceName: raw.telemetry.service_name, sampleRatio: raw.telemetry.sample_ratio } : null,
    server: {
      host: raw.server.host,
      port: raw.server.port,
      maxBodyBytes: Math.floor(raw.server.max_body_mb * 1048576),
      shutdownGraceMs: seconds(raw.server.shutdown_grace_s) ?? DEFAULT_SERVER.shutdownGraceMs,
      headersTimeoutMs: seconds(raw.server.headers_timeout_s) ?? DEFAULT_SERVER.headersTimeoutMs,
      requestTimeoutMs: seconds(raw.server.request_timeout_s) ?? DEFAULT_SERVER.requestTimeoutMs,
      keepaliveMs: seconds(raw.server.keepalive_s) ?? DEFAULT_SERVER.keepaliveMs,
      metrics: raw.server.metrics,
      watchConfig: raw.server.watch_config,
    },
    routing: {
      retries: raw.routing.retries ?? DEFAULT_ROUTING.retries,
      backoffMs: raw.routing.backoff_ms ?? DEFAULT_ROUTING.backoffMs,
      maxRetryAfterMs: seconds(raw.routing.max_retry_after_s) ?? DEFAULT_ROUTING.maxRetryAfterMs,
      breakerFailures: raw.routing.circuit_breaker?.failures ?? DEFAULT_ROUTING.breakerFailures,
      breakerCooldownMs: seconds(raw.routing.circuit_breaker?.cooldown_s) ?? DEFAULT_ROUTING.breakerCooldownMs,
    },
    responses: { retentionMs: raw.responses.retention_days * 86_400_000 },
    storage: { url: resolveStorage(raw.storage.url, dir) },
    redis: raw.redis ? { url: raw.redis.url, prefix: raw.redis.prefix } : null,
    log: { level: raw.log.level },
    auth: {
      keyPrefix: raw.auth.key_prefix,
      keys,
      adminKeySha256: raw.auth.admin_key ? createHash('sha256').update(raw.auth.admin_key).digest('hex') : null,
      defaultLimits: limitsOf(raw.auth.default_limits),
    },
    providers,
    models,
  };
}

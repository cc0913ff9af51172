import { z } from 'zod';
import { MAX_BALANCE_USD, perMillionToPicoPerToken } from '../billing/money.ts';

/**
 * The YAML file's shape, validated once at start-up (issue #2). Every object is strict, so a typo is
 * an error at its YAML path rather than a silently ignored setting.
 */

// `${PORT}` interpolates to a string; a numeric field accepts a numeric string.
const numeric = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v), schema);

// Money is kept in integer pico-dollars: a per-million price is exact with up to 6 decimals.
// The check is the conversion itself, so what loads is what can be charged.
const exactPrice = (value: number): boolean => {
  try {
    perMillionToPicoPerToken(value);
    return true;
  } catch {
    return false;
  }
};
const price = numeric(z.number().min(0).refine(exactPrice, 'must have at most 6 decimal places'));
const positiveInt = numeric(z.number().int().min(1));

/** Upstream timers in milliseconds (issue #5); defaults in config/defaults.ts. */
export const timeoutsSchema = z.strictObject({
  connect_ms: positiveInt.optional(),
  first_byte_ms: positiveInt.optional(),
  idle_ms: positiveInt.optional(),
  total_ms: positiveInt.optional(),
});

// `embeddings` as an output says the model serves /v1/embeddings (OpenRouter's name; issue #13).
const MODALITIES = ['text', 'image', 'audio', 'file', 'video', 'embeddings'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}, 'must be an http:// or https:// URL');

/** Per-key rate limits (issue #5); an unset field does not apply, or falls back to auth.default_limits. */
export const limitsSchema = z.strictObject({
  rpm: positiveInt.optional(),
  tpm: positiveInt.optional(),
  concurrency: positiveInt.optional(),
});

export const keySchema = z
  .strictObject({
    name: z.string().min(1),
    key: z.string().min(16, 'a key must be at least 16 characters').optional(),
    key_sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be the 64-character hex SHA-256 digest of the key')
      .optional(),
    balance_usd: numeric(z.number().min(0).max(MAX_BALANCE_USD)).nullable().optional(),
    models: z.array(z.string().min(1)).min(1).optional(),
    limits: limitsSchema.optional(),
  })
  .refine((k) => (k.key === undefined) !== (k.key_sha256 === undefined), {
    message: 'set exactly one of key or key_sha256',
  });

export const providerSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be letters, digits, ".", "_" or "-"'),
  plugin: z.string().min(1),
  base_url: httpUrl.optional(),
  api_key: z.string().optional(),
  options: z.record(z.string(), z.unknown()).optional(),
  timeouts: timeoutsSchema.optional(),
});

export const pricingSchema = z.strictObject({
  input: price,
  /** Required for a model with text output; an embedding model has none (modelSchema). */
  output: price.optional(),
  cache_read: price.optional(),
  cache_write: price.optional(),
  reasoning: price.optional(),
  request: price.optional(),
  /** Audio tokens, per million (issue #13); default to `input` and `output`. */
  input_audio: price.optional(),
  output_audio: price.optional(),
  /** Image tokens, per million (issue #13); default to `input` and `output`. */
  input_image: price.optional(),
  output_image: price.optional(),
  /** Speech: USD per million characters of `input` (issue #13). */
  characters: price.optional(),
  /** Transcription and translation: USD per minute of audio, as the upstream reports it (issue #13). */
  audio_minute: price.optional(),
  /**
   * USD per image generated: one price, or a table by size and quality (`1024x1024`,
   * `1024x1536/high`); a request matches size/quality, then size, and otherwise pays the dearest.
   */
  image: z.union([price, z.record(z.string().regex(/^(\d+x\d+|auto)(\/[a-z]+)?$/, 'must be a size such as "1024x1024", optionally with "/quality"'), price)]).optional(),
});

export const modelSchema = z.strictObject({
  id: z.string().regex(/^\S+$/, 'must not be empty or contain spaces'),
  name: z.string().min(1).optional(),
  routes: z
    .array(z.strictObject({ provider: z.string().min(1), model: z.string().min(1).optional(), weight: positiveInt.optional() }))
    .min(1),
  pricing: pricingSchema,
  context_length: positiveInt.optional(),
  max_output_tokens: positiveInt.optional(),
  input_modalities: z.array(z.enum(MODALITIES)).min(1).optional(),
  output_modalities: z.array(z.enum(MODALITIES)).min(1).optional(),
  /** The most images one request may ask for (`n`); OpenAI's limit is 10. */
  max_images: numeric(z.number().int().min(1).max(10)).optional(),
  created: z.iso.date().or(z.iso.datetime()).optional(),
  /** Chat request parameters the model honours, for GET /v1/models; else derived from its route. */
  supported_parameters: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a parameter name such as "tools"')).optional(),
}).superRefine((model, ctx) => {
  // Output tokens are billed for text output: leaving the price out there would make them free.
  if (model.pricing.output === undefined && (model.output_modalities ?? ['text']).includes('text')) {
    ctx.addIssue({ code: 'custom', path: ['pricing', 'output'], message: 'is required for a model with text output' });
  }
  // A speech model (audio out, no text) must say what a character costs, or speech would be free.
  const outputs = model.output_modalities ?? ['text'];
  if (outputs.includes('audio') && !outputs.includes('text') && model.pricing.characters === undefined) {
    ctx.addIssue({ code: 'custom', path: ['pricing', 'characters'], message: 'is required for a speech model (audio output without text)' });
  }
  // A model that draws must say what an image costs, or every image would be free.
  if ((model.output_modalities ?? []).includes('image') && model.pricing.image === undefined && model.pricing.output_image === undefined) {
    ctx.addIssue({ code: 'custom', path: ['pricing'], message: 'a model with image output needs `image` (per image) or `output_image` (per million image tokens)' });
  }
});

export const configSchema = z.strictObject({
  server: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: numeric(z.number().int().min(0).max(65535)).default(8080),
      max_body_mb: numeric(z.number().positive().max(1024)).default(32),
      shutdown_grace_s: numeric(z.number().min(0).max(86_400)).optional(),
      headers_timeout_s: numeric(z.number().positive().max(600)).optional(),
      request_timeout_s: numeric(z.number().positive().max(3600)).optional(),
      keepalive_s: numeric(z.number().positive().max(600)).optional(),
      /** GET /metrics (issue #16): off, public, or behind the admin key (the default). */
      metrics: z.enum(['off', 'public', 'admin']).default('admin'),
      /** Reload the file when it changes, as on SIGHUP (issue #16). */
      watch_config: z.boolean().default(false),
    })
    .default({ host: '127.0.0.1', port: 8080, max_body_mb: 32, metrics: 'admin', watch_config: false }),
  routing: z
    .strictObject({
      retries: numeric(z.number().int().min(0).max(10)).optional(),
      backoff_ms: positiveInt.optional(),
      max_retry_after_s: numeric(z.number().min(0).max(3600)).optional(),
      circuit_breaker: z.strictObject({ failures: positiveInt.optional(), cooldown_s: numeric(z.number().positive().max(86_400)).optional() }).optional(),
    })
    .default({}),
  /** OpenTelemetry traces (issue #16): off unless an OTLP/HTTP endpoint is given. */
  telemetry: z
    .strictObject({
      otlp_endpoint: z.url({ protocol: /^https?$/ }),
      service_name: z.string().min(1).default('junction'),
      sample_ratio: numeric(z.number().min(0).max(1)).default(1),
    })
    .optional(),
  /** Responses the gateway remembers (issue #14): for how long. */
  responses: z.strictObject({ retention_days: numeric(z.number().positive().max(3650)).default(30) }).default({ retention_days: 30 }),
  storage: z.strictObject({ url: z.string().min(1).default('sqlite://data/junction.db') }).default({
    url: 'sqlite://data/junction.db',
  }),
  /** Shared fast state for several instances (issue #7): rate limits now. Absent: per-process memory. */
  redis: z
    .strictObject({
      url: z.string().regex(/^rediss?:\/\/.+/, 'must be redis://host:port or rediss://… (TLS)'),
      /** Prepended to every Redis key, so deployments can share one Redis. */
      prefix: z.string().regex(/^[A-Za-z0-9_:.-]*$/, 'must be letters, digits, "_", ":", "." or "-"').default('junction:'),
    })
    .optional(),
  log: z.strictObject({ level: z.enum(LOG_LEVELS).default('info') }).default({ level: 'info' }),
  auth: z
    .strictObject({
      key_prefix: z.string().regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, "_" or "-"').default('sk-jct-'),
      keys: z.array(keySchema).default([]),
      /** Turns on /admin/*; unset (or empty) means the admin API is off. */
      admin_key: z.string().refine((v) => v === '' || v.length >= 24, 'an admin key must be at least 24 characters').optional(),
      /** Limits for every key that does not set its own, field by field. */
      default_limits: limitsSchema.optional(),
    })
    .default({ key_prefix: 'sk-jct-', keys: [] }),
  providers: z.array(providerSchema).default([]),
  models: z.array(modelSchema).default([]),
});

export type RawConfig = z.infer<typeof configSchema>;
export type RawModel = z.infer<typeof modelSchema>;
export type RawProvider = z.infer<typeof providerSchema>;
export type RawKey = z.infer<typeof keySchema>;

/** Every key the schema knows, for "did you mean" hints on typos. */
export const KNOWN_KEYS: readonly string[] = [
  ...new Set([
    'server', 'host', 'port', 'max_body_mb', 'shutdown_grace_s', 'headers_timeout_s', 'request_timeout_s', 'keepalive_s', 'metrics', 'watch_config',
    'routing', 'retries', 'backoff_ms', 'max_retry_after_s', 'circuit_breaker', 'failures', 'cooldown_s',
    ...Object.keys(timeoutsSchema.shape),
    'responses', 'retention_days', 'storage', 'url', 'redis', 'prefix', 'log', 'level', 'auth', 'key_prefix', 'keys', 'admin_key', 'default_limits',
    ...Object.keys(limitsSchema.shape),
    ...Object.keys(keySchema.shape),
    ...Object.keys(providerSchema.shape),
    ...Object.keys(pricingSchema.shape),
    ...Object.keys(modelSchema.shape),
    'provider', 'model', 'weight', 'providers', 'models',
  ]),
];

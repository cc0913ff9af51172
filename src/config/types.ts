import type { RateLimits } from '../limits/limiter.ts';

/** The validated gateway configuration: what the rest of the code reads, never the raw YAML. */

export interface GatewayConfig {
  /** Absolute path of the YAML file; relative paths inside it resolve against `dir`. */
  readonly file: string;
  readonly dir: string;
  readonly server: ServerConfig;
  /** OpenTelemetry traces (issue #16); null: off. */
  readonly telemetry: { readonly otlpEndpoint: string; readonly serviceName: string; readonly sampleRatio: number } | null;
  readonly routing: RoutingConfig;
  /** How long a stored response (its upstream, or the items Junction keeps) is kept, in milliseconds (issue #14: `responses.retention_days`). */
  readonly responses: { readonly retentionMs: number };
  /** `sqlite://` URLs are absolute here. */
  readonly storage: { readonly url: string };
  /** Shared rate limits across instances; null: each process keeps its own (issue #7). */
  readonly redis: { readonly url: string; readonly prefix: string } | null;
  readonly log: { readonly level: string };
  readonly auth: {
    readonly keyPrefix: string;
    readonly keys: readonly StaticKeyConfig[];
    /** SHA-256 of `auth.admin_key`; null when the admin API is off. */
    readonly adminKeySha256: string | null;
    /** `auth.default_limits`: for every key, where it sets no limit of its own (issue #5). */
    readonly defaultLimits: RateLimits;
  };
  readonly providers: readonly ProviderConfig[];
  readonly models: readonly ModelConfig[];
}

export interface ServerConfig {
  readonly host: string;
  readonly port: number;
  readonly maxBodyBytes: number;
  /** SIGTERM/SIGINT: how long in-flight requests may finish before they are ended (issue #5). */
  readonly shutdownGraceMs: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** SSE keepalive interval for a stream waiting on its upstream. */
  readonly keepaliveMs: number;
  /** Who may read GET /metrics (issue #16): nobody, anybody, or the admin key. */
  readonly metrics: 'off' | 'public' | 'admin';
  /** Reload the file when it changes, as on SIGHUP (issue #16). */
  readonly watchConfig: boolean;
}

/** Retries, fallbacks and circuit breakers (issue #5). */
export interface RoutingConfig {
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxRetryAfterMs: number;
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
}

/** Upstream timers; null means none. */
export interface Timeouts {
  readonly connectMs: number;
  readonly firstByteMs: number;
  readonly idleMs: number;
  readonly totalMs: number | null;
}

export interface StaticKeyConfig {
  readonly name: string;
  /** Lower-case hex SHA-256 of the key; the key itself is never kept. */
  readonly sha256: string;
  /** Starting balance; null means unlimited. Enforced by the ledger (issue #4). */
  readonly balanceUsd: number | null;
  /** Model-id globs this key may use; null means every model. */
  readonly models: readonly string[] | null;
  /** The key's own `limits`; null fields fall back to auth.default_limits. */
  readonly limits: RateLimits;
}

export interface ProviderConfig {
  readonly id: string;
  /** Built-in plugin name, a path relative to the YAML file, or an npm package name. */
  readonly plugin: string;
  readonly baseUrl: string | undefined;
  readonly apiKey: string | undefined;
  /**
   * Non-null when `api_key` was written but came out empty: the environment variables to set.
   * Requests routed to the provider then answer 503 naming them.
   */
  readonly missingKeyVariables: readonly string[] | null;
  readonly options: Readonly<Record<string, unknown>>;
  readonly timeouts: Timeouts;
  /** `providers[2]`, for error messages. */
  readonly yamlPath: string;
}

/** USD per million tokens, as written in the YAML. */
export interface Pricing {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number | null;
  readonly cacheWrite: number | null;
  readonly reasoning: number | null;
  /** Flat USD per request. */
  readonly request: number | null;
  /** Audio tokens, USD per million; null: the input and output prices. */
  readonly inputAudio: number | null;
  readonly outputAudio: number | null;
  /** Image tokens, USD per million; null: the input and output prices. */
  readonly inputImage: number | null;
  readonly outputImage: number | null;
  /** Speech: USD per million characters; null for none. */
  readonly characters: number | null;
  /** Transcription: USD per minute of audio; null for none. */
  readonly audioMinute: number | null;
  /** USD per image: one price, a table by `size` or `size/quality`, or null for none. */
  readonly image: number | Readonly<Record<string, number>> | null;
}

export interface RouteConfig {
  readonly provider: string;
  /** The model name sent upstream; defaults to the catalogue id. */
  readonly model: string;
  /** Share of load among adjacent weighted routes; null for an unweighted route (docs/limits-and-resilience.md, "Resilience"). */
  readonly weight: number | null;
}

export interface ModelConfig {
  readonly id: string;
  readonly name: string;
  /** Ordered fallbacks; adjacent weighted routes share load (issue #5). */
  readonly routes: readonly RouteConfig[];
  readonly pricing: Pricing;
  readonly contextLength: number | null;
  readonly maxOutputTokens: number | null;
  /** The most images one request may ask for; null: 10, OpenAI's limit. */
  readonly maxImages: number | null;
  readonly inputModalities: readonly string[];
  readonly outputModalities: readonly string[];
  readonly created: Date;
  /** `supported_parameters` as written; null means derived from the first route (catalogue/parameters.ts). */
  readonly supportedParameters: readonly string[] | null;
}

/**
 * Coded gateway errors, and the one place that renders them in the caller's wire format.
 *
 * Status → `error.type` follows Anthropic's table (docs: api/errors), which the OpenAI SDK also
 * accepts as a free-form `type`; see ../shared/reference/protocol.md §A.9 and §B.7.
 */

/**
 * The wire format a caller speaks, which decides the shape of its error bodies. Responses callers
 * get OpenAI's error body, as Chat callers do; only their in-band stream error differs.
 */
export type Surface = 'messages' | 'chat' | 'responses';

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export function errorTypeForStatus(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

const STATUS_BY_TYPE: ReadonlyMap<string, number> = new Map(
  Object.entries(TYPE_BY_STATUS).map(([status, type]) => [type, Number(status)]),
);

/** The HTTP status an error type stands for, when only the type is known (an in-band error). */
export function statusForErrorType(type: string): number | undefined {
  return STATUS_BY_TYPE.get(type);
}

export interface GatewayErrorInit {
  readonly status: number;
  /** Stable machine code for logs and tests, `GW_ERR_*`. */
  readonly code: string;
  readonly message: string;
  /** Overrides the status-derived `error.type`. */
  readonly type?: string;
  /** Chat format `param`: the offending request field, e.g. `messages[2].role`. */
  readonly param?: string | null;
  /** Chat format `code`, e.g. `model_not_found`. */
  readonly chatCode?: string | null;
  /** Chat format `type` when it differs from the Messages one (e.g. `insufficient_quota`). */
  readonly chatType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  readonly chatType: string;
  readonly param: string | null;
  readonly chatCode: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(init: GatewayErrorInit) {
    super(init.message);
    this.name = 'GatewayError';
    this.status = init.status;
    this.code = init.code;
    this.type = init.type ?? errorTypeForStatus(init.status);
    this.chatType = init.chatType ?? this.type;
    this.param = init.param ?? null;
    this.chatCode = init.chatCode ?? null;
    this.headers = init.headers ?? {};
  }
}

// SDKs retry 408/409/429/5xx unless told otherwise; a retry cannot fix these
// (anthropic-sdk and openai-node both honour `x-should-retry`, protocol.md §A.9).
const NO_RETRY = { 'x-should-retry': 'false' } as const;

const LIMIT_UNITS = { rpm: 'requests per minute', tpm: 'tokens per minute', concurrency: 'concurrent requests' } as const;

/** Factories for every error the gateway raises itself. */
export const ERR = {
  missingKey: () =>
    new GatewayError({
      status: 401,
      code: 'GW_ERR_KEY_MISSING',
      message: 'missing API key: send it in the x-api-key header or as Authorization: Bearer <key>',
      chatCode: 'invalid_api_key',
    }),
  invalidKey: () =>
    new GatewayError({ status: 401, code: 'GW_ERR_KEY_INVALID', message: 'invalid API key', chatCode: 'invalid_api_key' }),
  /** POST /admin/reload with a file that cannot be used: nothing changed (issue #16). */
  configNotReloaded: (problems: readonly string[]) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_CONFIG_NOT_RELOADED',
      message: `the configuration was not reloaded, nothing changed: ${problems.join('; ')}`,
      chatCode: 'config_invalid',
    }),
  keyDisabled: () =>
    new GatewayError({ status: 401, code: 'GW_ERR_KEY_DISABLED', message: 'this API key has been disabled', chatCode: 'invalid_api_key' }),
  conflictingKeys: () =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_KEY_CONFLICT',
      message: 'x-api-key and Authorization carry different keys: send one key',
    }),
  modelForbidden: (model: string) =>
    new GatewayError({
      status: 403,
      code: 'GW_ERR_MODEL_FORBIDDEN',
      message: `this API key may not use model "${model}"`,
      param: 'model',
      chatCode: 'model_not_allowed',
    }),
  versionMissing: () =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_VERSION_MISSING',
      message: 'anthropic-version: header is required',
    }),
  versionInvalid: (value: string) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_VERSION_INVALID',
      message: `anthropic-version: "${value}" is not a supported version; use a date such as 2023-06-01 or later`,
    }),
  invalidJson: (detail: string) =>
    new GatewayError({ status: 400, code: 'GW_ERR_JSON_INVALID', message: `request body is not valid JSON: ${detail}` }),
  bodyNotObject: () =>
    new GatewayError({ status: 400, code: 'GW_ERR_BODY_NOT_OBJECT', message: 'request body must be a JSON object' }),
  jsonTooDeep: (limit: number) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_JSON_TOO_DEEP',
      message: `request body nests deeper than ${limit} levels`,
    }),
  bodyTooLarge: (limitBytes: number) =>
    new GatewayError({
      status: 413,
      code: 'GW_ERR_BODY_TOO_LARGE',
      message: `request body exceeds the ${Math.round(limitBytes / 1048576)} MB limit`,
      headers: { connection: 'close' },
    }),
  // 499 as nginx uses it: nobody is left to read the answer, but the log should say what happened.
  clientClosed: () =>
    new GatewayError({ status: 499, code: 'GW_ERR_CLIENT_CLOSED', message: 'the client closed the connection' }),
  unsupportedEncoding: (encoding: string, zstd: boolean) =>
    new GatewayError({
      status: 415,
      code: 'GW_ERR_CONTENT_ENCODING',
      message:
        encoding === 'zstd' && !zstd
          ? 'content-encoding "zstd" needs a gateway on Node 22.15 or later; send gzip, br or an uncompressed body (Codex CLI: -c features.enable_request_compression=false)'
          : `content-encoding "${encoding}" is not supported; send gzip, deflate, br${zstd ? ', zstd' : ''} or an uncompressed body`,
      headers: { connection: 'close' },
    }),
  bodyNotDecodable: (encoding: string, detail: string) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_BODY_ENCODING',
      message: `request body is not valid ${encoding}: ${detail}`,
      headers: { connection: 'close' },
    }),
  // media.md §8.2 step 5: a malformed form is the client's 400, never a 500.
  formInvalid: (detail: string, unread: boolean) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_FORM_INVALID',
      message: `request body is not a valid multipart form: ${detail}`,
      ...(unread && { headers: { connection: 'close' } }),
    }),
  unsupportedMediaType: (contentType: string, path: string, expected: string) =>
    new GatewayError({
      status: 415,
      code: 'GW_ERR_CONTENT_TYPE',
      message: `${path} takes ${expected}, not "${contentType.slice(0, 100)}"`,
      param: 'content-type',
    }),
  invalidField: (message: string, param: string) =>
    new GatewayError({ status: 400, code: 'GW_ERR_FIELD_INVALID', message, param, chatCode: 'invalid_value' }),
  // OpenAI's own code for an exhausted balance is insufficient_quota (issue #4).
  insufficientBalance: (maxCost: string, available: string) =>
    new GatewayError({
      status: 402,
      code: 'GW_ERR_INSUFFICIENT_BALANCE',
      message: `insufficient balance: this request may cost up to $${maxCost} and $${available} is available; top up the key or lower max_tokens`,
      chatType: 'insufficient_quota',
      chatCode: 'insufficient_quota',
      headers: NO_RETRY,
    }),
  // The key's own limit, not the upstream's (issue #5). Retryable: the SDKs wait out retry-after.
  rateLimited: (limit: 'rpm' | 'tpm' | 'concurrency', value: number, retryAfterS: number, headers: Readonly<Record<string, string>>) =>
    new GatewayError({
      status: 429,
      code: 'GW_ERR_RATE_LIMITED',
      type: 'rate_limit_error',
      message: `rate limit exceeded: ${value} ${LIMIT_UNITS[limit]} for this key; retry in ${retryAfterS} s`,
      chatCode: 'rate_limit_exceeded',
      headers: { ...headers, 'retry-after': String(retryAfterS) },
    }),
  modelNotFound: (model: string) =>
    new GatewayError({
      status: 404,
      code: 'GW_ERR_MODEL_NOT_FOUND',
      message: `model "${model}" not found`,
      param: 'model',
      chatCode: 'model_not_found',
    }),
  metricsClosed: () =>
    new GatewayError({
      status: 403,
      code: 'GW_ERR_METRICS_CLOSED',
      type: 'permission_error',
      message: 'GET /metrics needs the admin key, and none is configured: set auth.admin_key, or server.metrics: public',
    }),
  adminNotFound: (message: string) => new GatewayError({ status: 404, code: 'GW_ERR_ADMIN_NOT_FOUND', message }),
  /** A dashboard form posted from another site, or from a client that does not say where from (issue #16). */
  dashboardCrossSite: () =>
    new GatewayError({
      status: 403,
      code: 'GW_ERR_DASHBOARD_CROSS_SITE',
      type: 'permission_error',
      message: 'the dashboard takes forms from its own pages only: Origin or Sec-Fetch-Site must name this site',
    }),
  dashboardLoginFailed: () => new GatewayError({ status: 401, code: 'GW_ERR_DASHBOARD_LOGIN_FAILED', message: 'that is not the admin key' }),
  generationNotFound: (id: string) =>
    new GatewayError({ status: 404, code: 'GW_ERR_GENERATION_NOT_FOUND', message: `no generation "${id}" for this key` }),
  routeNotFound: (method: string, path: string) =>
    new GatewayError({ status: 404, code: 'GW_ERR_ROUTE_NOT_FOUND', message: `no route for ${method} ${path}` }),
  methodNotAllowed: (method: string, path: string, allowed: string) =>
    new GatewayError({
      status: 405,
      code: 'GW_ERR_METHOD_NOT_ALLOWED',
      message: `${method} is not allowed on ${path}; use ${allowed}`,
      headers: { allow: allowed },
    }),
  providerMissingKey: (provider: string, variables: readonly string[]) =>
    new GatewayError({
      status: 503,
      code: 'GW_ERR_PROVIDER_NO_KEY',
      message:
        variables.length > 0
          ? `provider "${provider}" has no API key: set ${variables.join(' or ')} and restart the gateway`
          : `provider "${provider}" has no API key: set providers[].api_key in the gateway config`,
      headers: NO_RETRY,
    }),
  // An in-process plugin refused the request as the caller's to fix (PluginRequestError, issue #13).
  pluginRefused: (status: number, message: string, param: string | undefined) =>
    new GatewayError({ status, code: 'GW_ERR_PLUGIN_REFUSED', message, ...(param !== undefined && { param }) }),
  // The catalogue's modalities decide what a model does (issue #13): an embedding model writes no chat.
  // OpenAI's own code for it (responses-api.md §5); 404, as for any id a key cannot see (issue #14).
  responseNotFound: (id: string, param: string | null) =>
    new GatewayError({
      status: 404,
      code: 'GW_ERR_RESPONSE_NOT_FOUND',
      message: `${param === 'previous_response_id' ? 'Previous response' : 'Response'} with id '${id.slice(0, 100)}' not found.`,
      param,
      chatCode: 'previous_response_not_found',
    }),
  responseKeptByJunction: (id: string, model: string, param: string) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_RESPONSE_ELSEWHERE',
      message: `'${id.slice(0, 100)}' was answered by translation and is kept by Junction, but model "${model}" is served natively by an upstream that cannot see it; continue it on a translated model, or send the whole conversation as input`,
      param,
    }),
  responseElsewhere: (id: string, provider: string, model: string, param = 'previous_response_id') =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_RESPONSE_ELSEWHERE',
      message: `'${id.slice(0, 100)}' is kept by provider "${provider}", which model "${model}" is not routed to (or not with everything else the request continues); continue it on a model served by "${provider}", or send the whole conversation as input`,
      param,
    }),
  itemNotFound: (id: string) =>
    new GatewayError({
      status: 404,
      code: 'GW_ERR_RESPONSE_NOT_FOUND',
      message: `Item with id '${id.slice(0, 100)}' not found.`,
      param: 'input',
      chatCode: 'item_not_found',
    }),
  endpointNotServed: (model: string, path: string, served: string) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_ENDPOINT_NOT_SERVED',
      message: `model "${model}" does not serve ${path}; it serves ${served === '' ? 'no endpoint' : served}`,
      param: 'model',
    }),
  formatUnsupported: (model: string, provider: string, endpoint: string) =>
    new GatewayError({
      status: 400,
      code: 'GW_ERR_FORMAT_UNSUPPORTED',
      message: `model "${model}" cannot be served on ${endpoint}: its provider "${provider}" does not speak this format`,
      param: 'model',
    }),
  upstreamUnreachable: (provider: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_UPSTREAM_UNREACHABLE',
      type: 'api_error',
      message: `upstream provider "${provider}" could not be reached`,
    }),
  upstreamRejectedCredentials: (provider: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_UPSTREAM_AUTH',
      type: 'api_error',
      message: `upstream provider "${provider}" rejected the gateway's credentials; an operator must fix its API key`,
      headers: NO_RETRY,
    }),
  /**
   * A plugin could not prepare its request: mostly credentials (a cloud's chain found none, a
   * token endpoint refused), else the plugin itself; its log line says which (issue #15).
   */
  upstreamCredentialsUnavailable: (provider: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_UPSTREAM_CREDENTIALS',
      type: 'api_error',
      message: `the gateway could not get credentials for, or prepare its request to, upstream provider "${provider}"; an operator must look at the gateway's log`,
      headers: NO_RETRY,
    }),
  upstreamInterrupted: (provider: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_UPSTREAM_INTERRUPTED',
      type: 'api_error',
      message: `upstream provider "${provider}" ended the response early`,
    }),
  upstreamInvalid: (provider: string, detail: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_UPSTREAM_INVALID',
      type: 'api_error',
      message: `upstream provider "${provider}" sent an invalid response: ${detail}`,
    }),
  // The provider account behind the gateway is out of credit: not the caller's billing problem.
  upstreamBilling: (provider: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_UPSTREAM_BILLING',
      type: 'api_error',
      message: `upstream provider "${provider}" refused the request for billing reasons; an operator must top up its account`,
      headers: NO_RETRY,
    }),
  /** An error the upstream reported, in its status and type, with its message. */
  upstreamReported: (provider: string, status: number, type: string, message: string, headers: Record<string, string>) =>
    new GatewayError({
      status,
      code: 'GW_ERR_UPSTREAM_REPORTED',
      type,
      message: `upstream provider "${provider}": ${message}`,
      headers,
    }),
  // Issue #5: the types stay api_error / overloaded_error, the two every SDK maps to a retryable error.
  upstreamTimeout: (provider: string, kind: 'connect' | 'first_byte' | 'idle' | 'total', ms: number) =>
    new GatewayError({
      status: 504,
      code: kind === 'idle' ? 'GW_ERR_UPSTREAM_STALLED' : 'GW_ERR_UPSTREAM_TIMEOUT',
      type: 'api_error',
      message:
        kind === 'idle'
          ? `upstream provider "${provider}" stalled: nothing for ${Math.round(ms / 1000)} s`
          : `upstream provider "${provider}" timed out: no ${kind === 'connect' ? 'connection' : kind === 'first_byte' ? 'answer' : 'end'} within ${Math.round(ms / 1000)} s`,
    }),
  routesOpen: (model: string, retryAfterS: number) =>
    new GatewayError({
      status: 503,
      code: 'GW_ERR_ROUTES_OPEN',
      type: 'overloaded_error',
      message: `every route of model "${model}" is failing and paused; retry in ${retryAfterS} s`,
      headers: { 'retry-after': String(retryAfterS) },
    }),
  // Redis holds fail closed (issue #7); a Redis that did not answer is not the client's fault (issue #12).
  holdUnavailable: () =>
    new GatewayError({
      status: 503,
      code: 'GW_ERR_HOLD_UNAVAILABLE',
      type: 'overloaded_error',
      message: 'the balance could not be checked in time; nothing was sent or charged, retry shortly',
      headers: { 'retry-after': '1' },
    }),
  shuttingDown: () =>
    new GatewayError({
      status: 503,
      code: 'GW_ERR_SHUTTING_DOWN',
      type: 'overloaded_error',
      message: 'the gateway is shutting down; retry the request',
      headers: { 'retry-after': '1', connection: 'close' },
    }),
  pluginInvalidResult: (provider: string, detail: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_PLUGIN_RESULT',
      type: 'api_error',
      message: `provider "${provider}" returned an invalid result: ${detail}`,
    }),
  pluginFailed: (provider: string) =>
    new GatewayError({
      status: 502,
      code: 'GW_ERR_PLUGIN_FAILED',
      type: 'api_error',
      message: `provider "${provider}" failed while answering`,
    }),
  internal: () =>
    new GatewayError({ status: 500, code: 'GW_ERR_INTERNAL', message: 'internal gateway error' }),
} as const;

export function asGatewayError(err: unknown): GatewayError {
  return err instanceof GatewayError ? err : ERR.internal();
}

export interface RenderedError {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The error object in the caller's format; shared by HTTP bodies and in-band stream errors. */
export function errorPayload(surface: Surface, err: GatewayError, requestId: string): object {
  return surface === 'messages'
    ? { type: 'error', error: { type: err.type, message: err.message }, request_id: requestId }
    : { error: { message: err.message, type: err.chatType, param: err.param, code: err.chatCode } };
}

/** Renders an error as an HTTP response in the caller's format (protocol.md §D.10). */
export function renderError(surface: Surface, err: GatewayError, requestId: string): RenderedError {
  return {
    status: err.status,
    headers: { ...err.headers, 'content-type': 'application/json' },
    body: JSON.stringify(errorPayload(surface, err, requestId)),
  };
}

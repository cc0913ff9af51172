// Part of the public plugin contract (api.ts re-exports it): the errors a plugin throws.

/**
 * Thrown from `create()` for a bad provider setting; start-up reports it at
 * `providers[i].<field>`.
 * @example
 * throw new ProviderConfigError('base_url', 'must not end in /v1');
 */
export class ProviderConfigError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'ProviderConfigError';
    this.field = field;
  }
}

/**
 * Thrown from `invoke` to refuse a request the caller can fix (a 4xx): the client gets `status`
 * and `message` in its own format, naming `param`, and nothing is charged (since 1.2.0). Any
 * other error thrown from `invoke` is a 500 "plugin failed".
 * @example
 * throw new PluginRequestError(400, 'the demo speaks wav or pcm', 'response_format');
 */
export class PluginRequestError extends Error {
  readonly status: number;
  readonly param: string | undefined;
  constructor(status: number, message: string, param?: string) {
    super(message);
    this.name = 'PluginRequestError';
    this.status = status;
    this.param = param;
  }
}

/**
 * Thrown from a format's decoders for a failure the upstream reported inside an answer or a
 * stream (a Gemini error chunk, a malformed function call) (since 1.5.0): the caller gets `status`
 * and `type` in its own format, in-band once its stream has started. Any other throw from a
 * decoder is a 502 "upstream sent something unreadable".
 * @example
 * throw new UpstreamError(429, 'Resource has been exhausted', 'rate_limit_error');
 */
export class UpstreamError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  constructor(status: number, message: string, type?: string) {
    super(message);
    this.name = 'UpstreamError';
    this.status = status;
    this.type = type;
  }
}

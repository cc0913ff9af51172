import type { PluginError, SseEvent, UpstreamResponse } from '../../src/plugin-host/api.ts';
import { messageOf } from './auth.ts';

/**
 * Bedrock's exceptions (providers.md §1.2, from the Smithy model) as the caller's error: the
 * status a client should act on and Anthropic's error type (the core derives OpenAI's from the
 * status). Over HTTP the name is in `x-amzn-ErrorType` (`Name:http://internal…`) or the body's
 * `__type`; in a stream, in the exception message's `:exception-type`, lower camel case.
 */
interface Mapped {
  readonly status: number;
  readonly type: string;
  /** Another route may serve it: a model not enabled in this account or region, not found here. */
  readonly failover?: boolean;
}
const TABLE: Readonly<Record<string, Mapped>> = {
  validationexception: { status: 400, type: 'invalid_request_error' },
  // Sent as a 400, but it is a quota: a client should wait, not fix its request.
  servicequotaexceededexception: { status: 429, type: 'rate_limit_error' },
  accessdeniedexception: { status: 403, type: 'permission_error', failover: true },
  resourcenotfoundexception: { status: 404, type: 'not_found_error', failover: true },
  modeltimeoutexception: { status: 504, type: 'timeout_error' },
  throttlingexception: { status: 429, type: 'rate_limit_error' },
  modelnotreadyexception: { status: 503, type: 'overloaded_error' },
  modelerrorexception: { status: 502, type: 'api_error' },
  modelstreamerrorexception: { status: 502, type: 'api_error' },
  internalserverexception: { status: 500, type: 'api_error' },
  serviceunavailableexception: { status: 503, type: 'overloaded_error' },
};
/** The gateway's own credentials refused: an operator's problem, never the caller's. */
const CREDENTIALS = new Set([
  'unrecognizedclientexception',
  'invalidsignatureexception',
  'incompletesignatureexception',
  'missingauthenticationtokenexception',
  'expiredtokenexception',
  'invalidclienttokenid',
  'signaturedoesnotmatch',
]);
/**
 * AWS sends no Retry-After on throttling; the SDKs back off from about a second. Not for
 * ServiceQuotaExceededException: a daily or token quota does not come back in a second.
 */
const THROTTLE_RETRY_S = 1;

export function exceptionName(response: UpstreamResponse): string {
  const header = response.header('x-amzn-errortype');
  if (header) return header.split(':')[0]!.trim();
  if (typeof response.body === 'object' && response.body !== null) {
    const record = response.body as Record<string, unknown>;
    const named = record['__type'] ?? record['code'];
    if (typeof named === 'string') return named.split('#').pop()!.split(':')[0]!;
  }
  return '';
}

/**
 * AWS's messages name the operator's account, role and session (`User: arn:aws:sts::123456789012:
 * assumed-role/…`): callers of the gateway must not learn them. ARNs and account ids are masked.
 */
export function redacted(message: string): string {
  return message.replace(/arn:aws[a-z-]*:[^\s,'"]+/g, 'arn:…').replace(/\b\d{12}\b/g, '…');
}

/** An HTTP refusal from Bedrock as the caller's error. */
export function bedrockError(response: UpstreamResponse): PluginError {
  const name = exceptionName(response);
  const key = name.toLowerCase();
  const message = messageOf(response.body) || name || `Bedrock answered ${response.status}`;
  if (CREDENTIALS.has(key) || (response.status === 403 && /security token|signature|credential/i.test(message))) {
    return { status: 502, message, credentials: true };
  }
  const mapped = TABLE[key];
  if (!mapped) return { status: response.status, message: name ? `${name}: ${message}` : message };
  return { ...mapped, message: `${name}: ${redacted(message)}`, ...(key === 'throttlingexception' && { retryAfterSeconds: THROTTLE_RETRY_S }) };
}

/** An exception inside a stream, as an Anthropic `error` event: the client gets it in-band, typed. */
export function errorEventOf(name: string, payload: string): SseEvent {
  let message = '';
  try {
    message = messageOf(JSON.parse(payload));
  } catch {
    message = payload.slice(0, 500);
  }
  const mapped = TABLE[name.toLowerCase()] ?? { type: 'api_error' };
  return { event: 'error', data: JSON.stringify({ type: 'error', error: { type: mapped.type, message: `${name}: ${redacted(message) || 'no detail'}` } }) };
}

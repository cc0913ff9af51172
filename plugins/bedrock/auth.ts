import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import type { PluginLogger, SignableRequest, UpstreamResponse } from '../../src/plugin-host/api.ts';
import { SigningKeys, sigV4Headers } from './sigv4.ts';

/**
 * Bedrock's two ways in (providers.md §1.4): a Bedrock API key as a bearer token, or SigV4 with
 * the standard AWS credential chain (env, profile, SSO, credential_process, web identity,
 * container, instance role). SigV4 (sigv4.ts) signs the exact bytes and path sent, as the AWS
 * SDK's signer would: the same headers to the byte, at about a quarter of its cost.
 */

/**
 * The AWS credential chain, built once per provider and memoized by the SDK: credentials that
 * expire are fetched again five minutes before they do, never per request (peers that resolved a
 * chain per request refetched on every call). Imported when first needed: it is a large module.
 */
export function credentialChain(profile: string | undefined): AwsCredentialIdentityProvider {
  let chain: Promise<AwsCredentialIdentityProvider> | undefined;
  return async () => {
    chain ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider(profile === undefined ? {} : { profile }));
    return (await chain)();
  };
}

/** Errors that say the clock, not the credentials, was wrong (providers.md §1.4 step 5). */
const SKEW = /Signature expired|Signature not yet current|RequestTimeTooSkewed|RequestExpired/i;

/**
 * Signs requests for one region, keeping the offset between this machine's clock and AWS's: a
 * request refused for its time is signed again with the clock corrected from the answer's `Date`
 * (as the AWS SDKs' systemClockOffset does; containers resumed from sleep hit this).
 */
export class SigV4Signer {
  readonly #credentials: AwsCredentialIdentityProvider;
  readonly #keys: SigningKeys;
  readonly #checksum: boolean;
  readonly #now: () => number;
  readonly #log: PluginLogger;
  #offsetMs = 0;

  /** `service` and `checksum` (the signed `x-amz-content-sha256` header) are for AWS's test suite, which signs without it. */
  constructor(options: { region: string; credentials: AwsCredentialIdentityProvider; now?: () => number; log: PluginLogger; service?: string; checksum?: boolean }) {
    this.#credentials = options.credentials;
    this.#keys = new SigningKeys(options.region, options.service ?? 'bedrock');
    this.#checksum = options.checksum ?? true;
    this.#now = options.now ?? Date.now;
    this.#log = options.log;
  }

  /** The headers that sign `request`: its path as sent, `%3A` and all, is escaped once more (§1.4 step 1). */
  async sign(request: SignableRequest): Promise<Record<string, string>> {
    const credentials = await this.#credentials();
    return sigV4Headers(request, credentials, new Date(this.#now() + this.#offsetMs), this.#keys, this.#checksum);
  }

  /** True when a refusal was for the request's time and the clock is now corrected from `Date`. */
  correctClock(response: UpstreamResponse): boolean {
    if (response.status !== 403 && response.status !== 400) return false;
    if (!SKEW.test(messageOf(response.body)) && !SKEW.test(response.header('x-amzn-errortype') ?? '')) return false;
    const date = Date.parse(response.header('date') ?? '');
    if (Number.isNaN(date)) return false;
    const offset = date - this.#now();
    this.#log.warn({ offset_ms: offset }, 'AWS refused a signature for its time: signing with the clock corrected from the Date header');
    this.#offsetMs = offset;
    return true;
  }
}

export function messageOf(body: unknown): string {
  if (typeof body === 'string') return body;
  if (typeof body !== 'object' || body === null) return '';
  const record = body as Record<string, unknown>;
  const message = record['message'] ?? record['Message'];
  return typeof message === 'string' ? message : '';
}

export type { AwsCredentialIdentity };

import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, Checksum, SourceData } from '@smithy/types';
import type { PluginLogger, SignableRequest, UpstreamResponse } from '../../src/plugin-host/api.ts';

/**
 * Bedrock's two ways in (providers.md §1.4): a Bedrock API key as a bearer token, or SigV4 with
 * the standard AWS credential chain (env, profile, SSO, credential_process, web identity,
 * container, instance role). SigV4 is `@smithy/signature-v4`, the AWS SDK's own signer, over the
 * exact bytes and path sent; only SHA-256 comes from node:crypto, as the SDK's hash-node does.
 */

/** SHA-256 and HMAC-SHA-256 for the signer, from node:crypto. */
class NodeSha256 implements Checksum {
  readonly #secret: Buffer | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : bytesOf(secret);
    this.#hash = this.#fresh();
  }
  update(data: Uint8Array): void {
    this.#hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {
    this.#hash = this.#fresh();
  }
  #fresh(): Hash | Hmac {
    return this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
}

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

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
  readonly #signer: SignatureV4;
  readonly #now: () => number;
  readonly #log: PluginLogger;
  #offsetMs = 0;

  /** `service` and `checksum` (the signed `x-amz-content-sha256` header) are for AWS's test suite, which signs without it. */
  constructor(options: { region: string; credentials: AwsCredentialIdentityProvider; now?: () => number; log: PluginLogger; service?: string; checksum?: boolean }) {
    this.#signer = new SignatureV4({ service: options.service ?? 'bedrock', region: options.region, credentials: options.credentials, sha256: NodeSha256, applyChecksum: options.checksum ?? true });
    this.#now = options.now ?? Date.now;
    this.#log = options.log;
  }

  async sign(request: SignableRequest): Promise<Record<string, string>> {
    const { url } = request;
    const signed = await this.#signer.sign(
      {
        method: request.method,
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port !== '' && { port: Number(url.port) }),
        // The path as sent, `%3A` and all: the signer escapes it once more (§1.4 step 1).
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { ...request.headers, host: url.host },
        body: request.body,
      },
      { signingDate: new Date(this.#now() + this.#offsetMs) },
    );
    const added: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) {
      if (name !== 'host' && request.headers[name] !== value) added[name] = value;
    }
    return added;
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

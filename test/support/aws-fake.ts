import { createHash, createHmac, timingSafeEqual, type Hash, type Hmac } from 'node:crypto';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, MessageHeaders, SourceData } from '@smithy/types';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { RecordedRequest, Reply } from './fake-upstream.ts';

/**
 * What a Bedrock fake needs to refuse what AWS refuses (providers.md §7): a SigV4 signature
 * recomputed over the request as it arrived (the raw path, the signed headers, the body's hash),
 * a date more than five minutes off, a missing session token; and answers in real event-stream
 * frames, encoded with the AWS SDK's own codec.
 */

/** AWS's documentation credentials (the SigV4 test suite's), with a session token. */
export const AWS_TEST_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'FQoGZXIvYXdzEXAMPLE-session-token',
} as const;

class TestSha256 implements Checksum {
  readonly #secret: Buffer | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : Buffer.from(typeof secret === 'string' ? secret : ArrayBuffer.isView(secret) ? new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength) : new Uint8Array(secret));
    this.#hash = this.#secret ? createHmac('sha256', this.#secret) : createHash('sha256');
  }
  update(data: Uint8Array): void {
    this.#hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }
  reset(): void {
    this.#hash = this.#secret ? createHmac('sha256', this.#secret) : createHash('sha256');
  }
}

const json = { 'content-type': 'application/json' };
export const awsError = (status: number, name: string, message: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { ...json, 'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...headers },
  body: { message },
});

const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const dateOf = (amz: string): Date | undefined => {
  const m = AMZ_DATE.exec(amz);
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : undefined;
};

/**
 * The refusal AWS would send for this request's signature, or undefined when it is good. `now` is
 * the service's clock (a test skews it to see the gateway correct its own).
 */
export async function sigV4Refusal(req: RecordedRequest, region: string, now: number = Date.now(), credentials = AWS_TEST_CREDENTIALS): Promise<Reply | undefined> {
  const authorization = String(req.headers['authorization'] ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!m) return awsError(403, 'IncompleteSignatureException', 'Authorization header requires a valid SigV4 signature.');
  const [, keyId, , scopeRegion, service, signedList] = m;
  if (keyId !== credentials.accessKeyId) return awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  if (scopeRegion !== region || service !== 'bedrock') return awsError(403, 'InvalidSignatureException', `Credential should be scoped to a valid region and service 'bedrock'.`);
  if (req.headers['x-amz-security-token'] !== credentials.sessionToken) return awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const signedAt = dateOf(amzDate);
  if (!signedAt) return awsError(403, 'IncompleteSignatureException', 'X-Amz-Date is missing or malformed.');
  const headers = { date: new Date(now).toUTCString() };
  if (Math.abs(signedAt.getTime() - now) > 5 * 60_000) {
    const stamp = (t: number): string => new Date(t).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
    return awsError(403, 'InvalidSignatureException', `Signature expired: ${amzDate} is now earlier than ${stamp(now - 5 * 60_000)} (${stamp(now)} - 5 min.)`, headers);
  }
  // The body the service got must be the body that was signed.
  const bodyHash = createHash('sha256').update(req.body).digest('hex');
  if (req.headers['x-amz-content-sha256'] !== undefined && req.headers['x-amz-content-sha256'] !== bodyHash) return awsError(400, 'InvalidSignatureException', 'The provided x-amz-content-sha256 header does not match what was computed.');
  const signedNames = signedList!.split(';');
  if (!signedNames.includes('host') || !signedNames.includes('x-amz-date')) return awsError(403, 'InvalidSignatureException', 'host and x-amz-date must be signed.');
  const signedHeaders: Record<string, string> = {};
  for (const name of signedNames) signedHeaders[name] = String(req.headers[name] ?? '');
  const [path, query = ''] = req.url.split('?');
  const host = String(req.headers['host']);
  const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: TestSha256 });
  const expected = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: host.split(':')[0]!, path: path!, query: Object.fromEntries(new URLSearchParams(query)), headers: signedHeaders, body: req.body },
    { signingDate: signedAt },
  );
  const want = Buffer.from(String(expected.headers['authorization']));
  const got = Buffer.from(authorization);
  if (want.length !== got.length || !timingSafeEqual(want, got)) {
    return awsError(403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided.');
  }
  return undefined;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const str = (value: string) => ({ type: 'string' as const, value });

/** One event-stream message. */
export function frame(eventType: string, payload: unknown, messageType: 'event' | 'exception' = 'event'): Buffer {
  const headers: MessageHeaders = {
    [messageType === 'event' ? ':event-type' : ':exception-type']: str(eventType),
    ':content-type': str('application/json'),
    ':message-type': str(messageType),
  };
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) }));
}

/** An Invoke stream's `chunk`: one Anthropic event, base64 in `bytes`. */
export const chunk = (event: unknown): Buffer => frame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') });

/** The data of each event of an SSE text, as objects. */
export function sseEvents(sse: string): Record<string, unknown>[] {
  return sse
    .split(/\n\n/)
    .map((block) => block.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

/** Bytes cut every `size` bytes, as a network may deliver them (frames split and joined). */
export function cutEvery(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

export const eventStream = (chunks: readonly Buffer[], headers: Record<string, string> = {}): Reply => ({
  headers: { 'x-amzn-bedrock-content-type': 'application/json', ...headers },
  binary: { chunks, contentType: 'application/vnd.amazon.eventstream' },
});

export const AWS_ENV = {
  AWS_ACCESS_KEY_ID: AWS_TEST_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: AWS_TEST_CREDENTIALS.secretAccessKey,
  AWS_SESSION_TOKEN: AWS_TEST_CREDENTIALS.sessionToken,
  // Never the machine's own AWS setup, and never the instance metadata service.
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_CONFIG_FILE: '/nonexistent/aws-config',
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
  AWS_PROFILE: undefined,
};

/** Sets AWS's environment for a suite, and puts the machine's back after it. */
export function useAwsEnv(env: Readonly<Record<string, string | undefined>> = AWS_ENV): void {
  const saved: Record<string, string | undefined> = {};
  before(() => {
    for (const [name, value] of Object.entries(env)) {
      saved[name] = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}

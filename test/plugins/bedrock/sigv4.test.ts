import { expect } from 'chai';
import fc from 'fast-check';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Checksum, SourceData } from '@smithy/types';
import type { SignableRequest } from '../../../src/plugin-host/api.ts';
import { SigV4Signer } from '../../../plugins/bedrock/auth.ts';
import { SigningKeys, sigV4Headers } from '../../../plugins/bedrock/sigv4.ts';

/**
 * The plugin's SigV4 (sigv4.ts) replaced the AWS SDK's signer on the request path (issue #15: 53 µs
 * a request). Its headers must be that signer's to the byte, in the same order, for any request
 * the plugin could sign: here against the signer it replaced, called as it was called, on random
 * paths, queries, header names and values (case, whitespace, unsignable and generated ones, a hash
 * given), bodies, dates and credentials. Its signing key is kept for a day and made again the next.
 */
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The SHA-256 the replaced signer ran on, from node:crypto. */
class NodeSha256 implements Checksum {
  readonly #secret: Buffer | undefined;
  #hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.#secret = secret === undefined ? undefined : typeof secret === 'string' ? Buffer.from(secret, 'utf8') : ArrayBuffer.isView(secret) ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength) : Buffer.from(secret);
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

/** The plugin's signing before sigv4.ts, word for word. */
async function previousSign(request: SignableRequest, credentials: AwsCredentialIdentity, date: Date, region: string, service: string, checksum: boolean): Promise<Record<string, string>> {
  const signer = new SignatureV4({ service, region, credentials: () => Promise.resolve(credentials), sha256: NodeSha256, applyChecksum: checksum });
  const { url } = request;
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port !== '' && { port: Number(url.port) }),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { ...request.headers, host: url.host },
      body: request.body,
    },
    { signingDate: date },
  );
  const added: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    if (name !== 'host' && request.headers[name] !== value) added[name] = value;
  }
  return added;
}

const codeUnits = (max: number) => fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: max });
const arbSegment = fc.oneof(fc.constantFrom('', '.', '..', 'model', 'us.anthropic.claude-sonnet-4-5-20250929-v1%3A0', 'a:b', 'x y', '%2F', 'é', "it's(*)!", 'invoke-with-response-stream'), fc.string({ maxLength: 8 }));
const arbHeaderName = fc.oneof(
  fc.constantFrom('content-type', 'Content-Type', 'X-Amz-Date', 'x-amz-date', 'Date', 'Authorization', 'x-amz-content-sha256', 'X-Amz-Content-Sha256', 'X-Amz-Security-Token', 'x-amz-security-token', 'user-agent', 'proxy-authorization', 'Sec-Fetch-Mode', 'traceparent', 'x-amzn-bedrock-accept', 'host', 'Host', 'anthropic-beta', '1234', 'x-amzn-trace-id', '__proto__'),
  fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/),
);
const arbHeaderValue = fc.oneof(fc.constantFrom('application/json', '  spaced \t out  ', 'a\r\nb', ' ', '', '20150830T123600Z', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'), codeUnits(20));
const arbRequest = fc
  .record({
    host: fc.constantFrom('bedrock-runtime.us-east-1.amazonaws.com', 'bedrock-runtime.eu-west-3.amazonaws.com:8443', '127.0.0.1:9000', 'example.amazonaws.com'),
    segments: fc.array(arbSegment, { maxLength: 6 }),
    trailingSlash: fc.boolean(),
    query: fc.array(fc.tuple(fc.oneof(fc.constantFrom('X-Amz-Signature', 'x-amz-signature', 'Param1', 'a', 'A', 'b c', '__proto__', '7'), fc.string({ maxLength: 6 })), fc.string({ maxLength: 6 })), { maxLength: 4 }),
    headers: fc.array(fc.tuple(arbHeaderName, arbHeaderValue), { maxLength: 8 }),
    body: fc.uint8Array({ maxLength: 200 }),
  })
  .map(({ host, segments, trailingSlash, query, headers, body }): SignableRequest => {
    const url = new URL(`https://${host}/${segments.map((s) => encodeURIComponent(s).replace(/%25/g, '%')).join('/')}${trailingSlash ? '/' : ''}`);
    for (const [key, value] of query) url.searchParams.append(key, value);
    return { method: 'POST', url, headers: Object.fromEntries(headers), body };
  });
const arbCredentials = fc.record(
  {
    accessKeyId: fc.constantFrom('AKIDEXAMPLE', 'ASIAXXXXEXAMPLE'),
    secretAccessKey: fc.oneof(fc.constant('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'), fc.string({ minLength: 1, maxLength: 40 })),
    sessionToken: fc.oneof(fc.constant(''), fc.string({ maxLength: 30 })),
  },
  { requiredKeys: ['accessKeyId', 'secretAccessKey'] },
);
const arbDate = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }).map((ms) => new Date(ms));

describe('bedrock SigV4: the same headers as the AWS SDK\'s signer', () => {
  it('signs any request as the replaced signer did: the same headers, values and order', async () => {
    await fc.assert(
      fc.asyncProperty(arbRequest, arbCredentials, arbDate, fc.constantFrom('us-east-1', 'eu-west-3'), fc.constantFrom('bedrock', 'service'), fc.boolean(), async (request, credentials, date, region, service, checksum) => {
        const expected = await previousSign(request, credentials, date, region, service, checksum);
        const keys = new SigningKeys(region, service);
        const actual = sigV4Headers(request, credentials, date, keys, checksum);
        expect(Object.entries(actual)).to.deep.equal(Object.entries(expected));
        // Again with the key kept from the first time.
        expect(Object.entries(sigV4Headers(request, credentials, date, keys, checksum))).to.deep.equal(Object.entries(expected));
      }),
      { seed: 15, numRuns: 1500 },
    );
  });

  it('refuses credentials without a key id or secret, as the SDK\'s signer did', async () => {
    const request: SignableRequest = { method: 'POST', url: new URL('https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke'), headers: {}, body: new Uint8Array() };
    const bad = { accessKeyId: 'AKID' } as unknown as AwsCredentialIdentity;
    const previous = await previousSign(request, bad, new Date(), 'us-east-1', 'bedrock', true).then(
      () => 'signed',
      (err: Error) => err.message,
    );
    expect(previous).to.equal('Resolved credential object is not valid');
    expect(() => sigV4Headers(request, bad, new Date(), new SigningKeys('us-east-1', 'bedrock'), true)).to.throw(previous);
  });
});

describe('bedrock SigV4: the signing key is kept for its day', () => {
  const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
  const derived = (day: string, key = secret): Buffer => ['us-east-1', 'bedrock', 'aws4_request'].reduce((k, part) => createHmac('sha256', k).update(part).digest(), createHmac('sha256', `AWS4${key}`).update(day).digest());

  it('is made once a day and secret: the same key until the day or the secret changes', () => {
    const keys = new SigningKeys('us-east-1', 'bedrock');
    const first = keys.keyFor(secret, '20260101');
    expect(first.export().equals(derived('20260101'))).to.equal(true);
    expect(keys.keyFor(secret, '20260101')).to.equal(first);
    const next = keys.keyFor(secret, '20260102');
    expect(next).to.not.equal(first);
    expect(next.export().equals(derived('20260102'))).to.equal(true);
    const rotated = keys.keyFor('another-secret', '20260102');
    expect(rotated.export().equals(derived('20260102', 'another-secret'))).to.equal(true);
    expect(keys.keyFor(secret, '20260102').export().equals(next.export())).to.equal(true);
  });

  it('signs across midnight with the next day\'s key, by the signer\'s own clock (and its correction)', async () => {
    let now = Date.UTC(2026, 0, 1, 23, 59, 59, 999);
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: secret, sessionToken: 'token' };
    const signer = new SigV4Signer({ region: 'us-east-1', credentials: () => Promise.resolve(credentials), now: () => now, log: silent });
    const request: SignableRequest = { method: 'POST', url: new URL('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-v2%3A1/invoke'), headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') };
    const check = async (at: number): Promise<string> => {
      const signed = await signer.sign(request);
      expect(signed).to.deep.equal(await previousSign(request, credentials, new Date(at), 'us-east-1', 'bedrock', true));
      return signed['authorization']!;
    };
    expect(await check(now)).to.include('/20260101/us-east-1/bedrock/aws4_request');
    now += 1;
    expect(await check(now)).to.include('/20260102/us-east-1/bedrock/aws4_request');
    // AWS said its clock is a day behind ours: the corrected clock's day is signed.
    const date = new Date(now - 86_400_000).toUTCString();
    expect(signer.correctClock({ status: 403, headers: new Headers(), header: (name: string) => (name === 'date' ? date : undefined), body: { message: 'Signature expired' } } as never)).to.equal(true);
    expect(await check(Date.parse(date))).to.include('/20260101/us-east-1/bedrock/aws4_request');
  });
});

import { expect } from 'chai';
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SigV4Signer } from '../../../plugins/bedrock/auth.ts';

/**
 * The plugin's signer (the AWS SDK's SignatureV4 with node:crypto's SHA-256) against the official
 * AWS Signature Version 4 test suite's POST cases: the Authorization header must match exactly.
 */
interface Suite {
  region: string;
  service: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  signingDate: string;
  cases: { name: string; url: string; headers: Record<string, string>; body: string; authorization: string }[];
}
const suite = JSON.parse(readFileSync(new URL('../../fixtures/aws/sigv4-suite.json', import.meta.url), 'utf8')) as Suite;
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

describe('bedrock SigV4 signer: the AWS test suite', () => {
  const signer = new SigV4Signer({
    region: suite.region,
    service: suite.service,
    checksum: false,
    credentials: () => Promise.resolve(suite.credentials),
    now: () => Date.parse(suite.signingDate),
    log: silent,
  });
  for (const test of suite.cases) {
    it(test.name, async () => {
      const headers = { ...test.headers, 'x-amz-date': '20150830T123600Z' };
      const added = await signer.sign({ method: 'POST', url: new URL(test.url), headers, body: Buffer.from(test.body) });
      expect(added['authorization']).to.equal(test.authorization);
    });
  }

  it('a Bedrock request signs its content type and the hash of the exact body bytes', async () => {
    const bedrock = new SigV4Signer({ region: 'us-east-1', credentials: () => Promise.resolve(suite.credentials), now: () => Date.parse(suite.signingDate), log: silent });
    const url = new URL('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-v2%3A1/invoke');
    const once = await bedrock.sign({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') });
    expect(once['authorization']).to.match(/SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date/);
    expect(once['x-amz-content-sha256']).to.equal('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });

  it('a model id with a colon is signed over its path escaped twice (%3A as %253A), as AWS computes it (worked by hand from the SigV4 spec)', async () => {
    const bedrock = new SigV4Signer({ region: 'us-east-1', credentials: () => Promise.resolve(suite.credentials), now: () => Date.parse(suite.signingDate), log: silent });
    const body = Buffer.from('{"max_tokens":1}');
    const url = new URL('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-v2%3A1/invoke');
    const added = await bedrock.sign({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body });
    const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
    const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();
    const payload = sha(body);
    const canonical = ['POST', '/model/anthropic.claude-v2%253A1/invoke', '', 'content-type:application/json', 'host:bedrock-runtime.us-east-1.amazonaws.com', `x-amz-content-sha256:${payload}`, 'x-amz-date:20150830T123600Z', '', 'content-type;host;x-amz-content-sha256;x-amz-date', payload].join('\n');
    const toSign = ['AWS4-HMAC-SHA256', '20150830T123600Z', '20150830/us-east-1/bedrock/aws4_request', sha(canonical)].join('\n');
    const key = hmac(hmac(hmac(hmac(`AWS4${suite.credentials.secretAccessKey}`, '20150830'), 'us-east-1'), 'bedrock'), 'aws4_request');
    const signature = createHmac('sha256', key).update(toSign).digest('hex');
    expect(added['authorization']).to.equal(`AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature=${signature}`);
  });
});

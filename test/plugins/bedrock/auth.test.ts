import { expect } from 'chai';
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
});

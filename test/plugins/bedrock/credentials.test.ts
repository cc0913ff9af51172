import { expect } from 'chai';
import { mkdtempSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AWS_ENV, AWS_TEST_CREDENTIALS, sigV4Refusal, useAwsEnv } from '../../support/aws-fake.ts';
import { FIXTURES } from '../../support/fake-upstream.ts';
import { call, MESSAGES_HEADERS, useUpstreamAndGateway, oneKeyConfig } from '../../support/gateway.ts';

/**
 * Credentials that expire (issue #15; providers.md §1.4), through the real AWS credential chain:
 * a shared-config profile whose `credential_process` hands out temporary credentials and counts
 * how often it is asked. Credentials far from expiry are fetched once for many requests; ones
 * within five minutes of it are fetched again before they expire.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'junction-aws-'));
const script = path.join(dir, 'creds.mjs');
writeFileSync(
  script,
  `import { appendFileSync } from 'node:fs';
const [, , name, seconds] = process.argv;
appendFileSync(${JSON.stringify(dir)} + '/' + name + '.count', 'x');
console.log(JSON.stringify({ Version: 1, AccessKeyId: ${JSON.stringify(AWS_TEST_CREDENTIALS.accessKeyId)}, SecretAccessKey: ${JSON.stringify(AWS_TEST_CREDENTIALS.secretAccessKey)}, SessionToken: ${JSON.stringify(AWS_TEST_CREDENTIALS.sessionToken)}, Expiration: new Date(Date.now() + Number(seconds) * 1000).toISOString() }));
`,
);
const configFile = path.join(dir, 'config');
writeFileSync(configFile, `[profile long-lived]\ncredential_process = ${process.execPath} ${script} long 3600\n\n[profile short-lived]\ncredential_process = ${process.execPath} ${script} short 60\n`);
const runs = (name: string): number => {
  try {
    return readFileSync(path.join(dir, `${name}.count`), 'utf8').length;
  } catch {
    return 0;
  }
};

/** Resolves once the process has run `n` times (it appends to its count file). */
async function ran(name: string, n: number): Promise<void> {
  const watcher = watch(dir);
  try {
    while (runs(name) < n) await once(watcher, 'change');
  } finally {
    watcher.close();
  }
}

const config = (url: string): string => oneKeyConfig(`
providers:
  - { id: long, plugin: bedrock, base_url: "${url}", options: { region: us-east-1, profile: long-lived } }
  - { id: short, plugin: bedrock, base_url: "${url}", options: { region: us-east-1, profile: short-lived } }
models:
  - { id: claude-long, routes: [{ provider: long, model: anthropic.claude-sonnet-4-5-20250929-v1:0 }], pricing: { input: 3, output: 15 } }
  - { id: claude-short, routes: [{ provider: short, model: anthropic.claude-sonnet-4-5-20250929-v1:0 }], pricing: { input: 3, output: 15 } }
`);

describe('bedrock plugin: credentials that expire, from the AWS credential chain', () => {
  useAwsEnv({ ...AWS_ENV, AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined, AWS_CONFIG_FILE: configFile });
  const env = useUpstreamAndGateway(config);
  const ask = async (model: string): Promise<number> => {
    env.upstream.script(async (req) => (await sigV4Refusal(req, 'us-east-1')) ?? { headers: { 'content-type': 'application/json' }, body: JSON.parse(FIXTURES.anthropicText()) as Record<string, unknown> });
    const res = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS }, body: { model, max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] } });
    return res.status;
  };

  it('an hour left: fetched once, for every request after', async () => {
    for (let i = 0; i < 3; i++) expect(await ask('claude-long')).to.equal(200);
    expect(runs('long')).to.equal(1);
  });

  it('a minute left: fetched again on the next use, before they expire', async () => {
    expect(await ask('claude-short')).to.equal(200);
    expect(runs('short')).to.equal(1);
    // Within five minutes of expiry: the next use refreshes them (the SDK's memoized chain).
    expect(await ask('claude-short')).to.equal(200);
    await ran('short', 2);
    expect(runs('short')).to.equal(2);
  });
});

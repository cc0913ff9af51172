// Keeps README.md and docs/ honest (issue #16): the configs they show load, their links lead
// somewhere, and the README's quick start answers as it says against the demo config.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/load.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { codeBlocks, docFiles, headingAnchors, relativeLinks, ROOT } from './markdown.ts';
import { validateBlock } from './yaml-blocks.ts';
import { curlCommands, runCurl, type CurlResult, type QuickStartCommand } from './quick-start.ts';

const FILES = docFiles();

describe('docs: every YAML config shown is valid', () => {
  for (const file of FILES) {
    for (const block of codeBlocks(file.text).filter((b) => b.lang === 'yaml')) {
      const whole = block.marker === undefined;
      it(`${file.name}:${block.line} (${block.marker ?? 'whole config'})`, () => {
        try {
          validateBlock(block, file.absolute);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          // The problems as check-config prints them, each at its line of the document where it has one.
          const problems = err.problems.map((p) =>
            p.replace(/\(line (\d+)\)$/, (_, n: string) => (whole ? `(${file.name}:${block.line + Number(n)})` : `(line ${n} of the fragment merged into a minimal config)`)),
          );
          expect.fail(`${file.name}:${block.line}: ${problems.join('; ')}`);
        }
      });
    }
  }
});

describe('docs: every relative link resolves', () => {
  for (const file of FILES) {
    it(file.name, () => {
      const broken: string[] = [];
      for (const link of relativeLinks(file.text)) {
        const [target = '', anchor] = link.target.split('#');
        const resolved = target === '' ? file.absolute : path.resolve(path.dirname(file.absolute), decodeURI(target));
        if (!existsSync(resolved)) broken.push(`line ${link.line}: ${link.target} (no such file)`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`line ${link.line}: ${link.target} (no such heading)`);
        }
      }
      expect(broken, `${file.name}: broken links`).to.deep.equal([]);
    });
  }
});

/** The README's shell block of curl examples: the quick start. */
function quickStart(): QuickStartCommand[] {
  const readme = FILES.find((f) => f.name === 'README.md');
  const block = codeBlocks(readme?.text ?? '').find((b) => b.lang === 'sh' && /^curl /m.test(b.body));
  return block ? curlCommands(block) : [];
}

/** A 1×1 PNG: the README's image edit asks the reader to bring "any PNG" as fox.png. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** What a 2xx answer must look like, by what curl got and where it put it. */
function expectShape(command: QuickStartCommand, result: CurlResult, cwd: string): void {
  const output = /\s-o\s+(\S+)/.exec(command.command)?.[1];
  if (output !== undefined) {
    const written = path.join(cwd, output);
    expect(existsSync(written) && statSync(written).size > 0, `${output} written`).to.equal(true);
    if (result.contentType.startsWith('audio/wav')) expect(readFileSync(written).subarray(0, 4).toString()).to.equal('RIFF');
  }
  if (/\s-D\s+-\s/.test(` ${command.command} `)) {
    // Headers printed: the ones the README's comment names are among them.
    for (const header of command.title.match(/\bx-[a-z-]+/g) ?? []) expect(result.output.toLowerCase()).to.include(`${header}:`);
    return;
  }
  if (output !== undefined) return;
  if (result.contentType.startsWith('application/json')) {
    expect(() => JSON.parse(result.output) as unknown, 'a JSON body').not.to.throw();
  } else if (result.contentType.startsWith('text/event-stream')) {
    // A stream that ended as it should: its format's last event, and no error on the way.
    expect(result.output).to.match(/^(event: (message_stop|response\.completed)|data: \[DONE\])$/m);
    expect(result.output).not.to.match(/^event: error$|^data: \{"error"/m);
  } else {
    expect(result.output.trim(), 'a body').not.to.equal('');
  }
}

describe('docs: the README quick start answers as shown', function () {
  // Each command is a curl process against a gateway that starts once for them all.
  this.timeout(30_000);
  const commands = quickStart();
  let gateway: Gateway | undefined;
  let origin = '';
  let cwd = '';
  /** `req_…` in the README is "the x-request-id it was answered with": the first answer's. */
  let requestId = '';

  before(async function () {
    try {
      execFileSync('curl', ['--version'], { stdio: 'ignore' });
    } catch {
      this.skip(); // no curl on this machine: nothing to run the README's commands with
    }
    cwd = mkdtempSync(path.join(tmpdir(), 'junction-docs-'));
    writeFileSync(path.join(cwd, 'fox.png'), PNG);
    // The demo config as `npm start` serves it, on a ledger of the test's own and with no provider
    // keys (the real models stay unreachable: only the offline demo models are asked).
    const config = loadConfig(path.join(ROOT, 'config/gateway.yaml'), { JUNCTION_STORAGE_URL: `sqlite://${path.join(cwd, 'ledger.db')}` });
    gateway = await createGateway(config, { logDestination: { write: () => undefined } });
    const address = await gateway.listen('127.0.0.1', 0);
    origin = `http://127.0.0.1:${address.port}`;
  });

  after(async () => {
    await gateway?.close();
    if (cwd !== '') rmSync(cwd, { recursive: true, force: true });
  });

  it('has at least four curl examples', () => {
    expect(commands.length).to.be.at.least(4);
  });

  for (const command of commands) {
    const url = /http:\/\/127\.0\.0\.1:8080(\S*)/.exec(command.command)?.[1] ?? command.command;
    it(`${url}: ${command.title}`, async () => {
      const result = await runCurl(command, origin, cwd, { 'req_…': requestId });
      expect(result.status, `${command.command}\n${result.output.slice(0, 500)}\n${result.stderr}`).to.be.within(200, 299);
      if (requestId === '') requestId = result.requestId;
      expectShape(command, result, cwd);
    });
  }
});

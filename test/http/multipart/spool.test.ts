import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Spool } from '../../../src/http/multipart/spool.ts';
import { formBody } from '../../../src/http/middleware/form-body.ts';

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return Buffer.concat(out);
}

describe('Spool', () => {
  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));

  for (const [label, chunk] of [['in memory', 1000], ['past memory, in a file', 40_000]] as const) {
    it(`${label}: replays, splices and reads ranges exactly`, async () => {
      const spool = new Spool(`test-${chunk}`);
      const size = label === 'in memory' ? 50_000 : bytes.length;
      for (let at = 0; at < size; at += chunk) await spool.append(bytes.subarray(at, Math.min(at + chunk, size)));
      expect(spool.size).to.equal(size);
      expect((await collect(spool.replay(undefined))).equals(bytes.subarray(0, size))).to.equal(true);
      const splice = { start: 1234, end: 1240, bytes: Buffer.from('renamed-model') };
      const expected = Buffer.concat([bytes.subarray(0, 1234), splice.bytes, bytes.subarray(1240, size)]);
      expect((await collect(spool.replay(splice))).equals(expected)).to.equal(true);
      expect((await spool.read(999, 45_001)).equals(bytes.subarray(999, 45_001))).to.equal(true);
      await spool.dispose();
    });
  }

  it('leaves no file behind: the temporary file is unlinked as soon as it is open', async () => {
    const spool = new Spool('unlinked-check');
    await spool.append(Buffer.alloc(100_000));
    expect(readdirSync(tmpdir()).filter((f) => f.includes('unlinked-check'))).to.deep.equal([]);
    await spool.dispose();
  });
});

describe('formBody', () => {
  it('types form fields as the JSON endpoints have them: stream a boolean, n a number, name[] an array', () => {
    const fields = new Map([
      ['model', ['whisper-1']],
      ['stream', ['true']],
      ['n', ['2']],
      ['temperature', ['0.5']],
      ['include[]', ['logprobs', 'words']],
      ['size', ['1024x1024']],
      ['language', ['en']],
    ]);
    expect(formBody(fields)).to.deep.equal({ model: 'whisper-1', stream: true, n: 2, temperature: 0.5, include: ['logprobs', 'words'], size: '1024x1024', language: 'en' });
  });

  it('leaves what does not parse as sent, for validation to name', () => {
    expect(formBody(new Map([['stream', ['yes']], ['n', ['two']]]))).to.deep.equal({ stream: 'yes', n: 'two' });
  });
});

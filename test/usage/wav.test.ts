import { expect } from 'chai';
import { wavDurationMs } from '../../src/usage/wav.ts';
import { wav } from '../support/multipart.ts';

describe('wavDurationMs', () => {
  it('reads the length from the header: data size over byte rate', () => {
    const file = wav(2.5, 16_000);
    expect(wavDurationMs(file.subarray(0, 44), file.length)).to.equal(2500);
  });

  it('skips chunks before data (LIST), padded to an even length', () => {
    const file = wav(1, 8000);
    const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.alloc(1)]);
    const withList = Buffer.concat([file.subarray(0, 36), list, file.subarray(36)]);
    expect(wavDurationMs(withList.subarray(0, 200), withList.length)).to.equal(1000);
  });

  it('a streamed WAV (data size 0 or 0xFFFFFFFF) is as long as the rest of the file', () => {
    for (const size of [0, 0xffffffff]) {
      const file = wav(3, 8000);
      file.writeUInt32LE(size, 40);
      expect(wavDurationMs(file.subarray(0, 44), file.length)).to.equal(3000);
    }
  });

  it('a header claiming more data than the file holds is held to the file', () => {
    const file = wav(3, 8000);
    expect(wavDurationMs(file.subarray(0, 44), 44 + 16_000)).to.equal(1000);
  });

  it('a header whose byte rate disagrees with its sample rate and block size is not trusted', () => {
    const forged = wav(10, 8000);
    forged.writeUInt32LE(16_000 * 1000, 28); // a thousand times the real byte rate: 10 s would read as 10 ms
    expect(wavDurationMs(forged.subarray(0, 44), forged.length)).to.equal(undefined);
  });

  it('the first fmt chunk counts, as decoders read it', () => {
    const file = wav(2, 8000);
    const second = Buffer.from(file.subarray(12, 36));
    second.writeUInt32LE(8000 * 100, 12); // sample rate
    second.writeUInt32LE(8000 * 200, 16); // byte rate
    const twoFmts = Buffer.concat([file.subarray(0, 36), second, file.subarray(36)]);
    expect(wavDurationMs(twoFmts.subarray(0, 100), twoFmts.length)).to.equal(2000);
  });

  it('a compressed coding (ADPCM) is not timed by its header', () => {
    const file = wav(1, 8000);
    file.writeUInt16LE(2, 20);
    expect(wavDurationMs(file.subarray(0, 44), file.length)).to.equal(undefined);
  });

  it('anything else is not read: mp3, a cut header, no fmt chunk', () => {
    expect(wavDurationMs(Buffer.from('ID3\u0003 not a wav at all'), 1000)).to.equal(undefined);
    expect(wavDurationMs(wav(1).subarray(0, 30), 1000)).to.equal(undefined);
    const noFmt = Buffer.concat([Buffer.from('RIFF\u0000\u0000\u0000\u0000WAVEdata'), Buffer.from([4, 0, 0, 0])]);
    expect(wavDurationMs(noFmt, 100)).to.equal(undefined);
  });
});

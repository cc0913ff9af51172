import { expect } from 'chai';
import { FormFault } from '../../../src/http/multipart/form-fault.ts';
import { FormScanner, HEAD_BYTES, MAX_FIELD_BYTES } from '../../../src/http/multipart/form-scanner.ts';
import { parsePartHeaders } from '../../../src/http/multipart/part-headers.ts';
import { boundaryOf } from '../../../src/http/middleware/form-body.ts';
import { BOUNDARY, multipart, wav } from '../../support/multipart.ts';

/** A form as the openai SDK sends one: file first, then the fields (media.md §1.2). */
const AUDIO = wav(0.5);
const FORM = multipart([
  { name: 'file', filename: 'a.wav', type: 'audio/wav', bytes: AUDIO },
  { name: 'model', value: 'whisper-1' },
  { name: 'include[]', value: 'logprobs' },
  { name: 'include[]', value: 'words' },
  { name: 'prompt', value: 'Zürich, naïve café' },
]).body;

function scan(chunks: readonly Buffer[]): FormScanner {
  const scanner = new FormScanner(BOUNDARY);
  for (const chunk of chunks) scanner.push(chunk);
  scanner.finish();
  return scanner;
}

describe('FormScanner', () => {
  it('finds every part, its headers and offsets, the field values and a file\'s first bytes', () => {
    const scanner = scan([FORM]);
    expect(scanner.parts.map((p) => [p.name, p.filename, p.contentType])).to.deep.equal([
      ['file', 'a.wav', 'audio/wav'],
      ['model', undefined, undefined],
      ['include[]', undefined, undefined],
      ['include[]', undefined, undefined],
      ['prompt', undefined, undefined],
    ]);
    const file = scanner.parts[0];
    expect(FORM.subarray(file?.start, file?.end).equals(AUDIO)).to.equal(true);
    expect(file?.size).to.equal(AUDIO.length);
    expect(file?.head.equals(AUDIO.subarray(0, HEAD_BYTES))).to.equal(true);
    const model = scanner.parts[1];
    expect(FORM.toString('utf8', model?.start, model?.end)).to.equal('whisper-1');
    expect(Object.fromEntries(scanner.fields)).to.deep.equal({ model: ['whisper-1'], 'include[]': ['logprobs', 'words'], prompt: ['Zürich, naïve café'] });
    expect(scanner.ended).to.equal(true);
  });

  it('reads the same form cut at every byte, and in one-byte chunks (delimiters split every way)', () => {
    const whole = scan([FORM]);
    const summary = (s: FormScanner) => JSON.stringify([s.parts.map((p) => [p.name, p.start, p.end, p.size, p.head.length]), [...s.fields]]);
    for (let cut = 1; cut < FORM.length; cut += cut < 400 || cut > FORM.length - 400 ? 1 : 97) {
      expect(summary(scan([FORM.subarray(0, cut), FORM.subarray(cut)])), `cut at ${cut}`).to.equal(summary(whole));
    }
    const bytes = Array.from({ length: FORM.length }, (_, i) => FORM.subarray(i, i + 1));
    expect(summary(scan(bytes))).to.equal(summary(whole));
  });

  it('content that looks like a delimiter but is not one passes as content', () => {
    const tricky = Buffer.from(`\r\n--${BOUNDARY.slice(0, -1)}X\r\n--${BOUNDARY}`.slice(0, -1)); // near misses, no full delimiter
    const form = multipart([{ name: 'file', filename: 'x.bin', type: 'application/octet-stream', bytes: tricky }, { name: 'model', value: 'm' }]).body;
    const scanner = scan([form]);
    expect(scanner.parts[0]?.size).to.equal(tricky.length);
    expect(form.subarray(scanner.parts[0]?.start, scanner.parts[0]?.end).equals(tricky)).to.equal(true);
  });

  it('takes a blank preamble and epilogue, and refuses any other: a second form could hide there', () => {
    const blank = Buffer.concat([Buffer.from('\r\n'), FORM, Buffer.from('\r\n\r\n')]);
    expect([...scan([blank]).fields.keys()]).to.deep.equal(['model', 'include[]', 'prompt']);
    expect(() => scan([Buffer.concat([Buffer.from('preamble text\r\n'), FORM])])).to.throw(FormFault, /before the first boundary/);
    expect(() => scan([Buffer.concat([FORM, Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nother`)])])).to.throw(FormFault, /after the closing boundary/);
  });

  it('refuses a text field sent twice (parsers disagree on which counts), but not name[] arrays or files', () => {
    const twice = multipart([{ name: 'model', value: 'cheap' }, { name: 'file', filename: 'a.wav', type: 'audio/wav', bytes: AUDIO }, { name: 'model', value: 'dear' }]).body;
    expect(() => scan([twice])).to.throw(FormFault, /"model" is sent more than once/);
  });

  it('refuses more than 256 parts, and text fields over 2 MB together', () => {
    const many = multipart(Array.from({ length: 257 }, (_, i) => ({ name: `f${i}`, value: '' }))).body;
    expect(() => scan([many])).to.throw(FormFault, /more than 256 parts/);
    const big = multipart(Array.from({ length: 3 }, (_, i) => ({ name: `f${i}`, value: 'a'.repeat(800 * 1024) }))).body;
    expect(() => scan([big])).to.throw(FormFault, /together/);
  });

  it('refuses a form cut before its closing delimiter', () => {
    const scanner = new FormScanner(BOUNDARY);
    scanner.push(FORM.subarray(0, FORM.length - 8));
    expect(() => scanner.finish()).to.throw(FormFault, /closing boundary/);
  });

  it('refuses a delimiter not followed by CRLF, a part without a name, and endless headers', () => {
    expect(() => scan([Buffer.from(`--${BOUNDARY}XX`)])).to.throw(FormFault, /CRLF/);
    expect(() => scan([Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${BOUNDARY}--`)])).to.throw(FormFault, /no name/);
    expect(() => new FormScanner(BOUNDARY).push(Buffer.from(`--${BOUNDARY}\r\nX-Long: ${'a'.repeat(20_000)}`))).to.throw(FormFault, /headers exceed/);
  });

  it('refuses a text field over 1 MB (busboy\'s fieldSize)', () => {
    const form = multipart([{ name: 'prompt', value: 'a'.repeat(MAX_FIELD_BYTES + 1) }]).body;
    expect(() => scan([form])).to.throw(FormFault, /exceeds/);
  });
});

describe('boundaryOf', () => {
  it('reads one boundary, quoted or not, among other parameters', () => {
    expect(boundaryOf('multipart/form-data; boundary=----WebKitFormBoundaryX7')).to.equal('----WebKitFormBoundaryX7');
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b:c"')).to.equal('a b:c');
  });

  it('refuses two boundaries, one over 70 characters, an empty one, or one ending in a space', () => {
    expect(boundaryOf('multipart/form-data; boundary=gwside; boundary=upside')).to.equal(undefined);
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(71)}`)).to.equal(undefined);
    expect(boundaryOf(`multipart/form-data; boundary=${'x'.repeat(70)}`)).to.equal('x'.repeat(70));
    expect(boundaryOf('multipart/form-data; boundary=""')).to.equal(undefined);
    expect(boundaryOf('multipart/form-data; boundary="ab "')).to.equal(undefined);
    expect(boundaryOf('multipart/form-data')).to.equal(undefined);
  });
});

describe('parsePartHeaders', () => {
  it('reads quoted and bare parameters, escapes, case, and UTF-8 file names', () => {
    const utf8 = Buffer.from('Content-Disposition: form-data; name="file"; filename="café.wav"', 'utf8').toString('latin1');
    expect(parsePartHeaders(`${utf8}\r\nContent-Type: audio/wav`)).to.deep.equal({ name: 'file', filename: 'café.wav', contentType: 'audio/wav' });
    expect(parsePartHeaders('content-disposition: FORM-DATA ; name=model')).to.deep.equal({ name: 'model', filename: undefined, contentType: undefined });
    expect(parsePartHeaders('Content-Disposition: form-data; name="a\\"b"; filename=""').filename).to.equal('');
    expect(parsePartHeaders('Content-Disposition: form-data; name="a\\"b"').name).to.equal('a"b');
  });

  it('refuses a part that is not form-data', () => {
    expect(() => parsePartHeaders('Content-Disposition: attachment; name="x"')).to.throw(FormFault);
    expect(() => parsePartHeaders('Content-Type: text/plain')).to.throw(FormFault);
  });
});

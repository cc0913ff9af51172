import { expect } from 'chai';
import { newRequestId } from '../../src/util/request-id.ts';

describe('request ids', () => {
  it('are req_ and a UUIDv7 in 32 hex digits: version 7, RFC 9562 variant', () => {
    const id = newRequestId();
    expect(id).to.match(/^req_[0-9a-f]{32}$/);
    expect(id[4 + 12]).to.equal('7');
    expect('89ab').to.include(id[4 + 16] as string);
  });

  it('begin with the time in milliseconds, so they sort by arrival', () => {
    const at = Date.UTC(2026, 10, 25, 1, 2, 3, 4);
    expect(Number.parseInt(newRequestId(at).slice(4, 16), 16)).to.equal(at);
    const ids = [at, at + 1, at + 1_000, at + 86_400_000].map((t) => newRequestId(t));
    expect([...ids].sort()).to.deep.equal(ids);
    // Every millisecond across several of the 256 ms steps whose upper digits are kept, and back.
    for (const t of [...Array.from({ length: 1_200 }, (_, i) => at - 600 + i), 0, 255, 256, 1_000, at, 2 ** 48 - 1]) {
      expect(newRequestId(t).slice(4, 16), String(t)).to.equal(t.toString(16).padStart(12, '0'));
    }
  });

  it('keep 74 random bits: no two alike in the same millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newRequestId(1_000)));
    expect(ids.size).to.equal(10_000);
    // Across many refills of the random pool: the variant keeps its form, its two bits vary.
    for (const id of ids) expect(id).to.match(/^req_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(new Set([...ids].map((id) => id[4 + 16])).size).to.equal(4);
  });
});

import { expect } from 'chai';
import { IncomingMessage } from 'node:http';
import { upstreamRequestId, upstreamRequestIdIn } from '../../src/proxy/upstream-request-id.ts';

/** The headers Node itself parses from a raw list: repeats of these names joined by `, `. */
function parsed(raw: readonly string[]): (name: string) => string | string[] | undefined {
  const message = new IncomingMessage(null as never) as IncomingMessage & { _addHeaderLines(lines: readonly string[], count: number): void };
  message._addHeaderLines(raw, raw.length);
  return (name) => message.headers[name];
}

describe('the upstream request id (issue #16), read from the raw header list (issue #17)', () => {
  it('finds each provider\'s header, in any case, by rank: request-id, then x-request-id, then x-amzn-requestid', () => {
    expect(upstreamRequestIdIn(['Content-Type', 'application/json', 'Request-Id', 'req_01'])).to.equal('req_01');
    expect(upstreamRequestIdIn(['X-Request-ID', 'abc', 'request-id', 'req_02'])).to.equal('req_02');
    expect(upstreamRequestIdIn(['x-amzn-RequestId', 'aws-1', 'x-request-id', 'oa-1'])).to.equal('oa-1');
    expect(upstreamRequestIdIn(['x-amzn-requestid', 'aws-2', 'content-length', '12'])).to.equal('aws-2');
  });

  it('joins a repeated name as Node does, keeps it printable and short, and finds nothing where there is nothing', () => {
    expect(upstreamRequestIdIn(['request-id', 'first', 'Request-Id', 'second'])).to.equal('first,second');
    expect(upstreamRequestIdIn(['request-id', '', 'x-request-id', 'oa'])).to.equal('oa');
    expect(upstreamRequestIdIn(['request-id', 'a b\tc\u00e9'])).to.equal('abc');
    expect(upstreamRequestIdIn(['request-id', 'x'.repeat(300)])).to.equal('x'.repeat(128));
    expect(upstreamRequestIdIn(['request-id', '\u00e9\u00e9', 'x-request-id', 'oa'])).to.equal(undefined);
    expect(upstreamRequestIdIn(['request-ix', 'no', 'x-request-ix', 'no', 'x-amzn-requestix', 'no'])).to.equal(undefined);
    expect(upstreamRequestIdIn([])).to.equal(undefined);
  });

  it('answers as the lookup in the headers Node parses does, on random header lists', () => {
    const names = ['request-id', 'Request-Id', 'x-request-id', 'X-Request-Id', 'x-amzn-requestid', 'X-Amzn-RequestId', 'content-type', 'request-idx', 'x-request-ie', 'date'];
    const values = ['', 'id-1', 'id 2', 'id-3', '\u00e9'];
    let seed = 17;
    const pick = <T>(list: readonly T[]): T => list[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % list.length] as T;
    for (let n = 0; n < 3000; n++) {
      const raw: string[] = [];
      for (let count = pick([0, 1, 2, 3, 4, 5, 6]); count > 0; count--) raw.push(pick(names), pick(values));
      expect(upstreamRequestIdIn(raw), JSON.stringify(raw)).to.equal(upstreamRequestId(parsed(raw)));
    }
  });
});

import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.ts';
import { LogUsageSink, type RequestRecord } from '../../src/usage/sink.ts';

/** A logger at `level` whose lines are collected, synchronously. */
function collecting(level: string): { lines: Record<string, unknown>[]; log: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: createLogger(level, sink) };
}

const record: RequestRecord = { requestId: 'req_1', method: 'POST', path: '/v1/messages', status: 200, durationMs: 12.345, keyName: 'alice', charged: 1_500_000_000n };

describe('the request log sink', () => {
  it('writes one line per record at info, with the charge in dollars', () => {
    const { lines, log } = collecting('info');
    new LogUsageSink(log).record(record);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.deep.include({ msg: 'request', req_id: 'req_1', key_name: 'alice', ms: 12.35, cost_usd: '0.0015' });
  });

  it('builds nothing under a quieter level, and follows a level changed at run time (a reload)', () => {
    const { lines, log } = collecting('warn');
    const sink = new LogUsageSink(log);
    // A record whose fields throw when read shows that nothing of it is read.
    const untouchable = new Proxy(record, { get: () => expect.fail('the record was read') });
    sink.record(untouchable);
    expect(lines).to.have.length(0);
    log.level = 'info';
    sink.record(record);
    expect(lines).to.have.length(1);
  });
});

import { expect } from 'chai';
import { Settlements } from '../../src/billing/settlements.ts';
import { createLogger } from '../../src/log.ts';
import type { Holds } from '../../src/billing/holds.ts';
import type { LedgerEntry, SettleResult, Store } from '../../src/store/store.ts';
import { LogCapture } from '../support/gateway.ts';

const entry = (requestId: string): LedgerEntry => ({
  requestId, keyId: 1, endpoint: 'messages', model: 'm', provider: 'p', upstreamModel: 'm', route: 'native',
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: 0 }, cost: 5n, status: 200, outcome: 'ok',
  estimated: false, startedAtMs: Date.now(), firstByteMs: 1, durationMs: 2,
});

/** A store whose settle fails while `down` is set, recording what it wrote. */
function flakyStore(): { store: Store; written: string[]; down: { value: boolean } } {
  const written: string[] = [];
  const down = { value: true };
  const store = {
    async settle(e: LedgerEntry): Promise<SettleResult> {
      if (down.value) throw new Error('SQLITE_BUSY: database is locked');
      if (!written.includes(e.requestId)) written.push(e.requestId);
      return { charged: e.cost, uncollected: 0n };
    },
  } as unknown as Store;
  return { store, written, down };
}

describe('Settlements', () => {
  it('keeps a settlement the store refused and writes it on retry, once', async () => {
    const { store, written, down } = flakyStore();
    const logs = new LogCapture();
    const settlements = new Settlements(store, createLogger('info', logs));
    expect(await settlements.settle(entry('r1'))).to.equal(undefined);
    expect(settlements.pending).to.equal(1);
    await settlements.retryFailed(); // still down
    expect(settlements.pending).to.equal(1);
    down.value = false;
    await settlements.retryFailed();
    await settlements.retryFailed();
    expect(settlements.pending).to.equal(0);
    expect(written).to.deep.equal(['r1']);
    expect(logs.lines.map((l) => l['msg'])).to.include('ledger settlement failed; it will be retried');
  });

  it('keeps a settlement whose hold release failed, thrown or rejected, for retry', async () => {
    // Holds kept outside the store (Redis) are released after the store settles: a release that
    // fails, either way, must leave the entry for retry, not a rejected settlement.
    const { store, down } = flakyStore();
    down.value = false;
    for (const fails of [() => { throw new Error('thrown'); }, () => Promise.reject(new Error('rejected'))]) {
      const holds = { settled: fails } as unknown as Holds;
      const settlements = new Settlements(store, createLogger('info', new LogCapture()), holds);
      expect(await settlements.settle(entry('r1'))).to.equal(undefined);
      expect(settlements.pending).to.equal(1);
    }
  });

  it('reports idle only when every tracked request has finished, or gives up after the timeout', async () => {
    const settlements = new Settlements(flakyStore().store, createLogger('silent', new LogCapture()));
    let release: () => void = () => undefined;
    const running = settlements.track(() => new Promise<void>((resolve) => (release = resolve)));
    expect(await settlements.idle(30)).to.equal(false);
    const idle = settlements.idle(5_000);
    release();
    await running;
    expect(await idle).to.equal(true);
    expect(await settlements.idle(0)).to.equal(true);
  });

  it('lets a reader wait for a request still settling, by id (bounded) and by key', async () => {
    let commit: () => void = () => undefined;
    const store = {
      settle: (e: LedgerEntry) => new Promise<SettleResult>((resolve) => (commit = () => resolve({ charged: e.cost, uncollected: 0n }))),
    } as unknown as Store;
    const settlements = new Settlements(store, createLogger('silent', new LogCapture()));
    const order: string[] = [];
    const request = settlements.track(async () => {
      await settlements.settle(entry('r1'));
      order.push('settled');
    }, 'r1');
    const byId = settlements.written({ requestId: 'r1' }).then(() => order.push('by id'));
    const byKey = settlements.written({ keyId: 1 }).then(() => order.push('by key'));
    const otherKey = settlements.written({ keyId: 2 }).then(() => order.push('other key'));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).to.deep.equal(['other key']);
    commit();
    await Promise.all([request, byId, byKey, otherKey]);
    expect(order.slice(0, 2)).to.deep.equal(['other key', 'settled']);
    expect(order).to.have.members(['other key', 'settled', 'by id', 'by key']);
    // A request that does not end in time: the reader stops waiting.
    void settlements.track(() => new Promise(() => undefined), 'stuck');
    const started = performance.now();
    await settlements.written({ requestId: 'stuck' }, 50);
    expect(performance.now() - started).to.be.within(40, 1_000);
  });

  it('waits by key for exactly that key\'s writes, tracked or not, in any order they end (issue #17: one list, no maps)', async () => {
    const commits = new Map<string, () => void>();
    const store = {
      settle: (e: LedgerEntry) => new Promise<SettleResult>((resolve) => commits.set(e.requestId, () => resolve({ charged: e.cost, uncollected: 0n }))),
    } as unknown as Store;
    const settlements = new Settlements(store, createLogger('silent', new LogCapture()));
    const onKey = (id: string, keyId: number): LedgerEntry => ({ ...entry(id), keyId });
    const requests = ['a', 'b', 'c'].map((id, i) => settlements.track((tracking) => settlements.settle(onKey(id, i === 1 ? 2 : 1), tracking), id));
    const untracked = settlements.settle(onKey('d', 1)); // a caller without a tracked request
    // A request whose life ends before its charge is written: let go when the write ends.
    let early: Promise<unknown> = Promise.resolve();
    await settlements.track(async (tracking) => void (early = settlements.settle(onKey('e', 3), tracking)), 'e');
    const seen: string[] = [];
    const byKey = (keyId: number, label: string): Promise<void> => settlements.written({ keyId }).then(() => void seen.push(label));
    expect(settlements.listed).to.equal(5);
    commits.get('e')?.();
    await early;
    expect(settlements.listed).to.equal(4);
    const key1 = byKey(1, 'key 1');
    const key2 = byKey(2, 'key 2');
    // Ended out of their order of arrival, from the middle of the list first.
    for (const id of ['b', 'd', 'c']) commits.get(id)?.();
    await key2;
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).to.deep.equal(['key 2']); // key 1 still has 'a' being written
    commits.get('a')?.();
    await Promise.all([key1, ...requests, untracked]);
    expect(seen).to.deep.equal(['key 2', 'key 1']);
    expect(settlements.inFlight).to.equal(0);
    expect(settlements.listed).to.equal(0);
    // Nothing is left to wait for: a request that ended is not waited on by id, nor a key's old writes.
    const started = performance.now();
    await Promise.all([settlements.written({ requestId: 'a' }, 5_000), settlements.written({ keyId: 1 }, 5_000)]);
    expect(performance.now() - started).to.be.below(1_000);
  });
});

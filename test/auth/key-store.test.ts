import { expect } from 'chai';
import { hash } from 'node:crypto';
import { KeyStore } from '../../src/auth/key-store.ts';
import type { KeyRecord, Store } from '../../src/store/store.ts';

const ALICE = 'sk-jct-alice-0123456789abcdefghij';
const BOB = 'sk-jct-bob-00123456789abcdefghijk';
const hex = (text: string): string => hash('sha256', text, 'hex');

function record(id: number, name: string, secret: string, disabled = false): KeyRecord {
  return { id, name, sha256: hex(secret), prefix: secret.slice(0, 11), source: 'store', balance: null, held: 0n, spent: 0n, requests: 0, models: null, limits: { rpm: null, tpm: null, concurrency: null }, disabled } as KeyRecord;
}

/** The key store's view of a store: its keys and their version, changed by the test. */
class FakeKeys {
  records = [record(1, 'alice', ALICE), record(2, 'bob', BOB)];
  version = 1;
  asStore(): Store {
    return {
      keysVersion: async () => String(this.version),
      listKeys: async () => this.records,
      findKey: async (sha256: string) => this.records.find((r) => r.sha256 === sha256),
    } as unknown as Store;
  }
}

/** Counts the digests taken: the connection's memory is there to save them (issue #17). */
async function started(): Promise<{ keys: KeyStore; fake: FakeKeys; digests: () => number }> {
  const fake = new FakeKeys();
  let count = 0;
  const keys = new KeyStore(fake.asStore(), (text) => {
    count++;
    return hex(text);
  });
  await keys.refresh();
  return { keys, fake, digests: () => count };
}

describe('KeyStore: a connection remembers the key it presented last', () => {
  it('hashes a keep-alive connection\'s key once, and every request without a connection', async () => {
    const { keys, digests } = await started();
    const connection = {};
    expect(keys.known(ALICE, connection)?.name).to.equal('alice');
    expect(keys.known(ALICE, connection)?.name).to.equal('alice');
    // A string of its own, as each request's parsed header is.
    expect(keys.known(Buffer.from(ALICE).toString(), connection)?.name).to.equal('alice');
    expect(digests()).to.equal(1);
    expect(keys.known(ALICE)?.name).to.equal('alice');
    expect(keys.known(ALICE)?.name).to.equal('alice');
    expect(digests()).to.equal(3);
  });

  it('answers each key on a connection that carries several (a proxy in front), never the last one\'s', async () => {
    const { keys, digests } = await started();
    const connection = {};
    expect(keys.known(ALICE, connection)?.name).to.equal('alice');
    expect(keys.known(BOB, connection)?.name).to.equal('bob');
    expect(keys.known(ALICE, connection)?.name).to.equal('alice');
    expect(digests()).to.equal(3);
    // The same length as the remembered key, one character off: not alice, and not remembered.
    const forged = `${ALICE.slice(0, -1)}X`;
    expect(forged).to.have.length(ALICE.length);
    expect(keys.known(forged, connection)).to.equal(undefined);
    expect(keys.known(ALICE, connection)?.name).to.equal('alice');
    expect(keys.known('', connection)).to.equal(undefined);
    // Longer and shorter than the remembered key, sharing its characters: neither is it.
    expect(keys.known(`${ALICE}X`, connection)).to.equal(undefined);
    expect(keys.known(ALICE, connection)?.name).to.equal('alice');
    expect(keys.known(ALICE.slice(0, -1), connection)).to.equal(undefined);
  });

  it('keeps connections apart', async () => {
    const { keys, digests } = await started();
    const one = {};
    const two = {};
    expect(keys.known(ALICE, one)?.name).to.equal('alice');
    expect(keys.known(BOB, two)?.name).to.equal('bob');
    expect(keys.known(ALICE, one)?.name).to.equal('alice');
    expect(keys.known(BOB, two)?.name).to.equal('bob');
    expect(digests()).to.equal(2);
  });

  it('forgets on a reload: a key disabled or deleted in the store is seen on the connection that remembered it', async () => {
    const { keys, fake, digests } = await started();
    const connection = {};
    expect(keys.known(ALICE, connection)?.disabled).to.equal(false);
    fake.records = [record(1, 'alice', ALICE, true), record(2, 'bob', BOB)];
    fake.version++;
    await keys.refresh();
    expect(keys.known(ALICE, connection)?.disabled).to.equal(true);
    expect(digests()).to.equal(2);
    fake.records = [record(2, 'bob', BOB)];
    fake.version++;
    await keys.refresh();
    expect(keys.known(ALICE, connection)).to.equal(undefined);
    // An unknown key is not remembered: the next request asks again (then the store, by authenticate).
    expect(keys.known(ALICE, connection)).to.equal(undefined);
    expect(digests()).to.equal(4);
    // Nor is a secret that no longer opens anything kept on the connection.
    expect(Object.getOwnPropertySymbols(connection).map((symbol) => (connection as Record<symbol, unknown>)[symbol])).to.deep.equal([undefined]);
  });
});

import { expect } from 'chai';
import { Worker } from 'node:worker_threads';
import { deadline, RedisTimeoutError } from '../../src/store/redis-connection.ts';

/**
 * Issue #12: under load, Redis commands timed out whose answers had already arrived (the timer
 * fired first when the event loop came round), and holds were refused with 500. The deadline
 * reads what arrived before it gives up.
 */
describe('Redis command deadline', () => {
  it('resolves with an answer that arrived while the event loop was busy past the deadline', async () => {
    // Another thread answers, as Redis would, and raises a shared flag once it has: this thread
    // stays busy until the answer is queued here and the deadline is long past.
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       parentPort.once('message', () => { parentPort.postMessage('PONG'); Atomics.store(workerData, 0, 1); });`,
      { eval: true, workerData: flag },
    );
    try {
      await new Promise((resolve) => worker.once('online', resolve));
      // Busy in a setImmediate callback: the loop's next stop is then its timers, before it
      // reads anything, which is where a plain timeout fails an answer that is already here.
      const answer = await new Promise<Promise<unknown>>((resolve) =>
        setImmediate(() => {
          const pending = deadline(new Promise((answered) => worker.once('message', answered)), 50);
          worker.postMessage('PING');
          const started = performance.now();
          while (Atomics.load(flag, 0) === 0 || performance.now() - started < 100);
          resolve(pending);
        }),
      );
      expect(await answer).to.equal('PONG');
    } finally {
      await worker.terminate();
    }
  });

  it('fails with RedisTimeoutError when no answer comes', async () => {
    const started = performance.now();
    const failure = await deadline(new Promise(() => undefined), 30).catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(RedisTimeoutError);
    expect(performance.now() - started).to.be.at.least(29);
  });

  it('passes a command’s own failure on', async () => {
    const failure = await deadline(Promise.reject(new Error('ECONNREFUSED')), 30).catch((err: unknown) => err);
    expect(String(failure)).to.include('ECONNREFUSED');
  });
});

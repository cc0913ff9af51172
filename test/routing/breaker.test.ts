import { expect } from 'chai';
import { Breakers, CircuitBreaker } from '../../src/routing/breaker.ts';
import { TestClock } from '../support/clock.ts';

describe('circuit breaker', () => {
  it('opens after N consecutive failures, skips the route for the cooldown, then lets one probe through', () => {
    const breaker = new CircuitBreaker(3, 1000);
    breaker.failure(0);
    breaker.failure(0);
    expect(breaker.tryPass(0)).to.equal(true);
    breaker.failure(10);
    expect(breaker.tryPass(500)).to.equal(false);
    expect(breaker.msUntilRetry(500)).to.equal(510);
    // Half-open: one probe, and nobody else while it is out.
    expect(breaker.tryPass(1010)).to.equal(true);
    expect(breaker.tryPass(1011)).to.equal(false);
    breaker.success();
    expect(breaker.tryPass(1012)).to.equal(true);
    expect(breaker.state).to.equal('closed');
  });

  it('a success in between resets the count', () => {
    const breaker = new CircuitBreaker(2, 1000);
    breaker.failure(0);
    breaker.success();
    breaker.failure(0);
    expect(breaker.tryPass(1)).to.equal(true);
  });

  it('a failed probe opens it again for a full cooldown', () => {
    const breaker = new CircuitBreaker(1, 1000);
    breaker.failure(0);
    expect(breaker.tryPass(1000)).to.equal(true);
    breaker.failure(1000);
    expect(breaker.tryPass(1999)).to.equal(false);
    expect(breaker.tryPass(2000)).to.equal(true);
  });

  it('a probe that ends without a verdict frees the slot for the next request', () => {
    const breaker = new CircuitBreaker(1, 100);
    breaker.failure(0);
    expect(breaker.tryPass(100)).to.equal(true);
    breaker.release();
    expect(breaker.tryPass(101)).to.equal(true);
  });
});

describe('the breakers of one gateway (issue #5), found by provider, then upstream model (issue #17)', () => {
  it('gives each route its own breaker, the same one each time, and reports them by provider and route', () => {
    const breakers = new Breakers(1, 1000, new TestClock());
    const a1 = breakers.for('a', 'm1');
    const b1 = breakers.for('b', 'm1');
    const a2 = breakers.for('a', 'm2');
    expect(breakers.for('a', 'm1')).to.equal(a1);
    expect(new Set([a1, b1, a2]).size).to.equal(3);
    // Names that a joined key could confuse stay apart.
    expect(breakers.for('a\u0000m1', '')).to.not.equal(breakers.for('a', 'm1\u0000'));
    a2.failure();
    expect([...breakers.openByProvider()]).to.deep.equal([['a', 1], ['b', 0], ['a\u0000m1', 0]]);
    expect(breakers.routes().map((r) => [r.provider, r.upstreamModel, r.state])).to.deep.equal([
      ['a', 'm1', 'closed'], ['a', 'm2', 'open'], ['a', 'm1\u0000', 'closed'], ['b', 'm1', 'closed'], ['a\u0000m1', '', 'closed'],
    ]);
  });
});

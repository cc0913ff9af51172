import { expect } from 'chai';
import { CircuitBreaker } from '../../src/routing/breaker.ts';

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

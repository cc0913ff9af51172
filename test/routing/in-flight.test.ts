import { expect } from 'chai';
import { Cancellation } from '../../src/routing/cancellation.ts';
import { InFlight } from '../../src/routing/in-flight.ts';

describe('InFlight', () => {
  it('tracks requests until removed, in any order, and a second removal does nothing', () => {
    const inFlight = new InFlight();
    const [a, b, c] = [new Cancellation(), new Cancellation(), new Cancellation()];
    const ta = inFlight.add(a);
    const tb = inFlight.add(b);
    const tc = inFlight.add(c);
    expect(inFlight.size).to.equal(3);
    inFlight.remove(tb);
    inFlight.remove(tb);
    expect(inFlight.size).to.equal(2);
    inFlight.remove(tc); // the newest, at the list's head
    inFlight.remove(tc);
    expect(inFlight.size).to.equal(1);
    const reason = new Error('stopping');
    inFlight.abortAll(reason);
    expect([a.aborted, b.aborted, c.aborted]).to.deep.equal([true, false, false]);
    inFlight.remove(ta);
    expect(inFlight.size).to.equal(0);
  });

  it('aborts every request in flight, those whose abort removes them included, and any added later at once', () => {
    const inFlight = new InFlight();
    const controllers = Array.from({ length: 5 }, () => new Cancellation());
    for (const controller of controllers) {
      const tracked = inFlight.add(controller);
      // As failover.ts does when a request ends on its abort.
      controller.onAbort(() => inFlight.remove(tracked));
    }
    const reason = new Error('stopping');
    inFlight.abortAll(reason);
    expect(controllers.map((c) => c.reason)).to.deep.equal(controllers.map(() => reason));
    expect(inFlight.size).to.equal(0);
    const late = new Cancellation();
    inFlight.add(late);
    expect(late.reason).to.equal(reason);
  });
});

import { expect } from 'chai';
import { createTimerLists } from '../../src/util/timer-lists.ts';
import { ManualTimers } from '../support/clock.ts';
import type { Timers } from '../../src/util/clock.ts';

/** Timer lists over a clock moved by hand (issue #12), what fired when, and the system timers pending. */
function lists() {
  const clock = new ManualTimers();
  const pending = new Set<unknown>();
  const counts = { set: 0 };
  const base: Timers = {
    now: () => clock.now(),
    set: (fire, ms) => {
      counts.set++;
      const handle: unknown = clock.set(() => {
        pending.delete(handle);
        fire();
      }, ms);
      pending.add(handle);
      return handle;
    },
    clear: (handle) => {
      pending.delete(handle);
      clock.clear(handle);
    },
    afterIo: (fire) => clock.afterIo(fire),
  };
  const timers = createTimerLists(base);
  const fired: [string, number][] = [];
  const at = (name: string) => () => void fired.push([name, clock.now()]);
  return { clock, timers, fired, at, pending, counts };
}

describe('timer lists (issue #17)', () => {
  it('fires each entry at its own time, in order, across durations and entries set at different times', () => {
    const { clock, timers, fired, at } = lists();
    timers.set(at('a300'), 300);
    timers.set(at('b10'), 10);
    clock.advance(5);
    timers.set(at('c300'), 300);
    timers.set(at('d10'), 10);
    clock.advance(400);
    expect(fired).to.deep.equal([['b10', 10], ['d10', 15], ['a300', 300], ['c300', 305]]);
  });

  it('never fires a cleared entry; a cleared first entry leaves the timer armed, which looks again and waits for the next', () => {
    const { clock, timers, fired, at } = lists();
    const first = timers.set(at('first'), 100);
    clock.advance(40);
    timers.set(at('second'), 100);
    const third = timers.set(at('third'), 100);
    timers.clear(first);
    timers.clear(third);
    timers.clear(third); // twice is harmless
    clock.advance(99); // the armed timer came at 100 and found nothing due
    expect(fired).to.deep.equal([]);
    clock.advance(1);
    expect(fired).to.deep.equal([['second', 140]]);
  });

  it('fires an entry set from a firing one, and clears one due in the same sweep before it runs', () => {
    const { clock, timers, fired, at } = lists();
    let later: unknown;
    timers.set(() => {
      fired.push(['a', clock.now()]);
      timers.set(at('from a'), 50);
      timers.clear(later);
    }, 20);
    later = timers.set(at('cleared by a'), 20);
    clock.advance(100);
    expect(fired).to.deep.equal([['a', 20], ['from a', 70]]);
  });

  it('drops a list with nothing left once its timer fires, and starts a new one after', () => {
    const { clock, timers, fired, at } = lists();
    timers.clear(timers.set(at('gone'), 30));
    expect(timers.size).to.equal(1);
    clock.advance(30);
    expect(timers.size).to.equal(0);
    timers.set(at('new'), 30);
    clock.advance(30);
    expect(fired).to.deep.equal([['new', 60]]);
    expect(timers.size).to.equal(0);
  });

  it('keeps firing the others after an entry throws, as separate system timers would', () => {
    const { clock, timers, fired, at } = lists();
    timers.set(() => {
      throw new Error('boom');
    }, 10);
    timers.set(at('after'), 10);
    expect(() => clock.advance(10)).to.throw('boom');
    clock.advance(1);
    expect(fired.map(([name]) => name)).to.deep.equal(['after']);
  });

  it('fires a fractional delay at its fraction, and a delay that is no positive number (0, NaN) after none', () => {
    const { clock, timers, fired, at } = lists();
    timers.set(at('frac'), 10.6);
    timers.set(at('zero'), 0);
    timers.set(at('nan'), Number.NaN);
    clock.advance(20);
    expect(fired.map(([name]) => name)).to.deep.equal(['zero', 'nan', 'frac']);
    expect(fired.map(([, time]) => time)).to.deep.equal([1, 1, 10.6]);
  });

  it('keeps one system timer per list, however many entries it holds or clears, and when later ones are due a fraction sooner', () => {
    const { clock, timers, fired, at, pending, counts } = lists();
    const entries = [];
    for (let i = 0; i < 100; i++) {
      entries.push(timers.set(at(`e${i}`), 300.9 - (i % 3) * 0.4));
      clock.advance(0.1);
      // The first entry cleared, as an answered request's deadline is: the next set finds a new
      // first entry due a fraction of a millisecond before the armed timer.
      if (i % 3 === 1) timers.clear(entries[i - 1]);
      expect(pending.size, `after entry ${i}`).to.equal(1);
    }
    expect(counts.set).to.equal(1);
    for (const entry of entries.slice(0, 99)) timers.clear(entry);
    expect(pending.size).to.equal(1);
    clock.advance(400);
    expect(fired.map(([name]) => name)).to.deep.equal(['e99']);
    expect(pending.size).to.equal(0);
  });

  it('waits for the next timer with an entry set into its own list while it fires, even at 0 ms', () => {
    const { clock, timers, fired, at } = lists();
    let rounds = 0;
    const again = (): void => {
      fired.push([`again ${rounds}`, clock.now()]);
      if (++rounds < 3) timers.set(again, 0);
    };
    timers.set(again, 0);
    timers.set(() => {
      fired.push(['a', clock.now()]);
      timers.set(at('from a, same list'), 20);
    }, 20);
    clock.advance(100);
    expect(fired).to.deep.equal([['again 0', 1], ['again 1', 2], ['again 2', 3], ['a', 20], ['from a, same list', 40]]);
    expect(timers.size).to.equal(0);
  });
});

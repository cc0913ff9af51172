import { SYSTEM_TIMERS, type Timers } from './clock.ts';

/**
 * One-shot timers kept in lists by duration, each list watched by one system timer armed for its
 * oldest entry: the upstream timers' (proxy/upstream-timers.ts) and a stream's first keepalive
 * (routing/stream-prelude.ts). Every attempt arms a deadline minutes away and clears it a few
 * milliseconds later, and every stream request a keepalive seconds away. A setTimeout and a
 * clearTimeout for each cost a Messages stream 3.4 µs of the gateway's CPU in a contended A/B
 * (issue #17, twentieth session); here each is a list append and unlink, and the system timer is
 * armed again only when it fires. Node keeps its own timers the same way, a list per duration
 * (lib/internal/timers.js), but with an object, an async id and a libuv clock read for each.
 *
 * A list holds entries in the order they were set, and with one duration that is the order they
 * fall due, to within the millisecond its durations share: the sweep's slack. Its one system timer
 * is armed for its first entry's time; an entry cleared first leaves it armed, and when it fires
 * early it looks again and arms for the entry now first. It fires only entries set before it
 * fired, as separate timers would. A list with nothing left is dropped when its timer fires. The
 * system timers are unref'd: a deadline never keeps the process alive on its own, as the socket it
 * watches does.
 */
interface Entry {
  readonly due: number;
  /** Its place in the list's order of setting. */
  readonly seq: number;
  fire: (() => void) | null;
  prev: Entry | null;
  next: Entry | null;
  readonly list: List;
}

interface List {
  readonly ms: number;
  head: Entry | null;
  tail: Entry | null;
  /** When the system timer is due; Infinity when none is armed. */
  armedFor: number;
  /** The armed system timer: one per list at most. */
  timer: unknown;
  /** The next entry's `seq`. */
  seq: number;
}

/** The system's timers, unref'd: what the lists run on outside tests. */
const UNREF_SYSTEM_TIMERS: Timers = { ...SYSTEM_TIMERS, set: (fire, ms) => setTimeout(fire, ms).unref() };

export interface TimerLists extends Timers {
  /** Lists held, empty ones included until their timer fires (tests). */
  readonly size: number;
}

export function createTimerLists(base: Timers = UNREF_SYSTEM_TIMERS): TimerLists {
  const lists = new Map<number, List>();

  const arm = (list: List, now: number): void => {
    const first = list.head;
    // The armed timer comes first and looks again, or within the sweep's slack of this entry. A
    // list's delays share their whole milliseconds only, so a later entry may be due up to 1 ms
    // sooner than an earlier one: arming for it would start a second timer for nothing.
    if (first === null || first.due >= list.armedFor - 1) return;
    if (list.armedFor !== Infinity) base.clear(list.timer);
    list.armedFor = first.due;
    list.timer = base.set(() => sweep(list), Math.max(0, first.due - now));
  };

  const sweep = (list: List): void => {
    list.armedFor = Infinity;
    const now = base.now();
    // Only the entries there when it fired: one set meanwhile waits for the next timer, as with
    // setTimeout, so a callback that sets itself again at 0 ms cannot keep the sweep going.
    const setBefore = list.seq;
    try {
      // 1 ms of slack, as the upstream timers allow: the system timer runs on a millisecond clock.
      for (let entry = list.head; entry !== null && entry.seq < setBefore && entry.due <= now + 1; entry = list.head) {
        const fire = entry.fire;
        unlink(entry);
        fire?.();
      }
    } finally {
      // This list, not one made since under its duration while it was being swept.
      if (list.head === null) {
        if (lists.get(list.ms) === list) lists.delete(list.ms);
      } else arm(list, base.now());
    }
  };

  return {
    now: () => base.now(),
    set(fire, ms) {
      // Listed by whole milliseconds, as Node lists its own; due at the very time asked for.
      const duration = ms >= 1 ? Math.trunc(ms) : 0;
      let list = lists.get(duration);
      if (list === undefined) lists.set(duration, (list = { ms: duration, head: null, tail: null, armedFor: Infinity, timer: undefined, seq: 0 }));
      const now = base.now();
      // A delay that is not a positive number is none, as setTimeout takes it (NaN included).
      const entry: Entry = { due: now + (ms > 0 ? ms : 0), seq: list.seq++, fire, prev: list.tail, next: null, list };
      if (list.tail === null) list.head = entry;
      else list.tail.next = entry;
      list.tail = entry;
      arm(list, now);
      return entry;
    },
    clear(handle) {
      const entry = handle as Entry | undefined;
      if (entry?.fire) unlink(entry);
    },
    afterIo: (fire) => base.afterIo(fire),
    get size() {
      return lists.size;
    },
  };
}

function unlink(entry: Entry): void {
  const { list } = entry;
  entry.fire = null;
  if (entry.prev === null) list.head = entry.next;
  else entry.prev.next = entry.next;
  if (entry.next === null) list.tail = entry.prev;
  else entry.next.prev = entry.prev;
  entry.prev = entry.next = null;
}

/** The process's lists, for the upstream timers and the stream prelude's keepalives. */
export const LISTED_TIMERS: Timers = createTimerLists();

import type { Json } from './convert/json.ts';

/**
 * A translated stream's upstream events, read without JSON.parse when they repeat an earlier one's
 * text with only some strings changed (issue #17: parsing the upstream's events was the largest
 * cost of a translated stream, 0.7–2.3 µs a Chat chunk by machine, and a stream's chunks differ only in
 * their text). An event that was parsed is learnt as a template when its text is exactly what
 * JSON.stringify writes for it (compact, keys in order, no needless escapes): its text cut at the
 * strings its format names as holes (a delta's text, a tool call's arguments). A later event whose
 * text is those same pieces with a JSON string's characters in each hole has exactly the tokens of
 * the template, so JSON.parse would give the template with those strings in the holes, and that is
 * what is built: a hole's text as it is, or through JSON.parse of that one string where it holds
 * an escape. Anything else (another shape, whitespace, a raw control character, a bad escape, a
 * duplicate key) is parsed whole as before, and fails as before.
 */

/** Where a string may vary from one event to the next: keys and array indices from the event's top. */
export type HolePath = readonly (string | number)[];

/** A format's hole paths as a tree of keys (an array index as its string), made once. */
export interface Holes {
  /** Each key's subtree, or `true` where the key is a hole. A Map: an event's key such as `__proto__` finds nothing. */
  readonly byKey: ReadonlyMap<string, Holes | true>;
}

export function holesAt(paths: readonly HolePath[]): Holes {
  const root = { byKey: new Map<string, Holes | true>() };
  for (const path of paths) {
    let node = root;
    path.forEach((key, i) => {
      if (i === path.length - 1) {
        node.byKey.set(String(key), true);
        return;
      }
      const next = node.byKey.get(String(key));
      const sub = next === undefined || next === true ? { byKey: new Map<string, Holes | true>() } : (next as typeof root);
      node.byKey.set(String(key), sub);
      node = sub;
    });
  }
  return root;
}

type Container = Json | unknown[];

/** How an event is rebuilt: its container copied, and each child container or hole replaced. */
interface Plan {
  readonly node: Container;
  /** Whether the node is an array, found once when the template is learnt rather than at every build. */
  readonly array: boolean;
  /** The keys of its children that are containers or holes (an array's as numbers), and for each, its plan or hole number. */
  readonly keys: readonly (string | number)[];
  readonly kids: readonly (Plan | number)[];
}

/** A sentinel no upstream text holds: NUL, which JSON.stringify escapes, and the hole's number. */
const sentinel = (slot: number): string => `\u0000${slot}`;

/** Where a hole's string goes in an event: its container and key. */
interface Slot {
  readonly container: Record<string | number, unknown>;
  readonly key: string | number;
}

/** A template that refills one event: the event, and where its holes are. */
interface Refilled {
  readonly event: Json;
  readonly slots: readonly Slot[];
}

export class EventTemplate {
  /** The template's text between its holes; each hole's piece ends and the next starts with a quote. */
  readonly #pieces: readonly string[];
  readonly #plan: Plan;
  /** The holes' strings of the event being built, reused: build reads them at once. */
  readonly #values: string[];
  /** With `reuse`, the one event this template refills; without, each match builds a new one. */
  readonly #refilled: Refilled | undefined;

  private constructor(pieces: readonly string[], plan: Plan, refilled: Refilled | undefined) {
    this.#pieces = pieces;
    this.#plan = plan;
    this.#values = new Array<string>(pieces.length - 1).fill('');
    this.#refilled = refilled;
  }

  /**
   * A template from a parsed event and its text, if the text is its value's own serialization with
   * at least one hole. `reuse`: each match refills that value and returns it, rather than building
   * a new event, for a consumer that is done with each event before the next is parsed
   * (canonical/stream.ts translateBatches). Building one copied every container, a megamorphic
   * spread and keyed stores: about a tenth of a translated stream's instructions (issue #17). The
   * value refilled is the one JSON.parse made, so a refilled event has the maps parsed ones have,
   * and a decoder's property reads see no more shapes than parsing alone gives them. Copies made by
   * spreading got maps of their own, another per stream at times, which turned those reads
   * megamorphic (issue #17, --log-ic).
   */
  static learn(text: string, value: Json, holes: Holes, reuse = false): EventTemplate | undefined {
    const found: string[] = [];
    const plan = planOf(value, holes, found);
    if (found.length === 0) return undefined;
    const marked = JSON.stringify(plan.node);
    const pieces: string[] = [];
    let from = 0;
    for (let slot = 0; slot < found.length; slot++) {
      const marker = JSON.stringify(sentinel(slot));
      const at = marked.indexOf(marker);
      if (at < from || marked.indexOf(marker, at + 1) !== -1) return undefined;
      pieces.push(marked.slice(from, at + 1));
      from = at + marker.length - 1;
    }
    pieces.push(marked.slice(from));
    let rebuilt = pieces[0] ?? '';
    for (let slot = 0; slot < found.length; slot++) rebuilt += JSON.stringify(found[slot]).slice(1, -1) + (pieces[slot + 1] ?? '');
    if (rebuilt !== text) return undefined;
    if (!reuse) return new EventTemplate(pieces, plan, undefined);
    const slots: Slot[] = [];
    slotsOf(plan, value, slots);
    return new EventTemplate(pieces, plan, { event: value, slots });
  }

  /** The event the text holds, if it is this template with a JSON string in each hole (learn: `reuse`). */
  match(text: string): Json | undefined {
    const pieces = this.#pieces;
    const first = pieces[0] ?? '';
    if (!holds(text, first, 0)) return undefined;
    let at = first.length;
    const length = text.length;
    for (let slot = 1; slot < pieces.length; slot++) {
      const start = at;
      let escaped = false;
      // The string ends at the first quote not escaped; an escape is a backslash and the character after it.
      for (;;) {
        if (at >= length) return undefined;
        const code = text.charCodeAt(at);
        if (code === 0x22) break;
        if (code < 0x20) return undefined;
        if (code === 0x5c) {
          escaped = true;
          at += 2;
        } else {
          at++;
        }
      }
      const piece = pieces[slot] ?? '';
      if (!holds(text, piece, at)) return undefined;
      const value = escaped ? unescaped(text.slice(start - 1, at + 1)) : text.slice(start, at);
      if (value === undefined) return undefined;
      this.#values[slot - 1] = value;
      at += piece.length;
    }
    if (at !== length) return undefined;
    const refilled = this.#refilled;
    return refilled === undefined ? (build(this.#plan, this.#values) as Json) : refill(refilled, this.#values);
  }
}

/**
 * Whether the text holds the piece at that offset. Not startsWith, which V8 runs a character at a
 * time unless the piece is a constant it can specialise on: 0.9–1.4 µs for a Chat chunk's
 * 93-character start, against 70–80 ns for comparing a slice (Node 20 and 24, issue #17).
 */
const holds = (text: string, piece: string, at: number): boolean => text.slice(at, at + piece.length) === piece;

/** A string token with escapes (a tool call's arguments are JSON: `{\"`), or undefined for an invalid escape. */
function unescaped(token: string): string | undefined {
  try {
    return JSON.parse(token) as string;
  } catch {
    return undefined;
  }
}

/** How many templates a stream keeps, and how many parsed events it tries to learn from. */
const KEPT = 4;
const LEARNT = 8;

/**
 * One stream's templates: the one that matched last is tried first. `reuse`: each template
 * refills one event at its next match (EventTemplate.match), the event it was learnt from, so an
 * event is valid only until the next event is matched or learnt.
 */
export class EventTemplates {
  readonly #holes: Holes;
  readonly #reuse: boolean;
  readonly #templates: EventTemplate[] = [];
  #last: EventTemplate | undefined;
  /** Whether the last event was parsed, not built, and had a hole. */
  #pending = false;
  #tries = LEARNT;

  constructor(holes: Holes, reuse = false) {
    this.#holes = holes;
    this.#reuse = reuse;
  }

  match(text: string): Json | undefined {
    const last = this.#last;
    if (last !== undefined) {
      const value = last.match(text);
      if (value !== undefined) {
        this.#pending = false;
        return value;
      }
    }
    for (const template of this.#templates) {
      if (template === last) continue;
      const value = template.match(text);
      if (value === undefined) continue;
      this.#last = template;
      this.#pending = false;
      return value;
    }
    return undefined;
  }

  /**
   * A parsed event, which later ones may repeat. A learn costs a copy and a stringify, three to ten
   * parses, so only the first few are tried, and only an event that follows another parsed one
   * with a hole: a stream's first event of a kind is often one of a kind (a Chat stream's role
   * chunk has an empty `content`, and then never comes again).
   */
  learn(text: string, value: Json): void {
    if (this.#tries === 0 || !hasHole(value, this.#holes)) {
      this.#pending = false;
      return;
    }
    if (!this.#pending) {
      this.#pending = true;
      return;
    }
    this.#pending = false;
    this.#tries--;
    const template = EventTemplate.learn(text, value, this.#holes, this.#reuse);
    if (template === undefined) return;
    if (this.#templates.length === KEPT) this.#templates.shift();
    this.#templates.push(template);
    this.#last = template;
  }
}

/** Whether a hole of the tree holds a string in the value. */
function hasHole(value: unknown, holes: Holes): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const [key, hole] of holes.byKey) {
    const child = (value as Record<string, unknown>)[key];
    if (hole === true ? typeof child === 'string' : hasHole(child, hole)) return true;
  }
  return false;
}

/**
 * A private copy of the value with a sentinel in each hole, and the plan that rebuilds it. `found`
 * gets the holes' strings in JSON.stringify's order, which is Object.keys' order.
 */
function planOf(value: Container, holes: Holes | undefined, found: string[]): Plan {
  const array = Array.isArray(value);
  // An array's entries are set by their keys ('0', '1', …) as an object's are.
  const node = (array ? [] : {}) as Record<string, unknown>;
  const keys: (string | number)[] = [];
  const kids: (Plan | number)[] = [];
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    const child = source[key];
    const hole = holes?.byKey.get(key);
    // An array's children are stored by number: a string key is a slower store into an array.
    const stored = array ? Number(key) : key;
    if (hole === true && typeof child === 'string') {
      node[key] = sentinel(found.length);
      keys.push(stored);
      kids.push(found.length);
      found.push(child);
    } else if (typeof child === 'object' && child !== null) {
      const plan = planOf(child as Container, hole === true ? undefined : hole, found);
      node[key] = plan.node;
      keys.push(stored);
      kids.push(plan);
    } else {
      node[key] = child;
    }
  }
  return { node: node as Container, array, keys, kids };
}

/** Every container of the event is its own (consumers may keep or change what they are given). */
function build(plan: Plan, values: readonly string[]): Container {
  const copy = plan.array ? (plan.node as unknown[]).slice() : { ...plan.node };
  const { keys, kids } = plan;
  for (let i = 0; i < keys.length; i++) {
    const kid = kids[i];
    (copy as Record<string | number, unknown>)[keys[i] ?? ''] = typeof kid === 'number' ? values[kid] : build(kid as Plan, values);
  }
  return copy;
}

/** The template's event with this match's strings in its holes. */
function refill({ event, slots }: Refilled, values: readonly string[]): Json {
  for (let slot = 0; slot < slots.length; slot++) {
    const { container, key } = slots[slot] as Slot;
    container[key] = values[slot];
  }
  return event;
}

/** Where each hole of the plan is in a value of its shape (the value it was learnt from). */
function slotsOf(plan: Plan, value: Container, slots: Slot[]): void {
  const container = value as Record<string | number, unknown>;
  const { keys, kids } = plan;
  for (let i = 0; i < keys.length; i++) {
    const kid = kids[i];
    const key = keys[i] ?? '';
    if (typeof kid === 'number') slots[kid] = { container, key };
    else slotsOf(kid as Plan, container[key] as Container, slots);
  }
}

/** A node of a LinkedList: its own links, kept on the node so linking allocates nothing more. */
export interface Linked<T> {
  /** @internal the list's links */
  prev: T | undefined;
  /** @internal */
  next: T | undefined;
}

/**
 * An intrusive doubly linked list, newest first: O(1) add and remove of a node the caller keeps.
 * For per-request bookkeeping where a Set or a Map keyed by a fresh id hashed each entry and
 * rehashed as entries came and went (issue #17: requests in flight, settlements being written).
 */
export class LinkedList<T extends Linked<T>> {
  #head: T | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The newest node; walk on with each node's `next`. */
  get head(): T | undefined {
    return this.#head;
  }

  add(node: T): T {
    const head = this.#head;
    node.prev = undefined;
    node.next = head;
    if (head !== undefined) head.prev = node;
    this.#head = node;
    this.#size++;
    return node;
  }

  /** Takes the node out; a second call for the same node does nothing. */
  remove(node: T): void {
    const { prev, next } = node;
    if (prev === undefined && this.#head !== node) return; // already out
    if (prev === undefined) this.#head = next;
    else prev.next = next;
    if (next !== undefined) next.prev = prev;
    node.prev = undefined;
    node.next = undefined;
    this.#size--;
  }
}

import { expect } from 'chai';
import { LinkedList, type Linked } from '../../src/util/linked-list.ts';

interface Node extends Linked<Node> {
  readonly name: string;
}
const node = (name: string): Node => ({ name, prev: undefined, next: undefined });
const names = (list: LinkedList<Node>): string[] => {
  const out: string[] = [];
  for (let at = list.head; at !== undefined; at = at.next) out.push(at.name);
  return out;
};

describe('LinkedList', () => {
  it('adds newest first and removes from the head, the middle and the tail, each node once', () => {
    const list = new LinkedList<Node>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(node) as [Node, Node, Node, Node];
    for (const n of [a, b, c, d]) list.add(n);
    expect(names(list)).to.deep.equal(['d', 'c', 'b', 'a']);
    list.remove(b); // middle
    expect(names(list)).to.deep.equal(['d', 'c', 'a']);
    list.remove(d); // head
    list.remove(a); // tail
    expect(names(list)).to.deep.equal(['c']);
    expect(list.size).to.equal(1);
    list.remove(a); // again: nothing changes
    list.remove(d);
    expect(list.size).to.equal(1);
    expect(names(list)).to.deep.equal(['c']);
    list.remove(c);
    expect(list.size).to.equal(0);
    expect(list.head).to.equal(undefined);
    // A removed node can be added again, with fresh links.
    list.add(b);
    list.add(a);
    expect(names(list)).to.deep.equal(['a', 'b']);
    expect(b.next).to.equal(undefined);
  });
});

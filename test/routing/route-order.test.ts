import { expect } from 'chai';
import { orderRoutes } from '../../src/routing/route-order.ts';

const r = (name: string, weight: number | null = null) => ({ name, weight });
const names = (routes: { name: string }[]) => routes.map((x) => x.name);

describe('route order', () => {
  it('keeps YAML order when no route has a weight', () => {
    const routes = [r('a'), r('b'), r('c')];
    expect(orderRoutes(routes, () => 0.99)).to.equal(routes);
  });

  it('draws the order of adjacent weighted routes by weight, then falls back in YAML order', () => {
    const routes = [r('a', 3), r('b', 1), r('c')];
    expect(names(orderRoutes(routes, () => 0))).to.deep.equal(['a', 'b', 'c']);
    expect(names(orderRoutes(routes, () => 0.74))).to.deep.equal(['a', 'b', 'c']);
    expect(names(orderRoutes(routes, () => 0.76))).to.deep.equal(['b', 'a', 'c']);
  });

  it('spreads load in proportion to the weights', () => {
    const routes = [r('x'), r('a', 1), r('b', 3)];
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const firsts = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++) {
      const order = names(orderRoutes(routes, random));
      expect(order[0]).to.equal('x');
      firsts[order[1] as 'a' | 'b']++;
    }
    expect(firsts.b / 4000).to.be.within(0.72, 0.78);
  });
});

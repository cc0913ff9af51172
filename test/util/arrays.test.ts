import { expect } from 'chai';
import { empty } from '../../src/util/arrays.ts';

describe('empty', () => {
  it('leaves the same array with nothing in it, however much it held', () => {
    for (const size of [0, 1, 2, 64, 1000]) {
      const array = Array.from({ length: size }, (_, i) => ({ i }));
      empty(array);
      expect(array).to.deep.equal([]);
      array.push({ i: 7 });
      expect(array).to.deep.equal([{ i: 7 }]);
    }
  });

  it('empties an array with holes and one with undefined entries alike', () => {
    const holes = [1, , 3];
    const undefinedEntries = [undefined, undefined];
    empty(holes);
    empty(undefinedEntries);
    expect(holes).to.have.length(0);
    expect(undefinedEntries).to.have.length(0);
  });
});

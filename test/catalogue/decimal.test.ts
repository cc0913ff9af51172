import { expect } from 'chai';
import { perTokenFromPerMillion } from '../../src/catalogue/decimal.ts';

describe('perTokenFromPerMillion', () => {
  const cases: [number, string][] = [
    [3, '0.000003'],
    [15, '0.000015'],
    [0.3, '0.0000003'],
    [3.75, '0.00000375'],
    [0.075, '0.000000075'],
    [0, '0'],
    [1234567, '1.234567'],
    [12345678, '12.345678'],
    [1e-7, '0.0000000000001'],
    [2.5e21, '2500000000000000'],
  ];
  for (const [perMillion, expected] of cases) {
    it(`turns ${perMillion} per million into "${expected}" per token`, () => {
      expect(perTokenFromPerMillion(perMillion)).to.equal(expected);
    });
  }
});

import { expect } from 'chai';
import { compileModelGlobs } from '../../src/auth/model-glob.ts';

describe('model allowlist globs', () => {
  it('matches * and ? and treats everything else literally', () => {
    const allows = compileModelGlobs(['gpt-*', 'claude-?-x', 'exact.model', 'openai/o*']);
    for (const id of ['gpt-4o', 'gpt-', 'claude-3-x', 'exact.model', 'openai/o3-mini']) expect(allows(id), id).to.equal(true);
    for (const id of ['xgpt-4o', 'claude-35-x', 'exactxmodel', 'openai/gpt', 'GPT-4o']) expect(allows(id), id).to.equal(false);
  });

  it('is not fooled by regex characters in patterns', () => {
    const allows = compileModelGlobs(['a+b', '(x)|y']);
    expect(allows('a+b')).to.equal(true);
    expect(allows('aab')).to.equal(false);
    expect(allows('y')).to.equal(false);
    expect(allows('(x)|y')).to.equal(true);
  });
});

/**
 * Model-id allowlists: `*` matches any run of characters, `?` one character, anything else is
 * literal. Compiled once into one anchored RegExp per key.
 */
export type ModelMatcher = (modelId: string) => boolean;

export function compileModelGlobs(patterns: readonly string[]): ModelMatcher {
  const alternatives = patterns.map((pattern) =>
    pattern
      .split('')
      .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join(''),
  );
  const regex = new RegExp(`^(?:${alternatives.join('|')})$`, 's');
  return (modelId) => regex.test(modelId);
}

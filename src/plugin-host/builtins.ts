/**
 * Built-in plugins by name, imported lazily so an unused one costs nothing. They go through the
 * same checks as third-party plugins, so their exports are `unknown` here.
 */
export const BUILTIN_PLUGINS: Readonly<Record<string, () => Promise<unknown>>> = {
  anthropic: () => import('../../plugins/anthropic/index.ts'),
  openai: () => import('../../plugins/openai/index.ts'),
  azure: () => import('../../plugins/azure/index.ts'),
  gemini: () => import('../../plugins/gemini/index.ts'),
  bedrock: () => import('../../plugins/bedrock/index.ts'),
  vertex: () => import('../../plugins/vertex/index.ts'),
  mock: () => import('../../plugins/mock/index.ts'),
};

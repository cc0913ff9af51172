// Turns a documented YAML block into what `junction check-config` would validate. A block is a
// whole config unless an HTML comment right before its fence says otherwise:
//   <!-- fragment -->          top-level sections, merged into a minimal config;
//   <!-- fragment: models -->  list items, added to that section of the minimal config.
// Only that explicit marker makes a block a fragment, so a broken example cannot hide as one.
import path from 'node:path';
import YAML from 'yaml';
import { parseConfig } from '../../src/config/load.ts';
import type { GatewayConfig } from '../../src/config/types.ts';
import type { CodeBlock } from './markdown.ts';

/** The smallest config a fragment can stand in: the providers the docs' model examples route to. */
const MINIMAL = `
storage: { url: "sqlite://:memory:" }
auth: { keys: [{ name: docs, key: sk-jct-docs-test-0123456789 }] }
providers:
  - { id: anthropic, plugin: anthropic }
  - { id: openai, plugin: openai }
  - { id: mock, plugin: mock }
models:
  - { id: demo, routes: [{ provider: mock }], pricing: { input: 0, output: 0 } }
`;

type Tree = Record<string, unknown>;

const isTree = (value: unknown): value is Tree => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Lists of `{ id }` entries merge by id (a fragment's provider replaces the minimal one); others are replaced. */
function merge(base: unknown, extra: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(extra)) {
    const ids = new Set(extra.map((item) => (isTree(item) ? item['id'] : undefined)));
    return [...base.filter((item) => !(isTree(item) && ids.has(item['id']))), ...extra];
  }
  if (isTree(base) && isTree(extra)) {
    const out: Tree = { ...base };
    for (const [key, value] of Object.entries(extra)) out[key] = key in base ? merge(base[key], value) : value;
    return out;
  }
  return extra;
}

/** The config text to validate: the block itself, or the block merged into the minimal config. */
export function configText(block: CodeBlock): string {
  if (block.marker === undefined) return block.body;
  const marker = /^fragment(?::\s*(\w+))?$/.exec(block.marker);
  if (!marker) throw new Error(`unknown marker <!-- ${block.marker} --> before a yaml block`);
  const section = marker[1];
  const fragment: unknown = YAML.parse(block.body);
  if (section !== undefined && !Array.isArray(fragment)) throw new Error(`<!-- fragment: ${section} --> needs a list of items`);
  if (section === undefined && !isTree(fragment)) throw new Error('<!-- fragment --> needs top-level sections');
  return YAML.stringify(merge(YAML.parse(MINIMAL), section === undefined ? fragment : { [section]: fragment }));
}

/**
 * Each `${VAR}` the block needs, set to a value of its own: long enough for a key, and different
 * for each variable, as two keys must be. A variable with a default keeps it, as a reader's would.
 */
export function dummyEnv(text: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const match of text.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)) {
    const name = match[1] ?? '';
    if (match[2] === undefined) env[name] = `sk-jct-docs-${name.toLowerCase()}-0123456789abcdef`;
  }
  return env;
}

/** Validates the block as `junction check-config` validates a file; throws ConfigError listing each problem. */
export function validateBlock(block: CodeBlock, docFile: string): GatewayConfig {
  const text = configText(block);
  // Named after the document and line, so a problem says where it is; relative paths resolve beside it.
  const file = path.join(path.dirname(docFile), `${path.basename(docFile, '.md')}.line-${block.line}.yaml`);
  return parseConfig(text, file, dummyEnv(text));
}

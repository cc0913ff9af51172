import type { PluginLogger } from '../../src/plugin-host/api.ts';

/**
 * Claude on a cloud platform (Bedrock, Vertex) takes the Messages body with fewer betas, fewer
 * body fields and fewer tool types than api.anthropic.com, and answers 400 for the rest (`invalid
 * beta flag`, `Extra inputs are not permitted`, ``Unexpected value(s) `…` for the anthropic-beta
 * header``). Claude Code sends them all the time (anthropics/claude-code#49370, #21625, #34802;
 * providers.md §1.2, §2.2). Each platform keeps an allowlist: what it does not take is dropped,
 * and a debug log says what, so a session through the platform just works.
 */
export interface PlatformRules {
  /** For log lines. */
  readonly platform: string;
  readonly betas: ReadonlySet<string>;
  readonly fields: ReadonlySet<string>;
  /** Server and client tool types besides custom ones (`bash_20250124`, `web_search_…`), by prefix. */
  readonly toolTypes: readonly string[];
}

/** Fields of a custom tool definition a platform takes; `defer_loading`, `eager_input_streaming` and such are not. */
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'cache_control']);

export interface Adapted {
  readonly body: Record<string, unknown>;
  /** The client's betas the platform takes, in order. */
  readonly betas: string[];
}

/**
 * The body without the fields, tools and cache-control words the platform refuses, and the
 * client's betas (the `anthropic-beta` header, comma-separated, and any in the body) narrowed to
 * the platform's. The client's body is not changed.
 */
export function adaptForPlatform(body: Record<string, unknown>, betaHeader: string | undefined, rules: PlatformRules, log: PluginLogger): Adapted {
  const dropped: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (rules.fields.has(key)) out[key] = value;
    else if (key !== 'model' && key !== 'stream' && key !== 'anthropic_beta' && key !== 'anthropic_version') dropped.push(key);
  }
  const asked = [...(betaHeader ?? '').split(','), ...(Array.isArray(body['anthropic_beta']) ? body['anthropic_beta'] : [])].map((b) => String(b).trim()).filter((b) => b !== '');
  const betas = [...new Set(asked)].filter((beta) => rules.betas.has(beta) || (dropped.push(`beta ${beta}`), false));
  if (Array.isArray(out['tools'])) out['tools'] = toolsFor(out['tools'], rules, dropped);
  if (Array.isArray(out['system'])) out['system'] = out['system'].map((block) => withoutScope(block, dropped));
  if (Array.isArray(out['messages'])) out['messages'] = out['messages'].map((message) => messageWithoutScope(message, dropped));
  if (dropped.length > 0) log.debug({ platform: rules.platform, dropped: [...new Set(dropped)] }, `dropped what ${rules.platform} does not take`);
  return { body: out, betas };
}

function toolsFor(tools: unknown[], rules: PlatformRules, dropped: string[]): unknown[] {
  const kept: unknown[] = [];
  for (const raw of tools) {
    if (typeof raw !== 'object' || raw === null) continue;
    const tool = raw as Record<string, unknown>;
    const type = typeof tool['type'] === 'string' ? tool['type'] : 'custom';
    if (type !== 'custom') {
      if (rules.toolTypes.some((prefix) => type.startsWith(prefix))) kept.push(tool);
      else dropped.push(`tool type ${type}`);
      continue;
    }
    const clean: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(tool)) {
      if (TOOL_FIELDS.has(key)) clean[key] = key === 'cache_control' ? cacheControl(value, dropped) : value;
      else dropped.push(`tools[].${key}`);
    }
    kept.push(clean);
  }
  return kept;
}

/** `cache_control.scope` is api.anthropic.com's alone (LiteLLM strips it for Bedrock and Vertex). */
function cacheControl(value: unknown, dropped: string[]): unknown {
  if (typeof value !== 'object' || value === null || !('scope' in value)) return value;
  dropped.push('cache_control.scope');
  const { scope: _, ...rest } = value as Record<string, unknown>;
  return rest;
}

function withoutScope(block: unknown, dropped: string[]): unknown {
  if (typeof block !== 'object' || block === null || !('cache_control' in block)) return block;
  const record = block as Record<string, unknown>;
  const cache = cacheControl(record['cache_control'], dropped);
  return cache === record['cache_control'] ? block : { ...record, cache_control: cache };
}

function messageWithoutScope(message: unknown, dropped: string[]): unknown {
  if (typeof message !== 'object' || message === null) return message;
  const record = message as Record<string, unknown>;
  const content = record['content'];
  if (!Array.isArray(content)) return message;
  let changed = false;
  const blocks = content.map((block) => {
    const clean = withoutScope(block, dropped);
    if (clean !== block) changed = true;
    return clean;
  });
  return changed ? { ...record, content: blocks } : message;
}

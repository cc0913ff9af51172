import { createHash, randomUUID } from 'node:crypto';

/**
 * OpenAI function names must match ^[a-zA-Z0-9_-]{1,64}$; Anthropic tool names may be longer (MCP
 * tools often are). Names that do not fit are rewritten reversibly, as LiteLLM does: 55
 * characters, `_`, and 8 hex characters of the original's SHA-256 (protocol.md §D.1). The map
 * restores the original name on the way back.
 */
export class ToolNames {
  readonly #toUpstream = new Map<string, string>();
  readonly #toClient = new Map<string, string>();

  upstream(name: string): string {
    const known = this.#toUpstream.get(name);
    if (known !== undefined) return known;
    let safe = name.replace(/[^a-zA-Z0-9_-]/g, '_');
    if (safe.length > 64 || safe !== name) {
      const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
      safe = `${safe.slice(0, 55)}_${hash}`;
    }
    this.#toUpstream.set(name, safe);
    this.#toClient.set(safe, name);
    return safe;
  }

  client(name: string): string {
    return this.#toClient.get(name) ?? name;
  }
}

/** Anthropic tool_use ids must match ^[a-zA-Z0-9_-]+$; some upstreams send `functions.Bash:0`. */
export function safeToolUseId(id: string | undefined): string {
  if (id === undefined || id === '') return newToolUseId();
  return /^[a-zA-Z0-9_-]+$/.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** For an upstream that sent no id: unique, so ids never repeat across a conversation's turns. */
export function newToolUseId(): string {
  return `toolu_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

/** Tool arguments are a JSON string; a few servers send an object instead. */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : '';
}

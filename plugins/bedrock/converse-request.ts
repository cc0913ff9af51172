import { PluginRequestError, type CanonicalPart, type CanonicalRequest } from '../../src/plugin-host/api.ts';

type Json = Record<string, unknown>;

/** What the request encoder hands its decoders: names made Bedrock-safe, and the structured-output tool. */
export interface ConverseState {
  /** Bedrock's name → the client's, where they differ. */
  readonly names: ReadonlyMap<string, string>;
  /** The forced tool that carries a JSON answer (Converse has no response format), or null. */
  readonly jsonTool: string | null;
}

export const JSON_TOOL = 'json_response';
/** The model families whose Converse takes `toolChoice: { tool: { name } }`. */
const NAMED_CHOICE = /anthropic\.|amazon\.nova/;
/** Tool names and tool-use ids: `^[a-zA-Z0-9_-]+$`, 1 to 64 characters (providers.md §1.3). */
const safe = (value: string): string => (value.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || '_');
const IMAGE_FORMATS: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * The canonical request → a Converse body (providers.md §1.3), for every Bedrock model but Claude
 * (which goes through InvokeModel). Converse wants: roles alternating from a user turn, no blank
 * text, media as bytes (never URLs), tool blocks only with a toolConfig, temperature in 0–1, and
 * all that is not in `inferenceConfig` in `additionalModelRequestFields`.
 */
export function encodeConverseRequest(request: CanonicalRequest, options: { readonly model: string; readonly maxOutputTokens: number | null }): { body: Json; state: ConverseState } {
  const names = new Map<string, string>();
  const nameOf = (name: string): string => {
    const bedrock = safe(name);
    if (bedrock !== name) names.set(bedrock, name);
    return bedrock;
  };
  const jsonTool = request.format?.type === 'json_schema' ? JSON_TOOL : null;
  const tools = request.tools.map((tool) => ({ toolSpec: { name: nameOf(tool.name), ...(tool.description && { description: tool.description }), inputSchema: { json: tool.parameters } } }));
  if (request.format?.type === 'json_schema') tools.push({ toolSpec: { name: JSON_TOOL, description: 'Give the answer as this JSON.', inputSchema: { json: request.format.schema } } });
  const withTools = tools.length > 0 && request.toolChoice?.type !== 'none';

  const system: Json[] = [];
  const messages: Json[] = [];
  for (const turn of request.turns) {
    if (turn.role === 'system') {
      for (const part of turn.parts) if (part.type === 'text' && part.text.trim() !== '') system.push({ text: part.text });
      continue;
    }
    const content = turn.parts.flatMap((part) => blockOf(part, nameOf, withTools));
    if (content.length === 0) continue;
    const last = messages.at(-1);
    if (last && last['role'] === turn.role) (last['content'] as Json[]).push(...content);
    else messages.push({ role: turn.role, content });
  }
  if (messages[0]?.['role'] !== 'user') messages.unshift({ role: 'user', content: [{ text: 'Continue.' }] });

  const inference: Json = { maxTokens: request.maxTokens ?? options.maxOutputTokens ?? 4096 };
  // Converse takes 0–1; OpenAI's scale is 0–2.
  if (request.temperature !== undefined) inference['temperature'] = Math.min(1, request.temperature);
  if (request.topP !== undefined) inference['topP'] = request.topP;
  if (request.stop.length > 0) inference['stopSequences'] = request.stop;
  const additional: Json = {};
  if (request.topK !== undefined) additional['top_k'] = request.topK;
  if (request.reasoning && /(^|\.)openai\./.test(options.model)) additional['reasoning_effort'] = request.reasoning.effort ?? 'medium';
  const body: Json = { messages, inferenceConfig: inference };
  if (system.length > 0) body['system'] = system;
  if (withTools) {
    // A named tool choice only Claude and Nova take (providers.md §1.3): the others are made to
    // call a tool (`any`), which with structured output alone offered is the JSON tool.
    const named = (name: string): Json => (NAMED_CHOICE.test(options.model) ? { tool: { name } } : { any: {} });
    const choice = jsonTool ? named(jsonTool) : request.toolChoice?.type === 'any' ? { any: {} } : request.toolChoice?.type === 'tool' ? named(nameOf(request.toolChoice.name)) : { auto: {} };
    body['toolConfig'] = { tools, toolChoice: choice };
  }
  if (Object.keys(additional).length > 0) body['additionalModelRequestFields'] = additional;
  return { body: { model: options.model, ...body }, state: { names, jsonTool } };
}

function blockOf(part: CanonicalPart, nameOf: (name: string) => string, withTools: boolean): Json[] {
  switch (part.type) {
    case 'text':
      return part.text.trim() === '' ? [] : [{ text: part.text }];
    case 'image': {
      if (part.source.kind !== 'base64') throw new PluginRequestError(400, 'Bedrock takes images as base64 data, not by URL or file id', 'messages');
      const format = IMAGE_FORMATS[part.source.mediaType];
      if (!format) throw new PluginRequestError(400, `Bedrock takes png, jpeg, gif or webp images, not ${part.source.mediaType}`, 'messages');
      return [{ image: { format, source: { bytes: part.source.data } } }];
    }
    case 'document':
      if (part.source.kind === 'text') return [{ text: part.source.text }];
      if (part.source.kind !== 'base64' || part.source.mediaType !== 'application/pdf') throw new PluginRequestError(400, 'Bedrock takes documents as base64 PDF data', 'messages');
      // A document needs a text block beside it.
      return [{ document: { format: 'pdf', name: safe(part.title ?? 'document').replace(/_/g, ' ').trim() || 'document', source: { bytes: part.source.data } } }, { text: part.title ?? 'The attached document.' }];
    case 'reasoning':
      // Replayed only when signed: unsigned reasoning is another vendor's, and no model checks it.
      return part.signature === undefined ? [] : [{ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }];
    case 'opaque_reasoning':
      return [{ reasoningContent: { redactedContent: part.data } }];
    case 'tool_call':
      // Tool blocks without a toolConfig are refused: said as text then (as the AI SDK does).
      if (!withTools) return [{ text: `[called ${part.name} with ${part.arguments}]` }];
      return [{ toolUse: { toolUseId: safe(part.id), name: nameOf(part.name), input: argsOf(part.arguments) } }];
    case 'tool_result': {
      const content = part.content.flatMap((inner) => blockOf(inner, nameOf, withTools)).filter((b) => 'text' in b || 'image' in b || 'document' in b);
      if (!withTools) return [{ text: `[result: ${content.map((b) => String(b['text'] ?? '')).join('')}]` }];
      return [{ toolResult: { toolUseId: safe(part.id), content: content.length > 0 ? content : [{ json: {} }], status: part.isError ? 'error' : 'success' } }];
    }
  }
}

/** Tool arguments as the object Converse wants; text that is not JSON kept under `raw_arguments` (canonical rule 5). */
function argsOf(args: string): unknown {
  try {
    return JSON.parse(args === '' ? '{}' : args) as unknown;
  } catch {
    return { raw_arguments: args };
  }
}

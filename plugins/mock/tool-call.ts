import type { ClientRequest } from '../../src/plugin-host/api.ts';

/**
 * The demo model's tool call: it calls a tool only when the request forces one (Messages
 * `tool_choice: {type: "any" | "tool"}`, Chat `"required"` or a named function), so that tool
 * loops can be tried offline. The input fills the schema's required properties with placeholders
 * of their type; a string gets the last text the model received.
 */
export interface MockToolCall {
  readonly name: string;
  readonly input: Record<string, unknown>;
}

interface ToolSpec {
  readonly name: string;
  readonly schema: unknown;
}

export function forcedToolCall(request: ClientRequest, lastText: string): MockToolCall | undefined {
  if (request.endpoint === 'count_tokens') return undefined;
  const { tools, forced } = request.endpoint === 'messages' ? messagesTools(request.body) : chatTools(request.body);
  if (forced === undefined) return undefined;
  const tool = forced === true ? tools[0] : tools.find((t) => t.name === forced);
  return tool && { name: tool.name, input: placeholderInput(tool.schema, lastText) };
}

type Body = Record<string, unknown>;
const record = (value: unknown): Body => (typeof value === 'object' && value !== null ? (value as Body) : {});
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** `forced` is true for "any tool", a name for one tool, undefined when no call is forced. */
function messagesTools(body: object): { tools: ToolSpec[]; forced: true | string | undefined } {
  const tools = list(record(body)['tools'])
    .map(record)
    .filter((t) => typeof t['name'] === 'string' && t['input_schema'] !== undefined)
    .map((t) => ({ name: String(t['name']), schema: t['input_schema'] }));
  const choice = record(record(body)['tool_choice']);
  const forced = choice['type'] === 'any' ? true : choice['type'] === 'tool' && typeof choice['name'] === 'string' ? choice['name'] : undefined;
  return { tools, forced };
}

function chatTools(body: object): { tools: ToolSpec[]; forced: true | string | undefined } {
  const tools = list(record(body)['tools'])
    .map(record)
    .filter((t) => t['type'] === 'function' && typeof record(t['function'])['name'] === 'string')
    .map((t) => ({ name: String(record(t['function'])['name']), schema: record(t['function'])['parameters'] }));
  const choice = record(body)['tool_choice'];
  const named = record(record(choice)['function'])['name'];
  const forced = choice === 'required' ? true : typeof named === 'string' ? named : undefined;
  return { tools, forced };
}

function placeholderInput(schema: unknown, text: string): Record<string, unknown> {
  const properties = record(record(schema)['properties']);
  const input: Record<string, unknown> = {};
  for (const name of list(record(schema)['required'])) {
    if (typeof name === 'string') input[name] = placeholder(record(properties[name]), text);
  }
  return input;
}

function placeholder(schema: Body, text: string): unknown {
  const choices = list(schema['enum']);
  if (choices.length > 0) return choices[0];
  if ('const' in schema) return schema['const'];
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type) {
    case 'number':
    case 'integer':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return placeholderInput(schema, text);
    case 'null':
      return null;
    default:
      return text;
  }
}

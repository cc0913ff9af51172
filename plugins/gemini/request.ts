import type { CanonicalPart, CanonicalRequest } from '../../src/plugin-host/api.ts';
import { geminiSchema } from './schema.ts';
import { SKIP_VALIDATOR, type SignatureStore } from './signatures.ts';

type Json = Record<string, unknown>;

/** Efforts as thinking budgets, as Google's own OpenAI layer maps them (providers.md §3.4). */
const EFFORT_BUDGET: Readonly<Record<string, number>> = { minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 24576, max: 24576 };
/** The budgets every Gemini 2.5 model takes (Pro 128–32768, Flash 0–24576): outside, a 400. */
const BUDGET_RANGE = [128, 24576] as const;

/**
 * Thinking for the model: Gemini 3 takes a level, 2.5 a budget in its range (providers.md §3.4;
 * a budget and a level together are refused).
 */
function thinkingConfig(model: string, reasoning: NonNullable<CanonicalRequest['reasoning']>): Json {
  const budget = reasoning.budget ?? EFFORT_BUDGET[reasoning.effort ?? 'medium'] ?? 8192;
  if (/gemini-[3-9]/.test(model)) {
    const level = budget < 2048 ? 'LOW' : budget < 16384 ? 'MEDIUM' : 'HIGH';
    return { includeThoughts: true, thinkingLevel: reasoning.effort === 'minimal' ? 'MINIMAL' : level };
  }
  return { includeThoughts: true, thinkingBudget: Math.min(BUDGET_RANGE[1], Math.max(BUDGET_RANGE[0], budget)) };
}

/**
 * The canonical request → a Gemini `generateContent` body (providers.md §3.2–3.4). Roles are
 * `user` and `model`; system turns are the `systemInstruction`; a tool result names its function,
 * found from the call it answers; each function call carries its thought signature back.
 */
export function encodeGeminiRequest(request: CanonicalRequest, options: { model: string; maxOutputTokens: number | null }, signatures: SignatureStore): Json {
  const system: Json[] = [];
  const contents: Json[] = [];
  const names = new Map<string, string>();
  // Gemini 3 checks the current turn: everything after the last user turn with ordinary content.
  const current = lastPlainUserTurn(request);
  request.turns.forEach((turn, t) => {
    if (turn.role === 'system') {
      for (const part of turn.parts) if (part.type === 'text' && part.text !== '') system.push({ text: part.text });
      return;
    }
    const parts: Json[] = [];
    let firstCall = true;
    for (const part of turn.parts) {
      if (part.type === 'tool_call') {
        names.set(part.id, part.name);
        const call: Json = { functionCall: { id: part.id, name: part.name, args: argsOf(part.arguments) } };
        const signature = signatures.recall(options.model, part.id) ?? (t > current && firstCall ? SKIP_VALIDATOR : undefined);
        if (signature !== undefined) call['thoughtSignature'] = signature;
        firstCall = false;
        parts.push(call);
      } else if (part.type === 'tool_result') {
        const text = part.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
        // Images and files a tool returned ride in the response's own parts, the only place
        // Gemini takes them there (providers.md §3.2).
        const inline = part.content.flatMap((c) => (c.type !== 'text' && c.type !== 'tool_result' ? [contentPart(c)] : [])).filter((c): c is Json => c !== undefined && 'inlineData' in c);
        parts.push({ functionResponse: { id: part.id, name: names.get(part.id) ?? part.id, response: part.isError ? { error: text } : { output: text }, ...(inline.length > 0 && { parts: inline }) } });
      } else {
        const converted = contentPart(part);
        if (converted) parts.push(converted);
      }
    }
    if (parts.length === 0) return;
    const role = turn.role === 'assistant' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last && last['role'] === role) (last['parts'] as Json[]).push(...parts);
    else contents.push({ role, parts });
  });
  // Gemini refuses `contents: []`: a request that is all system prompt is sent as the user's turn.
  if (contents.length === 0 && system.length > 0) contents.push({ role: 'user', parts: system.splice(0) });
  const body: Json = { model: options.model, contents };
  if (system.length > 0) body['systemInstruction'] = { parts: system };
  if (request.tools.length > 0) {
    body['tools'] = [
      {
        functionDeclarations: request.tools.map((tool, i) => {
          const parameters = geminiSchema(tool.parameters, `tools[${i}]`);
          return { name: tool.name, ...(tool.description !== undefined && { description: tool.description }), ...(parameters && { parameters }) };
        }),
      },
    ];
    const choice = request.toolChoice;
    if (choice !== undefined) {
      const mode = choice.type === 'none' ? 'NONE' : choice.type === 'auto' ? 'AUTO' : 'ANY';
      body['toolConfig'] = { functionCallingConfig: { mode, ...(choice.type === 'tool' && { allowedFunctionNames: [choice.name] }) } };
    }
  }
  const generation: Json = {};
  if (request.maxTokens !== undefined) generation['maxOutputTokens'] = options.maxOutputTokens === null ? request.maxTokens : Math.min(request.maxTokens, options.maxOutputTokens);
  if (request.temperature !== undefined) generation['temperature'] = request.temperature;
  if (request.topP !== undefined) generation['topP'] = request.topP;
  if (request.topK !== undefined) generation['topK'] = request.topK;
  if (request.stop.length > 0) generation['stopSequences'] = [...request.stop];
  if (request.reasoning !== undefined) generation['thinkingConfig'] = thinkingConfig(options.model, request.reasoning);
  if (request.format?.type === 'json_object') generation['responseMimeType'] = 'application/json';
  else if (request.format?.type === 'json_schema') {
    generation['responseMimeType'] = 'application/json';
    const schema = geminiSchema(request.format.schema, request.fields.format);
    if (schema) generation['responseSchema'] = schema;
  }
  if (Object.keys(generation).length > 0) body['generationConfig'] = generation;
  return body;
}

function lastPlainUserTurn(request: CanonicalRequest): number {
  for (let t = request.turns.length - 1; t >= 0; t--) {
    const turn = request.turns[t]!;
    if (turn.role === 'user' && turn.parts.some((p) => p.type !== 'tool_result')) return t;
  }
  return -1;
}

function argsOf(text: string): Json {
  try {
    const parsed: unknown = JSON.parse(text || '{}');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : { value: parsed };
  } catch {
    return { raw_arguments: text };
  }
}

/** Text, inline images and documents; what Gemini cannot fetch is said as text. Empty text is never sent. */
function contentPart(part: CanonicalPart): Json | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { text: part.text };
    case 'image':
    case 'document': {
      const { source } = part;
      if (source.kind === 'base64') return { inlineData: { mimeType: source.mediaType, data: source.data } };
      if (source.kind === 'text') return { text: part.type === 'document' && part.title !== undefined ? `Document: ${part.title}\n\n${source.text}` : source.text };
      return { text: `[${part.type} at ${source.kind === 'url' ? source.url : source.fileId}: this model cannot fetch it]` };
    }
    default:
      // Another vendor's reasoning cannot go to Gemini (providers.md §3.8): left out.
      return undefined;
  }
}

import type { CanonicalEvent } from '../../src/plugin-host/api.ts';
import { obj } from '../shared/json.ts';
import { blockedText, callFailure, callIdOf, reportedError, stopOf, usageOf } from './answer.ts';
import type { SignatureStore } from './signatures.ts';

type Json = Record<string, unknown>;

/**
 * Gemini's stream (providers.md §3.6): each event a whole response holding a delta. Thought parts
 * come first and stream as reasoning, text as text; a function call comes whole. `usageMetadata`
 * repeats (the last wins) and `finishReason` is on the last event. A bare `{"error":…}` event is
 * an in-band failure. No end marker: the core treats a stream without the finish as cut.
 */
export function geminiStreamDecoder(signatures: SignatureStore, model: string): { push(event: { readonly data: Json }, out: CanonicalEvent[]): void; end(out: CanonicalEvent[]): void } {
  let started = false;
  let next = 0;
  let open: { index: number; kind: 'text' | 'reasoning' } | null = null;
  let called = false;
  const close = (out: CanonicalEvent[]): void => {
    if (open) out.push({ type: 'block_stop', index: open.index });
    open = null;
  };
  return {
    push({ data }, out) {
      // An error mid-stream keeps its status (a 429 is still a rate limit to the client).
      if (data['error'] !== undefined) throw reportedError(obj(data['error']));
      if (!started) {
        started = true;
        out.push({ type: 'start', id: typeof data['responseId'] === 'string' ? data['responseId'] : undefined, model: typeof data['modelVersion'] === 'string' ? data['modelVersion'] : undefined });
      }
      const blocked = blockedText(data);
      if (blocked !== undefined) {
        close(out);
        const index = next++;
        out.push({ type: 'block', index, block: { type: 'refusal' } }, { type: 'text', index, text: blocked }, { type: 'block_stop', index });
        out.push({ type: 'stop', stop: 'refusal', stopSequence: undefined, usage: usageOf(data['usageMetadata']) });
        return;
      }
      const candidate = obj((data['candidates'] as unknown[] | undefined)?.[0]);
      for (const raw of (obj(candidate['content'])['parts'] as unknown[] | undefined) ?? []) {
        const part = obj(raw);
        if (part['functionCall'] !== undefined) {
          close(out);
          called = true;
          const call = obj(part['functionCall']);
          const id = callIdOf(call);
          if (typeof part['thoughtSignature'] === 'string') signatures.remember(model, id, part['thoughtSignature']);
          const index = next++;
          out.push({ type: 'block', index, block: { type: 'tool_call', id, name: String(call['name'] ?? ''), arguments: JSON.stringify(call['args'] ?? {}) } }, { type: 'block_stop', index });
          continue;
        }
        if (typeof part['text'] !== 'string' || part['text'] === '') continue;
        const kind = part['thought'] === true ? 'reasoning' : 'text';
        if (open?.kind !== kind) {
          close(out);
          open = { index: next++, kind };
          out.push({ type: 'block', index: open.index, block: { type: kind } });
        }
        out.push(kind === 'reasoning' ? { type: 'reasoning', index: open.index, text: part['text'] } : { type: 'text', index: open.index, text: part['text'] });
      }
      if (typeof candidate['finishReason'] === 'string') {
        const failure = callFailure(candidate['finishReason'], next > 0);
        if (failure) throw failure;
        close(out);
        // No usage reported is no usage, not zero: the core then bills its estimate.
        out.push({ type: 'stop', stop: stopOf(candidate['finishReason'], called), stopSequence: undefined, usage: data['usageMetadata'] === undefined ? undefined : usageOf(data['usageMetadata']) });
      }
    },
    end() {
      // Without its finishReason the stream was cut: the core says so to the client.
    },
  };
}

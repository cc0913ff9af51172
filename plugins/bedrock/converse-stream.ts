import type { CanonicalEvent, CanonicalStop } from '../../src/plugin-host/api.ts';
import { stopOf, usageOf } from './converse-answer.ts';
import type { ConverseState } from './converse-request.ts';
import { obj, type Json } from '../shared/json.ts';


/**
 * ConverseStream's events (providers.md §1.3) → canonical events. Only tool use gets a
 * `contentBlockStart`: text and reasoning open with their first delta. The stop reason comes in
 * `messageStop` and the usage after it in `metadata`, so the stop waits for the usage (or the end).
 * The JSON tool of structured output streams as text.
 */
export function converseStreamDecoder(state: ConverseState): { push(event: { readonly event: string | undefined; readonly data: Json }, out: CanonicalEvent[]): void; end(out: CanonicalEvent[]): void } {
  let started = false;
  let next = 0;
  let open: { upstream: number; index: number; kind: 'text' | 'reasoning' | 'tool' | 'json' } | null = null;
  let stop: CanonicalStop | null = null;
  const close = (out: CanonicalEvent[]): void => {
    if (open) out.push({ type: 'block_stop', index: open.index });
    open = null;
  };
  const openAs = (upstream: number, kind: 'text' | 'reasoning', out: CanonicalEvent[]): number => {
    if (open?.upstream === upstream && (open.kind === kind || open.kind === 'json')) return open.index;
    close(out);
    open = { upstream, index: next++, kind };
    out.push({ type: 'block', index: open.index, block: { type: kind } });
    return open.index;
  };
  return {
    push({ event, data }, out) {
      if (!started) {
        started = true;
        out.push({ type: 'start' });
      }
      const upstream = typeof data['contentBlockIndex'] === 'number' ? data['contentBlockIndex'] : -1;
      switch (event) {
        case 'contentBlockStart': {
          const use = obj(obj(data['start'])['toolUse']);
          if (typeof use['name'] !== 'string') return;
          close(out);
          if (use['name'] === state.jsonTool) {
            open = { upstream, index: next++, kind: 'json' };
            out.push({ type: 'block', index: open.index, block: { type: 'text' } });
            return;
          }
          open = { upstream, index: next++, kind: 'tool' };
          out.push({ type: 'block', index: open.index, block: { type: 'tool_call', id: String(use['toolUseId'] ?? ''), name: state.names.get(use['name']) ?? use['name'] } });
          return;
        }
        case 'contentBlockDelta': {
          const delta = obj(data['delta']);
          if (typeof delta['text'] === 'string') {
            out.push({ type: 'text', index: openAs(upstream, 'text', out), text: delta['text'] });
          } else if (delta['toolUse'] !== undefined && open) {
            const input = String(obj(delta['toolUse'])['input'] ?? '');
            out.push(open.kind === 'json' ? { type: 'text', index: open.index, text: input } : { type: 'arguments', index: open.index, json: input });
          } else if (delta['reasoningContent'] !== undefined) {
            const reasoning = obj(delta['reasoningContent']);
            if (typeof reasoning['redactedContent'] === 'string') {
              close(out);
              const index = next++;
              out.push({ type: 'block', index, block: { type: 'opaque_reasoning', data: reasoning['redactedContent'] } }, { type: 'block_stop', index });
            } else if (typeof reasoning['text'] === 'string') {
              out.push({ type: 'reasoning', index: openAs(upstream, 'reasoning', out), text: reasoning['text'] });
            } else if (typeof reasoning['signature'] === 'string') {
              out.push({ type: 'signature', index: openAs(upstream, 'reasoning', out), signature: reasoning['signature'] });
            }
          }
          return;
        }
        case 'contentBlockStop':
          if (open?.upstream === upstream) close(out);
          return;
        case 'messageStop':
          close(out);
          stop = stopOf(data['stopReason'], state);
          return;
        case 'metadata':
          if (stop === null) return;
          out.push({ type: 'stop', stop, stopSequence: undefined, usage: data['usage'] === undefined ? undefined : usageOf(data['usage']) });
          stop = null;
          return;
        default:
          return; // messageStart, and events Converse may add
      }
    },
    end(out) {
      // A messageStop without its metadata: complete, but no usage was reported.
      if (stop !== null) out.push({ type: 'stop', stop, stopSequence: undefined, usage: undefined });
    },
  };
}

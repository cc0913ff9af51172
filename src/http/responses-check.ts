import type { JsonWalk } from './json-walk.ts';
import { boolean, integer, isNull, K, key, knownKeys, loose, modelString, parsedValue, TopLevel, type CheckedRequest } from './request-check-parts.ts';

/**
 * The byte-level check of POST /v1/responses and /v1/responses/input_tokens (issue #17; issue #14
 * wants native Responses within 0.9× of native Chat, which takes this path): responsesRequestSchema
 * (formats/request-schemas.ts) written out, as request-check.ts does for Messages and Chat.
 * Besides `model`, `stream` and the token limits, the head has what response-state.ts reads before
 * anything is sent (`background`, `conversation`, `previous_response_id`) and after the answer
 * (`store`), and the ids the input names by `item_reference` come out beside it: a request served
 * natively, a continuation of an upstream-kept response included, is never parsed.
 *
 * The elements for the input-token estimate (usage/checked-text.ts) are `instructions` (in the
 * place Messages' `system` takes) and the input: its string as one element, or each item.
 */
const RESPONSES_KEYS = knownKeys(['model', 'input', 'instructions', 'stream', 'max_output_tokens', 'previous_response_id', 'tools', 'background', 'conversation', 'store']);
const ITEM_REFERENCE = key('item_reference');
/** response-state.ts looks up at most this many references. */
const MOST_REFERENCES = 1000;

export function responsesBody(walk: JsonWalk): CheckedRequest {
  const top = new TopLevel();
  const references: string[] = [];
  walk.object((w) => {
    const name = top.known(w, RESPONSES_KEYS);
    switch (name) {
      case 'model':
        top.fields.set('model', w.range(() => modelString(w, top)));
        return;
      case 'input':
        input(w, top, references);
        return;
      case 'instructions':
        // A string is the estimate's first text; null has none.
        if (!isNull(w)) top.system = w.range(() => w.string());
        return;
      case 'stream':
        if (!isNull(w) && boolean(w)) top.head['stream'] = true;
        return;
      case 'max_output_tokens':
        if (!isNull(w)) top.head['max_output_tokens'] = integer(w, 1, Infinity);
        return;
      case 'previous_response_id':
        if (isNull(w)) top.head['previous_response_id'] = null;
        else {
          w.string();
          if (!w.stringFilled()) w.fail();
          top.head['previous_response_id'] = w.stringText();
        }
        return;
      case 'tools':
        // Not checked (a native upstream judges its tools); its range is counted as sent.
        top.fields.set('tools', w.range(() => w.value()));
        return;
      case 'background':
      case 'conversation':
      case 'store':
        // Not checked either: response-state.ts refuses the first two and reads the third, as
        // parsed. Known keys, so a repeated one is left to the full parse (JSON.parse keeps the last).
        top.head[name] = parsedValue(w);
        return;
      default:
        loose(w, top);
    }
  });
  if (!top.has('model')) walk.fail();
  return top.finish(walk, references);
}

/** `input`: a string, or an array of objects whose `type`, if any, is a non-empty string. */
function input(walk: JsonWalk, top: TopLevel, references: string[]): void {
  const c = walk.space();
  if (c === 0x22) top.messages.push(walk.range(() => walk.string()));
  else if (c === 0x5b) walk.array(() => top.messages.push(walk.range(() => inputItem(walk, references))));
  else walk.fail();
}

/**
 * An input item. Whether it is an `item_reference` is decided as response-state.ts decides it on
 * the parsed item: typed so, or with a string `id` and neither a type nor a role. A repeated `type`
 * or `id` is refused, so what is read here is what JSON.parse keeps; for `role` only its presence
 * counts. The id is read as text only for a reference.
 */
function inputItem(walk: JsonWalk, references: string[]): void {
  const item: ItemSeen = { type: 'absent', role: false, id: 'absent' };
  walk.object((w) => {
    if (w.keyIs(K.type)) {
      if (item.type !== 'absent') w.fail();
      w.string();
      if (!w.stringFilled()) w.fail();
      item.type = w.stringIs(ITEM_REFERENCE) || (w.escaped && w.stringText() === 'item_reference') ? 'reference' : 'other';
    } else if (w.keyIs(K.role)) {
      item.role = true;
      w.value();
    } else if (w.keyIs(K.id)) {
      if (item.id !== 'absent') w.fail();
      if (w.space() === 0x22) {
        w.string();
        item.id = { start: w.start, end: w.at, escaped: w.escaped };
      } else {
        w.value();
        item.id = 'other';
      }
    } else w.value();
  });
  const { type, role, id } = item;
  if (typeof id !== 'object' || references.length >= MOST_REFERENCES) return;
  if (type === 'reference' || (type === 'absent' && !role)) references.push(walk.textOf(id.start, id.end, id.escaped));
}

interface ItemSeen {
  type: 'absent' | 'reference' | 'other';
  /** A `role` member, whatever its value: response-state.ts asks only whether it is undefined. */
  role: boolean;
  /** Where a string `id` is; 'other' for any other value. */
  id: 'absent' | 'other' | { readonly start: number; readonly end: number; readonly escaped: boolean };
}

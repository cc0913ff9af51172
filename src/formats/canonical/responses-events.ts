import { asArray, asObject, asString, type Json } from '../convert/json.ts';

/**
 * A whole Responses answer as the event stream a client expects (responses-api.md §4.1, §4.3):
 * `response.created` and `response.in_progress` first; each output item added, its content parts
 * added, delta'd and done, the item done with its full content; then exactly one terminal event.
 * `sequence_number` runs from 0 with no gaps, `output_index` is the item's position, and every
 * `item_id` is its item's id: what the openai SDK's strict accumulator and Codex CLI check.
 * For answers made whole (an in-process plugin's), each piece of text is one delta.
 */
export function responsesEventsOf(response: Json): string {
  let sequence = 0;
  let out = '';
  const emit = (type: string, fields: Json): void => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  };
  const opening = { ...response, status: 'in_progress', completed_at: null, incomplete_details: null, output: [], usage: null };
  emit('response.created', { response: opening });
  emit('response.in_progress', { response: opening });
  for (const [outputIndex, raw] of asArray(response['output']).entries()) {
    const item = asObject(raw);
    const itemId = asString(item['id']) ?? '';
    const at = { item_id: itemId, output_index: outputIndex };
    switch (item['type']) {
      case 'message': {
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
        for (const [contentIndex, rawPart] of asArray(item['content']).entries()) {
          const part = asObject(rawPart);
          const where = { ...at, content_index: contentIndex };
          if (part['type'] === 'refusal') {
            emit('response.content_part.added', { ...where, part: { type: 'refusal', refusal: '' } });
            emit('response.refusal.delta', { ...where, delta: part['refusal'] });
            emit('response.refusal.done', { ...where, refusal: part['refusal'] });
          } else {
            emit('response.content_part.added', { ...where, part: { ...part, text: '' } });
            emit('response.output_text.delta', { ...where, delta: part['text'], logprobs: [] });
            emit('response.output_text.done', { ...where, text: part['text'], logprobs: [] });
          }
          emit('response.content_part.done', { ...where, part });
        }
        break;
      }
      case 'reasoning':
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, summary: [] } });
        for (const [summaryIndex, rawSummary] of asArray(item['summary']).entries()) {
          const summary = asObject(rawSummary);
          const where = { ...at, summary_index: summaryIndex };
          emit('response.reasoning_summary_part.added', { ...where, part: { type: 'summary_text', text: '' } });
          emit('response.reasoning_summary_text.delta', { ...where, delta: summary['text'] });
          emit('response.reasoning_summary_text.done', { ...where, text: summary['text'] });
          emit('response.reasoning_summary_part.done', { ...where, part: summary });
        }
        break;
      case 'function_call':
        emit('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
        emit('response.function_call_arguments.delta', { ...at, delta: item['arguments'] });
        emit('response.function_call_arguments.done', { ...at, name: item['name'], arguments: item['arguments'] });
        break;
      default:
        emit('response.output_item.added', { output_index: outputIndex, item });
    }
    emit('response.output_item.done', { output_index: outputIndex, item });
  }
  emit(response['status'] === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return out;
}

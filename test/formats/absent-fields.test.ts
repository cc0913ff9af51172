import { expect } from 'chai';
import { eventWithoutAbsentNulls, withoutAbsentNulls } from '../../src/formats/absent-fields.ts';

/** An in-process plugin that follows the SDK's types writes these nulls; the wire leaves them out (issue #12). */
describe('Messages fields left out when empty', () => {
  const sdkShaped = {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'm',
    content: [{ type: 'text', text: 'hi', citations: null }, { type: 'tool_use', id: 't', name: 'n', input: {} }],
    container: null, diagnostics: null, stop_details: null, stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 2, cache_creation: null, inference_geo: null, output_tokens_details: null, server_tool_use: null, service_tier: null, speed: null },
  };

  it('drops them from a whole message, keeping stop_sequence: null as the API sends it', () => {
    expect(withoutAbsentNulls(sdkShaped)).to.deep.equal({
      id: 'msg_1', type: 'message', role: 'assistant', model: 'm',
      content: [{ type: 'text', text: 'hi' }, { type: 'tool_use', id: 't', name: 'n', input: {} }],
      stop_reason: 'end_turn', stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 2 },
    });
  });

  it('keeps values that are set, and returns a clean message as it is, uncopied', () => {
    const clean = { type: 'message', content: [{ type: 'text', text: 'x', citations: [{ type: 'char_location' }] }], usage: { service_tier: 'standard' } };
    expect(withoutAbsentNulls(clean)).to.equal(clean);
  });

  it('drops them from message_start, a text block start and message_delta, and leaves other events alone', () => {
    expect(eventWithoutAbsentNulls({ type: 'message_start', message: sdkShaped })).to.deep.equal({ type: 'message_start', message: withoutAbsentNulls(sdkShaped) });
    expect(eventWithoutAbsentNulls({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } })).to.deep.equal({
      type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' },
    });
    expect(
      eventWithoutAbsentNulls({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null, container: null, stop_details: null },
        usage: { output_tokens: 3, output_tokens_details: null, server_tool_use: null },
      }),
    ).to.deep.equal({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } });
    const delta = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } };
    expect(eventWithoutAbsentNulls(delta)).to.equal(delta);
  });
});

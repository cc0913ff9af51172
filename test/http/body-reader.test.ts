import { expect } from 'chai';
import { Readable } from 'node:stream';
import type { BodyBytes } from '../../src/http/body-bytes.ts';
import { createBodyReader } from '../../src/http/middleware/body.ts';
import { inputTokensOf } from '../../src/http/input-tokens.ts';
import { RequestState } from '../../src/http/request-state.ts';
import type { GatewayContext, GatewayState } from '../../src/http/state.ts';

/** A request carrying `text` (in these pieces, when given), and the chain's state after the body reader ran. */
async function read(text: string, check?: 'messages' | 'chat_completions' | 'responses', pieces: readonly string[] = [text]): Promise<GatewayState> {
  const req = Object.assign(Readable.from(pieces.map((piece) => Buffer.from(piece))), { headers: {} }) as unknown as GatewayContext['req'];
  const state = new RequestState('req_test', 0, 0, 'messages', {});
  const ctx = { req, state } as unknown as GatewayContext;
  await createBodyReader({ limitBytes: 1 << 20, maxDepth: 128, ...(check ? { check } : {}) })(ctx, async () => undefined);
  return state;
}

describe('the body reader', () => {
  const valid = JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }], extra: { a: 1 } });

  it('on a body the byte checks accept, gives the head and parses the body only when it is read (issue #17)', async () => {
    const state = await read(valid, 'messages');
    expect(state.head).to.deep.equal({ model: 'claude-sonnet-4-6', max_tokens: 16, stream: true });
    expect(state.elements?.messages).to.have.length(1);
    // Not parsed yet: bytes changed now (same length, still valid) show up in the body when it is read.
    const raw = (state.raw as BodyBytes).chunks[0] as Buffer;
    raw.write('"yo"', raw.indexOf('"hi"'), 'latin1');
    expect(state.body).to.deep.equal(JSON.parse(valid.replace('"hi"', '"yo"')));
    expect(state.body).to.equal(state.body); // parsed once
    state.body = { replaced: true };
    expect(state.body).to.deep.equal({ replaced: true });
  });

  it('on a Responses body, gives what the response state reads in the head, and the ids its input names by reference (issue #17)', async () => {
    const text = JSON.stringify({ model: 'gpt-5', stream: true, store: false, previous_response_id: 'resp_1', input: [{ type: 'item_reference', id: 'msg_1' }, { role: 'user', content: 'hi' }] });
    const state = await read(text, 'responses');
    expect(state.head).to.deep.equal({ model: 'gpt-5', stream: true, store: false, previous_response_id: 'resp_1' });
    expect(state.references).to.deep.equal(['msg_1']);
    expect(state.elements?.messages).to.have.length(2);
    // Not parsed yet: a change to the bytes now shows up when the body is read.
    const raw = (state.raw as BodyBytes).chunks[0] as Buffer;
    raw.write('"gpt-6"', raw.indexOf('"gpt-5"'), 'latin1');
    expect(state.body).to.deep.equal(JSON.parse(text.replace('"gpt-5"', '"gpt-6"')));
  });

  it('parses at once, with no head, where the checks do not apply or refuse the body', async () => {
    // Parsed already: bytes changed after the reader ran do not show up in the body.
    const spoil = (state: GatewayState): void => void (state.raw as BodyBytes).chunks[0]?.fill(0x20);
    const unchecked = await read(valid);
    expect(unchecked.head).to.equal(undefined);
    spoil(unchecked);
    expect(unchecked.body).to.deep.equal(JSON.parse(valid));
    const refused = await read(JSON.stringify({ model: 'x', messages: [] }), 'messages');
    expect(refused.head).to.equal(undefined);
    spoil(refused);
    expect(refused.body).to.deep.equal({ model: 'x', messages: [] });
  });

  it('keeps a body that came in chunks as those chunks, and reads it the same after another body was read (issue #17)', async () => {
    // Checked and parsed through a scratch Buffer shared by every request (body-bytes.ts): nothing
    // read from it may be kept past the read, or the next body would show through.
    const body = { model: 'claude-sonnet-4-6', max_tokens: 16, system: 'Be brief.', messages: [{ role: 'user', content: 'héllo '.repeat(40) }, { role: 'assistant', content: 'hi' }] };
    const text = JSON.stringify(body);
    const cut = (t: string): string[] => [t.slice(0, 50), t.slice(50, 120), t.slice(120)];
    const first = await read(text, 'messages', cut(text));
    expect((first.raw as BodyBytes).chunks.map((c) => c.toString())).to.deep.equal(cut(text));
    expect(first.head).to.deep.equal({ model: 'claude-sonnet-4-6', max_tokens: 16 });
    const other = JSON.stringify({ ...body, system: 'Something else entirely.', messages: [{ role: 'user', content: 'x'.repeat(300) }] });
    const second = await read(other, 'messages', cut(other));
    // The first request's estimate and body, read after the second body went through the scratch.
    first.route = { endpoint: 'messages' } as NonNullable<GatewayState['route']>;
    second.route = first.route;
    expect(await inputTokensOf(first)).to.equal(await inputTokensOf({ ...new RequestState('req_x', 0, 0, 'messages', {}), route: first.route, body } as unknown as GatewayState));
    expect(first.body).to.deep.equal(body);
    expect(second.body).to.deep.equal(JSON.parse(other));
    // Refused by the checks (a role they do not know): parsed at once, from the chunks as well.
    const refused = JSON.stringify({ ...body, messages: [{ role: 'bot', content: 'x'.repeat(200) }] });
    expect((await read(refused, 'messages', cut(refused))).body).to.deep.equal(JSON.parse(refused));
  });
});

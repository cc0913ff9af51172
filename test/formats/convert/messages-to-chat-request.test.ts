import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { DEFAULT_CHAT_DIALECT, type ChatDialect } from '../../../src/formats/convert/dialect.ts';
import { messagesToChatRequest } from '../../../src/formats/canonical/pairs.ts';
import { GatewayError } from '../../../src/errors.ts';

type Json = Record<string, unknown>;
const convert = (request: Json, dialect: Partial<ChatDialect> = {}, maxOutputTokens: number | null = null) =>
  messagesToChatRequest({ max_tokens: 100, ...request }, { model: 'up-model', dialect: { ...DEFAULT_CHAT_DIALECT, ...dialect }, maxOutputTokens });
const body = (request: Json, dialect: Partial<ChatDialect> = {}) => convert(request, dialect).body;
const user = (content: unknown) => ({ role: 'user', content });

describe('Messages request → Chat request (protocol.md §D.1, §D.2)', () => {
  it('maps model, max_tokens (in the dialect’s field), temperature, top_p, stop, user and streaming', () => {
    expect(
      body({ model: 'cat', max_tokens: 300, temperature: 0.2, top_p: 0.9, stop_sequences: ['END'], metadata: { user_id: 'u-1' }, stream: true, messages: [user('hi')] }),
    ).to.deep.equal({
      model: 'up-model',
      messages: [{ role: 'user', content: 'hi' }],
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      user: 'u-1',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(body({ messages: [user('hi')] }, { maxTokensField: 'max_tokens' })['max_tokens']).to.equal(100);
  });

  it('clamps max_tokens to the catalogue’s max_output_tokens (peers.md §2 #19)', () => {
    expect(convert({ max_tokens: 64000, messages: [user('hi')] }, {}, 8192).body['max_completion_tokens']).to.equal(8192);
    expect(convert({ max_tokens: 100, messages: [user('hi')] }, {}, 8192).body['max_completion_tokens']).to.equal(100);
  });

  it('turns system (string or blocks) into a leading system message', () => {
    expect(body({ system: 'Be brief.', messages: [user('hi')] })['messages']).to.deep.equal([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    const blocks = body({ system: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B', cache_control: { type: 'ephemeral', ttl: '1h' } }], messages: [user('hi')] });
    expect((blocks['messages'] as Json[])[0]).to.deep.equal({ role: 'system', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] });
  });

  it('keeps a system message inside messages in place', () => {
    const out = body({ messages: [user('hi'), { role: 'system', content: 'mid' }, { role: 'assistant', content: 'ok' }] })['messages'];
    expect(out).to.deep.equal([{ role: 'user', content: 'hi' }, { role: 'system', content: 'mid' }, { role: 'assistant', content: 'ok' }]);
  });

  it('keeps cache_control only for dialects that take it, and never its ttl (peers.md §2 #17)', () => {
    const request = { messages: [user([{ type: 'text', text: 'x', cache_control: { type: 'ephemeral', ttl: '1h' } }])] };
    expect(body(request)['messages']).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'x' }] }]);
    expect(body(request, { cacheControl: true })['messages']).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] },
    ]);
    expect(JSON.stringify(body(request, { cacheControl: true }))).not.to.include('ttl');
  });

  it('drops top_k for upstreams that refuse it and keeps it for those that take it', () => {
    expect(body({ top_k: 5, messages: [user('x')] })).not.to.have.property('top_k');
    expect(body({ top_k: 5, messages: [user('x')] }, { topK: true })['top_k']).to.equal(5);
  });

  it('converts images: base64 to a data URL, url to a url', () => {
    const out = body({
      messages: [
        user([
          { type: 'text', text: 'Look' },
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
          { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
        ]),
      ],
    })['messages'];
    expect(out).to.deep.equal([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
    ]);
  });

  it('converts documents: text source to text, PDF to a file part (or a note), URLs and unknown blocks to notes', () => {
    const docs = [
      { type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'hello' } },
      { type: 'document', title: 'Spec', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
      { type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } },
      { type: 'container_upload', file_id: 'f1' },
    ];
    const asFile = (body({ messages: [user(docs)] })['messages'] as Json[])[0]?.['content'];
    expect(asFile).to.deep.equal([
      { type: 'text', text: 'Document: Notes\n\nhello' },
      { type: 'file', file: { filename: 'Spec', file_data: 'data:application/pdf;base64,JVBERi0=' } },
      { type: 'text', text: '[document at https://x/a.pdf: this model cannot fetch documents by URL]' },
      { type: 'text', text: '[container_upload block: {"type":"container_upload","file_id":"f1"}]' },
    ]);
    const asText = (body({ messages: [user(docs)] }, { pdf: 'text' })['messages'] as Json[])[0]?.['content'] as Json[];
    expect(asText[1]).to.deep.equal({ type: 'text', text: '[PDF document "Spec" omitted: this model cannot read PDF files]' });
  });

  it('maps tools, tool_choice and disable_parallel_tool_use', () => {
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }];
    const expectedTools = [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: tools[0]!.input_schema } }];
    const cases: [Json, unknown][] = [
      [{ type: 'auto' }, 'auto'],
      [{ type: 'any' }, 'required'],
      [{ type: 'none' }, 'none'],
      [{ type: 'tool', name: 'get_weather' }, { type: 'function', function: { name: 'get_weather' } }],
    ];
    for (const [choice, expected] of cases) {
      const out = body({ tools, tool_choice: choice, messages: [user('x')] });
      expect(out['tools']).to.deep.equal(expectedTools);
      expect(out['tool_choice'], JSON.stringify(choice)).to.deep.equal(expected);
    }
    expect(body({ tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true }, messages: [user('x')] })['parallel_tool_calls']).to.equal(false);
  });

  it('refuses server tools with a 400 naming the tool, rather than dropping them', () => {
    expect(() => body({ tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [user('x')] }))
      .to.throw(GatewayError, /tools\.0: the web_search_20250305 tool runs on Anthropic's servers/);
  });

  it('places tool results right after the assistant tool_calls, before the user text of the same turn, ids kept', () => {
    const out = body({
      messages: [
        user('Weather in Paris and Rome?'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Rome' } },
          ],
        },
        user([
          { type: 'text', text: 'Also, be quick.' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '20 C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'timeout' }], is_error: true },
        ]),
      ],
    })['messages'];
    expect(out).to.deep.equal([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '20 C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '[tool error] timeout' },
      { role: 'user', content: [{ type: 'text', text: 'Also, be quick.' }] },
    ]);
  });

  it('moves images a tool returned into the following user message, labelled', () => {
    const out = body({
      messages: [
        user([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'shot' }, { type: 'image', source: { type: 'url', url: 'https://x/s.png' } }] }]),
      ],
    })['messages'];
    expect(out).to.deep.equal([
      { role: 'tool', tool_call_id: 't1', content: 'shot' },
      { role: 'user', content: [{ type: 'text', text: 'Images returned by tool call t1:' }, { type: 'image_url', image_url: { url: 'https://x/s.png' } }] },
    ]);
  });

  it('requests reasoning the way each dialect takes it', () => {
    const enabled = { thinking: { type: 'enabled', budget_tokens: 5000 }, messages: [user('x')] };
    expect(body(enabled)['reasoning_effort']).to.equal('high');
    expect(body({ ...enabled, thinking: { type: 'enabled', budget_tokens: 2048 } })['reasoning_effort']).to.equal('medium');
    expect(body({ ...enabled, thinking: { type: 'enabled', budget_tokens: 1024 } })['reasoning_effort']).to.equal('low');
    expect(body(enabled, { reasoning: 'reasoning_details' })['reasoning']).to.deep.equal({ max_tokens: 5000 });
    const adaptive = { thinking: { type: 'adaptive' }, output_config: { effort: 'high' }, messages: [user('x')] };
    expect(body(adaptive)['reasoning_effort']).to.equal('high');
    expect(body(adaptive, { reasoning: 'reasoning_details' })['reasoning']).to.deep.equal({ effort: 'high' });
    for (const reasoning of ['reasoning_content', 'none'] as const) {
      const out = body(enabled, { reasoning });
      expect(out).not.to.have.any.keys('reasoning', 'reasoning_effort');
    }
    expect(body({ thinking: { type: 'disabled' }, messages: [user('x')] })).not.to.have.any.keys('reasoning', 'reasoning_effort');
  });

  it('sends thinking back as the dialect takes it, signatures untouched', () => {
    const history = {
      messages: [
        user('x'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me think.', signature: 'SIG123' },
            { type: 'redacted_thinking', data: 'ENC' },
            { type: 'tool_use', id: 't1', name: 'f', input: {} },
          ],
        },
      ],
    };
    const openrouter = (body(history, { reasoning: 'reasoning_details' })['messages'] as Json[])[1];
    expect(openrouter).to.deep.include({
      reasoning: 'Let me think.',
      reasoning_details: [
        { type: 'reasoning.text', text: 'Let me think.', signature: 'SIG123', format: 'anthropic-claude-v1', index: 0 },
        { type: 'reasoning.encrypted', data: 'ENC', format: 'anthropic-claude-v1', index: 1 },
      ],
    });
    expect((body(history, { reasoning: 'reasoning_content' })['messages'] as Json[])[1]).to.deep.include({ reasoning_content: 'Let me think.' });
    expect((body(history)['messages'] as Json[])[1]).not.to.have.any.keys('reasoning', 'reasoning_details', 'reasoning_content');
  });

  it('shortens tool names OpenAI would refuse, reversibly, everywhere they appear', () => {
    const long = `mcp__${'very_long_server_name_'.repeat(3)}__do.the-thing`;
    const { body: out, toolNames } = convert({
      tools: [{ name: long, input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: long },
      messages: [user('x'), { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: long, input: {} }] }],
    });
    const name = ((out['tools'] as Json[])[0]?.['function'] as Json)['name'] as string;
    expect(name).to.match(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(name).not.to.equal(long);
    expect((out['tool_choice'] as { function: { name: string } }).function.name).to.equal(name);
    expect(JSON.stringify(out['messages'])).to.include(name);
    expect(toolNames.client(name)).to.equal(long);
  });

  it('refuses server-side MCP servers, which a Chat upstream cannot run', () => {
    expect(() => body({ mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }], messages: [user('x')] })).to.throw(GatewayError, /mcp_servers/);
  });

  it('refuses more than 4 stop sequences, which Chat upstreams reject', () => {
    expect(() => body({ stop_sequences: ['a', 'b', 'c', 'd', 'e'], messages: [user('x')] })).to.throw(GatewayError, /stop_sequences/);
  });

  it('maps structured output to response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    expect(body({ output_config: { format: { type: 'json_schema', schema } }, messages: [user('x')] })['response_format']).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'structured_output', schema },
    });
  });

  it('converts the real Claude Code request: 24 functions, the mid-conversation system message, reasoning, no Anthropic-only fields', () => {
    const request = JSON.parse(readFileSync(new URL('../../fixtures/claude-code/claude-code-request.json', import.meta.url), 'utf8')) as Json;
    const out = body(request);
    const tools = out['tools'] as { type: string; function: { name: string; parameters: unknown } }[];
    expect(tools).to.have.length(24);
    expect(tools.every((t) => t.type === 'function' && typeof t.function.parameters === 'object')).to.equal(true);
    expect((out['messages'] as Json[]).map((m) => m['role'])).to.deep.equal(['system', 'user', 'system']);
    expect(out['reasoning_effort']).to.equal('high');
    expect(out['max_completion_tokens']).to.equal(64000);
    expect(out).not.to.have.any.keys('context_management', 'output_config', 'thinking', 'metadata', 'system', 'tool_choice');
    expect(JSON.stringify(out)).not.to.include('cache_control');
  });
});

import { expect } from 'chai';
import { once, EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHAT_HEADERS, call, MESSAGES_HEADERS, standardConfig, useUpstreamAndGateway } from '../support/gateway.ts';

/**
 * Traces (issue #16; operations.md §2) against a local OTLP/HTTP receiver: one SERVER span per
 * request continuing the client's `traceparent`, with children for the hold, the upstream attempt
 * (CLIENT, `{operation} {model}`, GenAI attributes) and the settlement; the attempt's context is
 * what goes upstream. Never a key or prompt text in a span.
 */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
const SERVER = 2;
const CLIENT = 3;

class OtlpReceiver extends EventEmitter {
  readonly spans: OtlpSpan[] = [];
  readonly bodies: string[] = [];
  readonly #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      this.bodies.push(text);
      const body = JSON.parse(text) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) this.spans.push(...scope.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      this.emit('spans');
    });
  });
  url = '';
  async start(): Promise<this> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }
  /** Resolves once spans named as asked have arrived. */
  async until(check: () => boolean): Promise<void> {
    while (!check()) await once(this, 'spans');
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const attribute = (span: OtlpSpan, key: string): string | number | undefined => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

describe('traces over OTLP/HTTP', function () {
  this.timeout(20_000);
  const receiver = new OtlpReceiver();
  before(() => receiver.start());
  after(() => receiver.close());
  const env = useUpstreamAndGateway((url) => `${standardConfig(url)}\ntelemetry: { otlp_endpoint: "${receiver.url}", service_name: junction-test }\n`);

  it('a request continues the client\'s trace: hold, attempt and settlement under it, and the attempt\'s context sent upstream', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parent = 'b7ad6b7169203331';
    const res = await call(`${env.gw.url}/v1/messages`, { headers: { ...MESSAGES_HEADERS, traceparent: `00-${traceId}-${parent}-01` }, body: { model: 'claude-sonnet-4-6', max_tokens: 5, messages: [{ role: 'user', content: 'PROMPT-CANARY-trace' }] } });
    expect(res.status).to.equal(200);
    await receiver.until(() => receiver.spans.some((s) => s.traceId === traceId && s.kind === SERVER));
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.parentSpanId).to.equal(parent);
    expect(server.name).to.equal('POST /v1/messages');
    expect(attribute(server, 'gen_ai.request.model')).to.equal('claude-sonnet-4-6');
    expect(attribute(server, 'gen_ai.usage.input_tokens')).to.equal(12);
    expect(attribute(server, 'http.response.status_code')).to.equal(200);
    const children = spans.filter((s) => s.parentSpanId === server.spanId);
    expect(children.map((s) => s.name).sort()).to.deep.equal(['junction.hold', 'junction.settle', 'messages claude-sonnet-4-6-20260217'].sort());
    const attempt = children.find((s) => s.kind === CLIENT)!;
    expect(attribute(attempt, 'gen_ai.provider.name')).to.equal('anthropic');
    // What the upstream got: this trace, with the attempt as its parent.
    expect(env.upstream.last().headers['traceparent']).to.equal(`00-${traceId}-${attempt.spanId}-01`);
    const all = receiver.bodies.join('\n');
    expect(all).not.to.include('PROMPT-CANARY').and.not.include(String(MESSAGES_HEADERS['x-api-key']));
  });

  it('a translated request\'s attempt sends its context upstream too', async () => {
    const res = await call(`${env.gw.url}/v1/chat/completions`, { headers: { ...CHAT_HEADERS }, body: { model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(res.status).to.equal(200);
    const sent = String(env.upstream.last().headers['traceparent']);
    expect(sent).to.match(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const traceId = sent.split('-')[1]!;
    await receiver.until(() => receiver.spans.some((s) => s.traceId === traceId && s.kind === SERVER));
    const attempt = receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT)!;
    expect(sent.split('-')[2]).to.equal(attempt.spanId);
  });
});

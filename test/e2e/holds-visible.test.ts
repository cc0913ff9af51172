import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { call, KEYS, LogCapture, MESSAGES_HEADERS } from '../support/gateway.ts';
import { limiterBackends } from '../support/services.ts';
import { junction } from '../support/cli.ts';

const ADMIN = 'adm-0123456789abcdefghijklmnop';
type Json = Record<string, unknown>;

/**
 * Issue #12: with `redis` set, a running request's hold lives in Redis, and `GET /admin/keys`,
 * `/v1/balance` and `junction keys list` showed `held_usd: 0`. Each must show the real amount held,
 * wherever holds live. The request holds exactly $1 (1,000 output tokens at $1,000 per million, free
 * input) while an upstream stream is held open; once it ends, nothing is held.
 */
describe('holds are visible wherever they live (issue #12)', () => {
  for (const backend of limiterBackends('the visible-holds suite')) {
    describe(`holds in ${backend.name === 'Redis' ? 'Redis' : 'the store'}`, () => {
      let gateway: Gateway;
      let url: string;
      let file: string;
      let upstream: http.Server;
      /** Opens when the upstream has the request (the hold is taken before dispatch). */
      let arrived: Promise<void>;
      /** Lets the upstream finish its stream. */
      let finish: () => void = () => undefined;

      before(async () => {
        upstream = http.createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n');
            res.write('event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
            signalArrival();
            gate.then(() =>
              res.end(
                'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n' +
                  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
                  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}\n\n' +
                  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
              ),
            );
          });
        });
        await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
        const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
        const dir = mkdtempSync(path.join(tmpdir(), 'junction-holds-'));
        file = path.join(dir, 'gateway.yaml');
        writeFileSync(
          file,
          `storage: { url: "sqlite://ledger.db" }
auth:
  admin_key: "${ADMIN}"
  keys: [{ name: alice, key: "${KEYS.alice}", balance_usd: 10 }]
providers: [{ id: anthropic, plugin: anthropic, base_url: "${upstreamUrl}", api_key: sk-ant-test }]
models: [{ id: claude, routes: [{ provider: anthropic }], pricing: { input: 0, output: 1000 } }]
${backend.yaml()}`,
        );
        gateway = await createGateway(loadConfig(file), { logDestination: new LogCapture() });
        url = `http://127.0.0.1:${(await gateway.listen('127.0.0.1', 0)).port}`;
      });
      after(async () => {
        await gateway.close();
        upstream.closeAllConnections();
        await new Promise((resolve) => upstream.close(resolve));
      });

      let signalArrival: () => void = () => undefined;
      let gate: Promise<void> = Promise.resolve();
      beforeEach(() => {
        arrived = new Promise((resolve) => (signalArrival = resolve));
        gate = new Promise((resolve) => (finish = resolve));
      });

      const heldOnAdmin = async (): Promise<unknown> => {
        const res = await call(`${url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } });
        return (res.json()['data'] as Json[]).find((k) => k['name'] === 'alice')?.['held_usd'];
      };
      const heldOnBalance = async (): Promise<unknown> =>
        (await call(`${url}/v1/balance`, { headers: { authorization: `Bearer ${KEYS.alice}` } })).json()['held_usd'];
      const heldOnCli = async (): Promise<string | undefined> => {
        const { stdout } = await junction('keys', 'list', '--config', file);
        const [header, ...rows] = stdout.trim().split('\n');
        const column = header?.split(/\s{2,}/).indexOf('HELD') ?? -1;
        return rows.find((r) => r.startsWith('alice '))?.split(/\s{2,}/)[column];
      };

      it('shows a running stream’s hold on /admin/keys, /v1/balance and junction keys list, and none once it ends', async () => {
        const response = fetch(`${url}/v1/messages`, {
          method: 'POST',
          headers: { ...MESSAGES_HEADERS, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'claude', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        });
        await arrived;
        expect(await heldOnAdmin()).to.equal(1);
        expect(await heldOnBalance()).to.equal(1);
        expect(await heldOnCli()).to.equal('$1');

        finish();
        const res = await response;
        const requestId = res.headers.get('x-request-id') ?? '';
        expect(await res.text()).to.include('message_stop');
        // Waits for this request's settlement (read-your-writes), which releases the hold.
        expect((await call(`${url}/v1/generations/${requestId}`, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status).to.equal(200);
        expect(await heldOnAdmin()).to.equal(0);
        expect(await heldOnBalance()).to.equal(0);
        expect(await heldOnCli()).to.equal('$0');
      });
    });
  }
});

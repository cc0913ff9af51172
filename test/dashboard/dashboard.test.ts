import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { call, KEYS, standardConfig, startGateway, type TestGateway } from '../support/gateway.ts';
import { ADMIN, DashboardClient, dashboardConfig } from './client.ts';

type Json = Record<string, unknown>;
const PAGES = ['/dashboard/', '/dashboard/keys', '/dashboard/usage', '/dashboard/requests', '/dashboard/catalogue', '/dashboard/health', '/dashboard/audit'];

describe('dashboard over HTTP (/dashboard)', () => {
  let gw: TestGateway;
  const keyList = async (): Promise<Json[]> => (await call(`${gw.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()['data'] as Json[];
  const keyNamed = async (name: string): Promise<Json | undefined> => (await keyList()).find((k) => k['name'] === name);
  const signedIn = async (): Promise<DashboardClient> => {
    const client = new DashboardClient(gw.url);
    expect((await client.login()).status).to.equal(303);
    return client;
  };

  before(async () => {
    gw = await startGateway(dashboardConfig());
  });
  after(() => gw.close());

  it('is not there without auth.admin_key: 404, as /admin', async () => {
    const plain = await startGateway(standardConfig('http://127.0.0.1:9'));
    try {
      const client = new DashboardClient(plain.url);
      for (const path of ['/dashboard/login', '/dashboard/keys', '/dashboard/style.css']) expect((await client.get(path)).status, path).to.equal(404);
      expect((await client.login('anything-at-all-0123456789')).status).to.equal(404);
    } finally {
      await plain.close();
    }
  });

  it('sends every page to the login page without a session, and a form too, changing nothing', async () => {
    const client = new DashboardClient(gw.url);
    for (const path of PAGES) {
      const res = await client.get(path);
      expect(res.status, path).to.equal(303);
      expect(res.headers.get('location'), path).to.equal(`/dashboard/login?next=${encodeURIComponent(path)}`);
    }
    const before = await keyNamed('alice');
    const res = await client.post('/dashboard/keys/topup', { name: 'alice', usd: '5' });
    expect([res.status, res.headers.get('location')]).to.deep.equal([303, '/dashboard/login']);
    expect(await keyNamed('alice')).to.deep.equal(before);
    const login = await client.get('/dashboard/login');
    expect(login.status).to.equal(200);
    expect(login.headers.get('content-type')).to.match(/^text\/html/);
    expect(login.text).to.include('name="admin_key"').and.include('type="password"');
  });

  it('refuses a wrong key, a user key and no key at the login, setting no cookie', async () => {
    for (const key of ['adm-wrong-0123456789abcdefghijkl', KEYS.alice, '']) {
      const res = await new DashboardClient(gw.url).login(key);
      expect(res.status, key).to.equal(401);
      expect(res.headers.get('set-cookie'), key).to.equal(null);
      expect(res.text).to.include('that is not the admin key');
    }
  });

  it('refuses a forged or tampered session cookie', async () => {
    const client = await signedIn();
    const [name, token] = client.cookie.split('=') as [string, string];
    const [issued, mac] = token.split('.') as [string, string];
    // Another issue time under the same MAC (Date.now() could equal the login's own millisecond).
    for (const cookie of [`${name}=${Number(issued) + 1}.${mac}`, `${name}=${issued}.${'A'.repeat(43)}`, `${name}=${ADMIN}`, `${name}=`]) {
      client.cookie = cookie;
      expect((await client.get('/dashboard/keys')).status, cookie).to.equal(303);
    }
  });

  it('logs in with a cookie that is HttpOnly, SameSite=Strict, for /dashboard, holding no key; Secure when the page is https', async () => {
    const client = new DashboardClient(gw.url);
    const res = await client.login();
    expect(res.headers.get('location')).to.equal('/dashboard/keys');
    const cookie = String(res.headers.get('set-cookie'));
    expect(cookie).to.match(/^junction_session=\d+\.[\w-]{43}; /);
    for (const flag of ['HttpOnly', 'SameSite=Strict', 'Path=/dashboard']) expect(cookie).to.include(flag);
    // Plain HTTP on a loopback port: a Secure cookie would never come back.
    expect(cookie).not.to.include('Secure');
    const digest = createHash('sha256').update(ADMIN).digest();
    for (const secret of [ADMIN, digest.toString('hex'), digest.toString('base64url')]) expect(cookie).not.to.include(secret);
    expect((await client.get('/dashboard/keys')).status).to.equal(200);
    // Behind a proxy that ends TLS the browser's origin is https: the cookie is Secure.
    const host = new URL(gw.url).host;
    const proxied = await new DashboardClient(gw.url).post('/dashboard/login', { admin_key: ADMIN }, { origin: `https://${host}` });
    expect(proxied.headers.get('set-cookie')).to.match(/; Secure$/);
  });

  it('goes back to the page asked for after the login, never to another site', async () => {
    const client = new DashboardClient(gw.url);
    const back = await client.post('/dashboard/login', { admin_key: ADMIN, next: '/dashboard/usage?range=24h' });
    expect(back.headers.get('location')).to.equal('/dashboard/usage?range=24h');
    const away = await client.post('/dashboard/login', { admin_key: ADMIN, next: 'https://evil.example/' });
    expect(away.headers.get('location')).to.equal('/dashboard/keys');
  });

  it('serves pages with a strict CSP, no framing and no caching', async () => {
    const res = await (await signedIn()).get('/dashboard/keys');
    expect(res.headers.get('content-security-policy')).to.include("default-src 'none'").and.include("frame-ancestors 'none'").and.include("form-action 'self'");
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('referrer-policy')).to.equal('same-origin');
    expect(res.text).not.to.match(/<script|style="/);
  });

  it('refuses forms from another site (CSRF): Sec-Fetch-Site cross-site, a foreign Origin, or neither; nothing changes', async () => {
    const client = await signedIn();
    await client.post('/dashboard/keys', { name: 'csrf-target', balance_usd: '1' });
    const before = await keyNamed('csrf-target');
    for (const headers of [
      { 'sec-fetch-site': 'cross-site', origin: 'http://evil.example' },
      { 'sec-fetch-site': 'same-site', origin: gw.url },
      { origin: 'http://evil.example' },
      { origin: 'null' },
      {},
    ]) {
      for (const [path, fields] of [['/dashboard/keys/topup', { name: 'csrf-target', usd: '50' }], ['/dashboard/keys/disable', { name: 'csrf-target' }], ['/dashboard/keys', { name: 'csrf-new' }]] as const) {
        const res = await client.post(path, fields, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).to.equal(403);
        expect(res.text).to.include('GW_ERR_DASHBOARD_CROSS_SITE');
      }
    }
    expect(await keyNamed('csrf-target')).to.deep.equal(before);
    expect(await keyNamed('csrf-new')).to.equal(undefined);
    // The same form from the dashboard's own page goes through.
    expect((await client.post('/dashboard/keys/topup', { name: 'csrf-target', usd: '1' }, { 'sec-fetch-site': 'same-origin' })).status).to.equal(303);
    expect(await keyNamed('csrf-target')).to.deep.include({ balance_usd: 2 });
  });

  it('creates a key shown once, then tops it up, disables and enables it from forms', async () => {
    const client = await signedIn();
    const created = await client.post('/dashboard/keys', { name: 'web-1', balance_usd: '3', models: 'demo, gpt-*', rpm: '30' });
    expect(created.status).to.equal(200);
    const key = /id="new-key">([^<]+)</.exec(created.text)?.[1] ?? '';
    expect(key).to.match(/^sk-jct-[\w-]{32}$/);
    expect(await keyNamed('web-1')).to.deep.include({ balance_usd: 3, models: ['demo', 'gpt-*'], rpm: 30, status: 'active' });
    expect((await client.get('/dashboard/keys')).text).to.include('web-1').and.not.include(key);

    const topped = await client.post('/dashboard/keys/topup', { name: 'web-1', usd: '1.5' });
    expect([topped.status, topped.headers.get('location')]).to.deep.equal([303, '/dashboard/keys?done=topup&key=web-1']);
    expect((await client.get(String(topped.headers.get('location')))).text).to.include('Topped up web-1.');
    await client.post('/dashboard/keys/disable', { name: 'web-1' });
    expect(await keyNamed('web-1')).to.deep.include({ balance_usd: 4.5, status: 'disabled' });
    await client.post('/dashboard/keys/enable', { name: 'web-1' });
    expect(await keyNamed('web-1')).to.deep.include({ status: 'active' });
  });

  it('answers a refused form on the keys page with the reason', async () => {
    const client = await signedIn();
    const cases = [
      [{ name: 'alice', usd: 'lots' }, '/dashboard/keys/topup', 400, 'must be an amount in USD'],
      [{ name: 'nobody', usd: '1' }, '/dashboard/keys/topup', 404, 'no key named &quot;nobody&quot;'],
      [{ name: 'restricted', usd: '1' }, '/dashboard/keys/topup', 400, 'unlimited'],
      [{ name: 'alice' }, '/dashboard/keys', 400, 'already exists'],
      [{ name: 'bad name!' }, '/dashboard/keys', 400, 'a key name is'],
      [{ name: 'x1', rpm: '-3' }, '/dashboard/keys', 400, 'rpm must be a positive whole number'],
    ] as const;
    for (const [fields, path, status, reason] of cases) {
      const res = await client.post(path, fields);
      expect(res.status, JSON.stringify(fields)).to.equal(status);
      expect(res.text, JSON.stringify(fields)).to.include('notice error').and.include(reason);
    }
  });

  it('escapes what a request writes back into a page', async () => {
    const res = await (await signedIn()).get(`/dashboard/requests?id=${encodeURIComponent('"><script>x</script>')}`);
    expect(res.text).to.include('&quot;&gt;&lt;script&gt;x&lt;/script&gt;').and.not.include('<script>x');
  });

  it('logs out: the cookie is deleted', async () => {
    const client = await signedIn();
    const res = await client.post('/dashboard/logout', {});
    expect([res.status, res.headers.get('location')]).to.deep.equal([303, '/dashboard/login']);
    expect(res.headers.get('set-cookie')).to.match(/^junction_session=; Path=\/dashboard; Max-Age=0; HttpOnly; SameSite=Strict/);
  });
});

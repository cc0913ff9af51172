import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { call, MESSAGES_HEADERS, msUntilStatus, startGateway, type TestGateway } from '../support/gateway.ts';
import { chromiumFound, launchChromium, sayChromiumSkipped } from './chromium.ts';
import { ADMIN, dashboardConfig } from './client.ts';

const SUITE = 'the dashboard in a real browser';
if (!chromiumFound()) sayChromiumSkipped(SUITE);

/**
 * Issue #16, part 3, in headless Chromium: the pages as a browser gets them, with its cookie rules
 * (SameSite, HttpOnly), its Origin and Sec-Fetch-Site headers and the page's CSP all real. Each test
 * has a browser context of its own (its own cookies); any console error (a CSP violation included)
 * or page error in it fails the test.
 */
(chromiumFound() ? describe : describe.skip)(SUITE, function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  const at = (path: string) => `${gw.url}${path}`;
  const pathOf = () => new URL(page.url()).pathname;
  const signIn = async () => {
    await page.goto(at('/dashboard/keys'));
    await page.fill('input[name=admin_key]', ADMIN);
    await Promise.all([page.waitForURL('**/dashboard/keys'), page.click('button:has-text("Sign in")')]);
  };
  const newKey = async (name: string) => String((await call(at('/admin/keys'), { headers: { authorization: `Bearer ${ADMIN}` }, body: { name, balance_usd: 1 } })).json()['key']);

  before(async () => {
    gw = await startGateway(dashboardConfig());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext();
    page = await context.newPage();
    problems = [];
    // Expected: a refused login's 401, which Chromium reports as a resource that failed to load.
    page.on('console', (m) => void (m.type() === 'error' && !m.text().includes('status of 401') && problems.push(`${m.text()} (${m.location().url})`)));
    page.on('pageerror', (e) => void problems.push(e.message));
  });
  afterEach(async () => {
    await context.close();
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });

  it('refuses without the admin key: every page leads to the login, and a wrong key is turned away', async () => {
    for (const path of ['/dashboard/keys', '/dashboard/requests', '/dashboard/usage']) {
      await page.goto(at(path));
      expect(pathOf(), path).to.equal('/dashboard/login');
    }
    await page.fill('input[name=admin_key]', 'adm-not-the-key-0123456789abcdef');
    const [refused] = await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sign in")')]);
    expect(refused?.status()).to.equal(401);
    expect(await page.textContent('.notice.error')).to.include('that is not the admin key');
    expect(await context.cookies()).to.deep.equal([]);
    await page.goto(at('/dashboard/keys'));
    expect(pathOf()).to.equal('/dashboard/login');
  });

  it('logs in, creates a key, tops it up, and shows the traffic it sends on the requests page', async () => {
    await signIn();
    const [cookie] = await context.cookies();
    expect(cookie).to.deep.include({ name: 'junction_session', path: '/dashboard', httpOnly: true, sameSite: 'Strict', secure: false });

    await page.fill('form[action="/dashboard/keys"] input[name=name]', 'browser-1');
    await page.fill('input[name=balance_usd]', '1');
    await page.fill('input[name=models]', 'demo');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create key")')]);
    const key = (await page.textContent('#new-key')) ?? '';
    expect(key).to.match(/^sk-jct-[\w-]{32}$/);

    const row = page.locator('tr[data-key="browser-1"]');
    await row.locator('input[name=usd]').fill('2.5');
    await Promise.all([page.waitForURL('**/dashboard/keys?done=topup&key=browser-1'), row.locator('button:has-text("Top up")').click()]);
    expect(await page.textContent('.notice.ok')).to.include('Topped up browser-1.');
    expect(await row.locator('td.num').first().textContent()).to.equal('$3.5');
    expect(await page.content()).not.to.include(key);

    // The new key works within a second (the key cache), on the offline demo model.
    expect(await msUntilStatus(gw.url, key, 200)).to.be.below(1500);
    const res = await call(at('/v1/messages'), {
      headers: { ...MESSAGES_HEADERS, 'x-api-key': key },
      body: { model: 'demo', max_tokens: 16, messages: [{ role: 'user', content: 'hello from the browser test' }] },
    });
    expect(res.status).to.equal(200);
    const requestId = String(res.headers.get('x-request-id'));

    await page.click('nav a:has-text("Requests")');
    await page.fill('input[name=id]', requestId);
    await Promise.all([page.waitForURL(`**/dashboard/requests?id=${requestId}*`), page.click('button:has-text("Search")')]);
    const found = page.locator(`tr[data-request="${requestId}"]`);
    expect(await found.count()).to.equal(1);
    expect(await found.textContent()).to.include('browser-1').and.include('demo').and.include('mock').and.include('in-process').and.include('ok');
  });

  it('draws the usage charts, the catalogue, provider health and the audit', async () => {
    expect((await call(at('/v1/messages'), { headers: MESSAGES_HEADERS, body: { model: 'demo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } })).status).to.equal(200);
    await signIn();
    await page.goto(at('/dashboard/usage?range=24h'));
    expect(await page.locator('.chart svg rect').count()).to.be.greaterThan(0);
    expect(await page.locator('.chart h2').allTextContents()).to.deep.equal(['Spend by model', 'Requests by model', 'Spend by key', 'Requests by key']);
    await page.goto(at('/dashboard/catalogue'));
    expect(await page.locator('tr[data-model="demo"]').textContent()).to.include('mock: demo');
    await page.goto(at('/dashboard/health'));
    expect(await page.locator('tr[data-provider="mock"]').textContent()).to.include('all closed');
    await page.goto(at('/dashboard/audit'));
    expect(await page.textContent('#audit')).to.include('session.login').and.include('dashboard');
  });

  it('refuses a form another site posts, though the browser sends the cookie (CSRF)', async () => {
    await newKey('browser-csrf');
    await signIn();
    // Another port on 127.0.0.1 is another origin but the same site, so SameSite lets the cookie
    // through: the Sec-Fetch-Site check is what stops the form.
    const attacker = http.createServer((_, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<form method="post" action="${at('/dashboard/keys/disable')}"><input name="name" value="browser-csrf"></form><script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const evil = await context.newPage();
      const answer = evil.waitForResponse((r) => r.url().endsWith('/dashboard/keys/disable'));
      await evil.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      expect((await answer).status()).to.equal(403);
      await evil.close();
      await page.goto(at('/dashboard/keys'));
      expect(await page.locator('tr[data-key="browser-csrf"] .badge').textContent()).to.equal('active');
    } finally {
      attacker.close();
    }
  });

  it('logs out: the cookie is gone and the pages lead to the login again', async () => {
    await signIn();
    await Promise.all([page.waitForURL('**/dashboard/login'), page.click('nav button:has-text("Log out")')]);
    expect(await context.cookies()).to.deep.equal([]);
    await page.goto(at('/dashboard/usage'));
    expect(pathOf()).to.equal('/dashboard/login');
  });
});

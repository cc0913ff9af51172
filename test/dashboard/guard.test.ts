import { expect } from 'chai';
import { isSameOrigin, safeNext } from '../../src/dashboard/guard.ts';

const request = (headers: Record<string, string>, host = 'gw.example:8080') => ({ host, get: (name: string) => headers[name.toLowerCase()] ?? '' });

describe('dashboard CSRF guard', () => {
  it('goes by Sec-Fetch-Site when the browser sends it', () => {
    expect(isSameOrigin(request({ 'sec-fetch-site': 'same-origin' }))).to.equal(true);
    for (const site of ['cross-site', 'same-site', 'none']) expect(isSameOrigin(request({ 'sec-fetch-site': site, origin: 'http://gw.example:8080' })), site).to.equal(false);
  });

  it('else needs an Origin naming this host (any scheme: a proxy may end TLS)', () => {
    expect(isSameOrigin(request({ origin: 'http://gw.example:8080' }))).to.equal(true);
    expect(isSameOrigin(request({ origin: 'https://gw.example:8080' }))).to.equal(true);
    for (const origin of ['http://evil.example', 'http://gw.example:8081', 'http://gw.example:8080.evil.example', 'null', 'not a url']) {
      expect(isSameOrigin(request({ origin })), origin).to.equal(false);
    }
  });

  it('refuses a form that says nothing of where it comes from', () => {
    expect(isSameOrigin(request({}))).to.equal(false);
  });

  it('goes back after login to dashboard pages only', () => {
    expect(safeNext('/dashboard/requests?id=req_1')).to.equal('/dashboard/requests?id=req_1');
    for (const next of ['https://evil.example/', '//evil.example', '/dashboard//evil.example', '/admin/keys', '/dashboard/x?a=<b>', undefined, 7]) {
      expect(safeNext(next), String(next)).to.equal('/dashboard/keys');
    }
  });
});

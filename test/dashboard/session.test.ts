import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { DashboardSessions, endedSessionCookie, SESSION_COOKIE, SESSION_TTL_MS, sessionCookie } from '../../src/dashboard/session.ts';

const digest = (key: string) => createHash('sha256').update(key).digest('hex');
const ADMIN = digest('adm-0123456789abcdefghijklmnop');
const NOW = Date.parse('2026-11-22T10:00:00Z');

describe('dashboard sessions', () => {
  it('accepts its own token until it expires, and not one issued in the future', () => {
    const sessions = new DashboardSessions(ADMIN);
    const token = sessions.issue(NOW);
    expect(sessions.isValid(token, NOW)).to.equal(true);
    expect(sessions.isValid(token, NOW + SESSION_TTL_MS)).to.equal(true);
    expect(sessions.isValid(token, NOW + SESSION_TTL_MS + 1)).to.equal(false);
    expect(sessions.isValid(sessions.issue(NOW + 10 * 60_000), NOW)).to.equal(false);
  });

  it('is accepted by another process with the same admin key (serve --workers), and by none with another key', () => {
    const token = new DashboardSessions(ADMIN).issue(NOW);
    expect(new DashboardSessions(ADMIN).isValid(token, NOW)).to.equal(true);
    expect(new DashboardSessions(digest('adm-another-key-0123456789abcdef')).isValid(token, NOW)).to.equal(false);
  });

  it('refuses a token whose time or signature was changed, and anything malformed', () => {
    const sessions = new DashboardSessions(ADMIN);
    const [issued, mac] = sessions.issue(NOW).split('.') as [string, string];
    expect(sessions.isValid(`${Number(issued) + 1}.${mac}`, NOW)).to.equal(false);
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    expect(sessions.isValid(`${issued}.${flipped}`, NOW)).to.equal(false);
    for (const bad of [undefined, '', issued, `${issued}.`, `.${mac}`, `${issued}.${mac}x`, `x${issued}.${mac}`, `${issued}.${mac}.${mac}`]) {
      expect(sessions.isValid(bad, NOW), String(bad)).to.equal(false);
    }
  });

  it('carries neither the admin key nor its digest', () => {
    const token = new DashboardSessions(ADMIN).issue(NOW);
    expect(token).not.to.include(ADMIN);
    expect(token).not.to.include(Buffer.from(ADMIN, 'hex').toString('base64url'));
    expect(token).to.match(/^\d+\.[\w-]{43}$/);
  });

  it('sets the cookie HttpOnly, SameSite=Strict, for /dashboard only, and Secure only over TLS', () => {
    const plain = sessionCookie('t', false);
    expect(plain).to.match(new RegExp(`^${SESSION_COOKIE}=t;`));
    for (const flag of ['HttpOnly', 'SameSite=Strict', 'Path=/dashboard', `Max-Age=${SESSION_TTL_MS / 1000}`]) expect(plain).to.include(flag);
    expect(plain).not.to.include('Secure');
    expect(sessionCookie('t', true)).to.match(/; Secure$/);
    expect(endedSessionCookie(false)).to.include('Max-Age=0').and.include('Path=/dashboard');
  });
});

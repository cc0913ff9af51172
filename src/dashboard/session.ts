import { createHmac, timingSafeEqual } from 'node:crypto';

/** The cookie that carries a dashboard session. */
export const SESSION_COOKIE = 'junction_session';
/** How long a login lasts. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
/** A token issued by a process whose clock runs this far ahead is still taken. */
const CLOCK_SKEW_MS = 60_000;

/**
 * Dashboard sessions (issue #16): `<issued at, ms>.<HMAC-SHA256 of it>`, with no state on the
 * server. The HMAC key is derived from the admin key's SHA-256, so every `--workers` process and
 * every instance sharing the admin key accepts a session any of them made, and changing the admin
 * key ends every session. A token carries neither the admin key nor its digest. Being stateless,
 * a session cannot be revoked alone: logging out deletes the cookie, and it expires in 12 hours.
 */
export class DashboardSessions {
  readonly #key: Buffer;

  constructor(adminKeySha256: string) {
    this.#key = createHmac('sha256', Buffer.from(adminKeySha256, 'hex')).update('junction dashboard session v1').digest();
  }

  issue(now: number): string {
    const issued = String(Math.floor(now));
    return `${issued}.${this.#mac(issued)}`;
  }

  isValid(token: string | undefined, now: number): boolean {
    const match = /^(\d{1,15})\.([\w-]{43})$/.exec(token ?? '');
    if (!match?.[1] || !match[2]) return false;
    const issued = Number(match[1]);
    if (issued > now + CLOCK_SKEW_MS || now - issued > SESSION_TTL_MS) return false;
    return timingSafeEqual(Buffer.from(match[2]), Buffer.from(this.#mac(match[1])));
  }

  #mac(issued: string): string {
    return createHmac('sha256', this.#key).update(issued).digest('base64url');
  }
}

/**
 * The Set-Cookie value: only for /dashboard, out of reach of scripts, never sent on a request
 * another site starts, and over TLS only when the page was served over TLS.
 */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/dashboard; Max-Age=${SESSION_TTL_MS / 1000}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that deletes the session cookie (logout). */
export function endedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/dashboard; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

import { standardConfig } from '../support/gateway.ts';

/** The admin key of the dashboard suites (24+ characters, as the config requires). */
export const ADMIN = 'adm-dashboard-0123456789abcdefgh';

/** The standard test config with the admin key set, which turns on /admin and /dashboard. */
export function dashboardConfig(extra = ''): string {
  return standardConfig('http://127.0.0.1:9', extra).replace('auth:\n', `auth:\n  admin_key: "${ADMIN}"\n`);
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/**
 * A browser's requests without a browser: forms url-encoded, redirects not followed (the tests
 * read them), the session cookie kept once logged in, and `Origin` set as a browser sets it.
 */
export class DashboardClient {
  readonly url: string;
  cookie = '';

  constructor(url: string) {
    this.url = url;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.#send('GET', path, undefined, headers);
  }

  post(path: string, fields: Record<string, string>, headers: Record<string, string> = { origin: this.url }): Promise<Answer> {
    return this.#send('POST', path, new URLSearchParams(fields).toString(), { 'content-type': 'application/x-www-form-urlencoded', ...headers });
  }

  /** Logs in with `key`; keeps the session cookie when one is set. */
  async login(key: string = ADMIN): Promise<Answer> {
    const answer = await this.post('/dashboard/login', { admin_key: key });
    const cookie = answer.headers.get('set-cookie');
    if (cookie !== null) this.cookie = cookie.split(';')[0] ?? '';
    return answer;
  }

  async #send(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<Answer> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      redirect: 'manual',
      headers: { ...(this.cookie !== '' && { cookie: this.cookie }), ...headers },
      ...(body !== undefined && { body }),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}

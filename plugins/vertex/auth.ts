import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GoogleAuth, JWT, type AuthClient } from 'google-auth-library';

/**
 * Google OAuth access tokens for Vertex AI (providers.md §2.4), with google-auth-library: one
 * client per credential, built once; the library signs the service account's JWT, caches the token
 * and fetches a new one five minutes before it expires, never per request. Headers are asked for
 * per request, and a 401 drops the cached token so the request can be sent once more.
 *
 * A service-account file's own `token_uri` is where its tokens come from (private Google
 * endpoints; tests). google-auth-library 10 ignores it (its token URL is fixed in its vendored
 * gtoken), so its HTTP client is given an interceptor that sends the token request there.
 * Without a file: Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file,
 * the metadata server).
 */
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

export class TokenSource {
  readonly #credentialsFile: string | undefined;
  #client: Promise<AuthClient> | undefined;

  /** `credentialsFile` relative to `configDir`, the YAML's folder, like every path in the config. */
  constructor(credentialsFile: string | undefined, configDir: string) {
    this.#credentialsFile = credentialsFile === undefined ? undefined : path.resolve(configDir, credentialsFile);
  }

  /** `authorization` (and `x-goog-user-project` where the credential says so) for one request. */
  async headers(): Promise<Record<string, string>> {
    this.#client ??= this.#create();
    const client = await this.#client.catch((err: unknown) => {
      this.#client = undefined; // a file fixed later is read again
      throw err;
    });
    const headers = await client.getRequestHeaders();
    const out: Record<string, string> = {};
    headers.forEach((value, name) => (out[name.toLowerCase()] = value));
    if (out['authorization'] === undefined) throw new Error('Google credentials gave no access token');
    return out;
  }

  /** Forgets the cached token (after a 401): the next request gets a new one. */
  async invalidate(): Promise<boolean> {
    if (!this.#client) return false;
    const client = await this.#client.catch(() => undefined);
    if (!client) return false;
    // Expired, so the next call refreshes (forced past the library's own cache); the refresh
    // token (a real one, or the placeholder service-account and metadata clients keep) stays.
    // setCredentials, not an assignment: external-account (workload identity) clients keep their
    // token apart and reset it there.
    client.setCredentials({ ...client.credentials, access_token: null, expiry_date: 1 });
    return true;
  }

  async #create(): Promise<AuthClient> {
    // A file named by GOOGLE_APPLICATION_CREDENTIALS is read here too, so its token_uri holds.
    const file = this.#credentialsFile ?? (process.env['GOOGLE_APPLICATION_CREDENTIALS'] || undefined);
    if (file === undefined) return new GoogleAuth({ scopes: [SCOPE] }).getClient();
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      // Never the parser's message: it quotes the file, and the file holds a private key.
      const reason = err instanceof SyntaxError ? 'it is not valid JSON' : err instanceof Error && 'code' in err ? String(err.code) : 'unreadable';
      throw new Error(`credentials_file ${file} could not be read: ${reason}`);
    }
    if (json['type'] !== 'service_account') return new GoogleAuth({ scopes: [SCOPE], credentials: json }).getClient();
    const tokenUri = typeof json['token_uri'] === 'string' ? json['token_uri'] : GOOGLE_TOKEN_URL;
    const client = new JWT({
      email: String(json['client_email']),
      key: String(json['private_key']),
      ...(typeof json['private_key_id'] === 'string' && { keyId: json['private_key_id'] }),
      scopes: [SCOPE],
      // The grant is addressed to the endpoint it is sent to (the library's default is Google's).
      ...(tokenUri !== GOOGLE_TOKEN_URL && { additionalClaims: { aud: tokenUri } }),
    });
    if (tokenUri !== GOOGLE_TOKEN_URL) {
      client.transporter.interceptors.request.add({
        resolved: (config) => {
          if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUri);
          return Promise.resolve(config);
        },
      });
    }
    return client;
  }
}

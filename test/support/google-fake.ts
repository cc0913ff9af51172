import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RecordedRequest, Reply } from './fake-upstream.ts';

/**
 * A Google OAuth token endpoint as a service account meets it (providers.md §2.4, §7): it takes
 * the JWT-bearer grant, checks the RS256 signature against the account's public key and the
 * claims Google checks (issuer, cloud-platform scope, audience, at most an hour), and issues
 * access tokens that the fake APIs then require, until they expire or are revoked.
 */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const json = { 'content-type': 'application/json' };
const googleError = (code: number, status: string, message: string): Reply => ({ status: code, headers: json, body: { error: { code, message, status } } });

export class GoogleTokenFake {
  readonly email = 'junction-test@my-project.iam.gserviceaccount.com';
  readonly #publicKey: KeyObject;
  readonly #privateKeyPem: string;
  /** Tokens issued, and when each expires. */
  readonly #issued = new Map<string, number>();
  /** Token requests served (the refresh count). */
  fetches = 0;
  /** Lifetime of the next tokens, in seconds. */
  expiresIn = 3600;
  /** Set to refuse every grant (a key deleted in the console). */
  refuse = false;

  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.#publicKey = publicKey;
    this.#privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }

  /** Writes a service-account file whose token_uri is `tokenUri`; returns its path. */
  writeServiceAccount(tokenUri: string): string {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'junction-sa-')), 'sa.json');
    writeFileSync(file, JSON.stringify({ type: 'service_account', project_id: 'my-project', private_key_id: 'kid-1', private_key: this.#privateKeyPem, client_email: this.email, client_id: '1', token_uri: tokenUri }));
    return file;
  }

  /** The token endpoint's answer. */
  token(req: RecordedRequest, tokenUri: string): Reply {
    const form = new URLSearchParams(req.body.toString('utf8'));
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return googleError(400, 'invalid_grant', 'unsupported grant type');
    const [head, claims, signature] = (form.get('assertion') ?? '').split('.');
    if (!head || !claims || !signature) return googleError(400, 'invalid_grant', 'malformed assertion');
    const header = JSON.parse(Buffer.from(head, 'base64url').toString()) as Record<string, unknown>;
    if (header['alg'] !== 'RS256' || !verify('RSA-SHA256', Buffer.from(`${head}.${claims}`), this.#publicKey, Buffer.from(signature, 'base64url'))) return googleError(400, 'invalid_grant', 'Invalid JWT Signature.');
    const c = JSON.parse(Buffer.from(claims, 'base64url').toString()) as Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    if (c['iss'] !== this.email) return googleError(400, 'invalid_grant', 'Invalid issuer');
    if (!String(c['scope']).split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return googleError(400, 'invalid_scope', 'scope missing');
    if (c['aud'] !== tokenUri) return googleError(400, 'invalid_grant', 'Invalid JWT: audience');
    if (typeof c['exp'] !== 'number' || typeof c['iat'] !== 'number' || c['exp'] - c['iat'] > 3600 || c['exp'] < now) return googleError(400, 'invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes)');
    if (this.refuse) return googleError(400, 'invalid_grant', 'Invalid grant: account not found');
    return this.#issue();
  }

  /**
   * The metadata server's token for the instance's service account (GCE, GKE, Cloud Run), as
   * Application Default Credentials get it there: it answers only with `Metadata-Flavor: Google`.
   */
  metadataToken(req: RecordedRequest): Reply | undefined {
    if (!req.url.startsWith('/computeMetadata/v1/instance/service-accounts/default/token')) return undefined;
    if (req.headers['metadata-flavor'] !== 'Google') return { status: 403, body: 'Missing Metadata-Flavor:Google header.' };
    return this.#issue();
  }

  #issue(): Reply {
    this.fetches++;
    const token = `ya29.test-${this.fetches}`;
    this.#issued.set(token, Date.now() + this.expiresIn * 1000);
    return { headers: { ...json, 'metadata-flavor': 'Google' }, body: { access_token: token, expires_in: this.expiresIn, token_type: 'Bearer' } };
  }

  /** Google's 401 for a request without a live token, or undefined. */
  refusal(req: RecordedRequest): Reply | undefined {
    const token = String(req.headers['authorization'] ?? '').replace(/^Bearer /, '');
    const expires = this.#issued.get(token);
    if (expires === undefined || expires < Date.now()) {
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.');
    }
    return undefined;
  }

  /** Revokes every token issued so far (the next API call gets a 401). */
  revokeAll(): void {
    this.#issued.clear();
  }
}

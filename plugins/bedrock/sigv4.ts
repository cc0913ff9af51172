import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';
import type { AwsCredentialIdentity } from '@smithy/types';
import type { SignableRequest } from '../../src/plugin-host/api.ts';

/**
 * AWS Signature Version 4 for one request's headers (providers.md §1.4), synchronous, over
 * node:crypto: the canonical request, the string to sign, the signature. It follows the AWS SDK's
 * own signer (`@smithy/signature-v4` 5.x, SignatureV4.signRequest) step by step, so its headers
 * are that signer's to the byte, which the tests check on random requests. That signer cost
 * 53 µs a request here (bench/bedrock-costs.ts): seven awaited steps, a request object cloned,
 * and an HMAC of the credentials on every request only to look up its cached signing key. This
 * hashes the body once and the canonical request once, each with node:crypto's one-shot `hash`
 * (a third of createHash's cost on small inputs: no Hash object), and makes one HMAC with a
 * signing key kept for its day (SigningKeys).
 */
const ALGORITHM = 'AWS4-HMAC-SHA256';
const SHA256_HEADER = 'x-amz-content-sha256';
/** Headers the signer writes itself: the caller's are left out of the signature. */
const GENERATED = new Set(['authorization', 'x-amz-date', 'date']);
/** The SDK's ALWAYS_UNSIGNABLE_HEADERS: hop-by-hop and tracing headers a proxy may change. */
const UNSIGNABLE = new Set(['authorization', 'cache-control', 'connection', 'expect', 'from', 'keep-alive', 'max-forwards', 'pragma', 'referer', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'x-amzn-trace-id']);

/**
 * The signing key of a day, region, service and secret: four HMACs, made once a day rather than
 * per request. Only the last one is kept: a provider signs for one region and service, and its
 * secret changes only when its credentials are refreshed. A new day (the signer's clock, so the
 * corrected one) or a new secret makes a new key. It is kept as a KeyObject: on Node 24 an HMAC
 * with a Buffer for its key cost 11 µs here (the key imported each time), with a KeyObject 2.7.
 */
export class SigningKeys {
  readonly #region: string;
  readonly #service: string;
  #day = '';
  #secret = '';
  #key: KeyObject | undefined;

  constructor(region: string, service: string) {
    this.#region = region;
    this.#service = service;
  }

  /** `day` as the scope writes it, YYYYMMDD. */
  keyFor(secretAccessKey: string, day: string): KeyObject {
    if (this.#key !== undefined && this.#day === day && this.#secret === secretAccessKey) return this.#key;
    let key: Buffer = createHmac('sha256', `AWS4${secretAccessKey}`).update(day).digest();
    for (const part of [this.#region, this.#service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
    this.#day = day;
    this.#secret = secretAccessKey;
    this.#key = createSecretKey(key);
    return this.#key;
  }

  get region(): string {
    return this.#region;
  }

  get service(): string {
    return this.#service;
  }
}

/** A value the SDK's whitespace folding would change: a line break, a tab, two spaces, a space at an end. */
const FOLDABLE = /[\r\n\t]|  |^ | $/;
const fold = (value: string): string => (FOLDABLE.test(value) ? value.replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').replace(/^ | $/g, '') : value);

/**
 * The signing date as SigV4 writes it (YYYYMMDDTHHMMSSZ, the SDK's way: the ISO form without its
 * milliseconds and separators), made once a second rather than per request.
 */
let lastSecond = Number.NaN;
let lastLongDate = '';
function longDateOf(date: Date): string {
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastLongDate = date.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
    lastSecond = second;
  }
  return lastLongDate;
}

/**
 * A copy of the request's headers, as `{ ...headers }` makes it (a `__proto__` name an own
 * property, not the prototype), without the spread: on Node 20 adding properties to an object a
 * spread made cost about 2 µs a request, a copy made key by key 0.2 µs.
 */
function copyOf(source: Readonly<Record<string, string>>): Record<string, string> {
  const copy: Record<string, string> = {};
  for (const name of Object.keys(source)) {
    if (name === '__proto__') Object.defineProperty(copy, name, { value: source[name], writable: true, enumerable: true, configurable: true });
    else copy[name] = source[name]!;
  }
  return copy;
}

/** encodeURIComponent, and the five characters it leaves that RFC 3986 reserves (the SDK's escapeUri). */
const escapeUri = (text: string): string => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The path with empty, `.` and `..` segments resolved, escaped once more (the SDK's getCanonicalPath). */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

/** The query's parameters escaped and sorted (the SDK's getCanonicalQuery, plain objects and all). */
function canonicalQuery(query: Record<string, string>): string {
  const keys: string[] = [];
  const serialized: Record<string, string> = {};
  for (const key in query) {
    if (!Object.prototype.hasOwnProperty.call(query, key) || key.toLowerCase() === 'x-amz-signature') continue;
    const encoded = escapeUri(key);
    keys.push(encoded);
    serialized[encoded] = `${encoded}=${escapeUri(query[key]!)}`;
  }
  return keys
    .sort()
    .map((key) => serialized[key])
    .filter((pair) => pair)
    .join('&');
}

/**
 * The headers signing adds to `request` (`authorization`, `x-amz-date`, the session token and the
 * body's hash, each only where it differs from what the request has), signed at `date` with
 * `credentials`. `checksum`: sign the body's hash as `x-amz-content-sha256` (Bedrock does; AWS's
 * own test suite does not).
 */
export function sigV4Headers(request: SignableRequest, credentials: AwsCredentialIdentity, date: Date, keys: SigningKeys, checksum: boolean): Record<string, string> {
  if (typeof credentials !== 'object' || credentials === null || typeof credentials.accessKeyId !== 'string' || typeof credentials.secretAccessKey !== 'string') {
    throw new Error('Resolved credential object is not valid');
  }
  const { url } = request;
  // The headers as the SDK's signer holds them: the host added, those it writes itself taken out,
  // then its own in the order it sets them (the order they are sent in).
  const headers = copyOf(request.headers);
  headers['host'] = url.host;
  for (const name of Object.keys(headers)) if (GENERATED.has(name.toLowerCase())) delete headers[name];
  const longDate = longDateOf(date);
  const day = longDate.slice(0, 8);
  const scope = `${day}/${keys.region}/${keys.service}/aws4_request`;
  headers['x-amz-date'] = longDate;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;
  // A hash the caller gave is signed as given.
  let payloadHash: string | undefined;
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === SHA256_HEADER) {
      payloadHash = headers[name];
      break;
    }
  }
  if (payloadHash === undefined) {
    payloadHash = hash('sha256', request.body, 'hex');
    if (checksum) headers[SHA256_HEADER] = payloadHash;
  }
  // Lower-cased names (of two that differ only in case, the later in sorted order counts),
  // sorted; whitespace folded as the SDK folds it.
  const canonical = new Map<string, string>();
  for (const name of Object.keys(headers).sort()) {
    const value = headers[name];
    if (value === undefined || value === null) continue;
    const lower = name.toLowerCase();
    if (UNSIGNABLE.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) continue;
    canonical.set(lower, fold(value));
  }
  const signed = [...canonical.keys()].sort();
  const canonicalRequest = `${request.method}\n${canonicalPath(url.pathname)}\n${canonicalQuery(Object.fromEntries(url.searchParams))}\n${signed.map((name) => `${name}:${canonical.get(name)!}`).join('\n')}\n\n${signed.join(';')}\n${payloadHash}`;
  const stringToSign = `${ALGORITHM}\n${longDate}\n${scope}\n${hash('sha256', canonicalRequest, 'hex')}`;
  const signature = createHmac('sha256', keys.keyFor(credentials.secretAccessKey, day)).update(stringToSign).digest('hex');
  headers['authorization'] = `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signed.join(';')}, Signature=${signature}`;
  const added: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name !== 'host' && request.headers[name] !== value) added[name] = value;
  }
  return added;
}

import http from 'node:http';

/** One part of a test form: a text field or a file. */
export type PartSpec = { readonly name: string; readonly value: string } | { readonly name: string; readonly filename: string; readonly type: string; readonly bytes: Buffer };

export const BOUNDARY = '----junction-test-7f3a';

/** A multipart/form-data body with the parts in the order given (RFC 7578). */
export function multipart(parts: readonly PartSpec[], boundary = BOUNDARY): { readonly body: Buffer; readonly contentType: string } {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const file = 'bytes' in part;
    const disposition = `form-data; name="${part.name}"${file ? `; filename="${part.filename}"` : ''}`;
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${file ? `Content-Type: ${part.type}\r\n` : ''}\r\n`));
    pieces.push(file ? part.bytes : Buffer.from(part.value));
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A 16-bit mono PCM WAV of `seconds` of silence at `rate` Hz: its header says how long it is. */
export function wav(seconds: number, rate = 8000): Buffer {
  const data = Buffer.alloc(Math.round(seconds * rate) * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export interface FormResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  json(): Record<string, unknown>;
}

/**
 * POSTs a body in the chunks given, awaiting `between(i)` before chunk `i` (i ≥ 1): a client
 * uploading slowly. Without `contentLength` the body goes chunked, with no length declared.
 */
export function postForm(
  url: string,
  headers: Readonly<Record<string, string>>,
  chunks: readonly Buffer[],
  options: { readonly contentLength?: number | null; readonly between?: (i: number) => Promise<void> } = {},
): Promise<FormResponse> {
  return new Promise((resolve, reject) => {
    const length = options.contentLength === undefined ? chunks.reduce((n, c) => n + c.length, 0) : options.contentLength;
    const req = http.request(url, { method: 'POST', headers: { ...headers, ...(length !== null && { 'content-length': String(length) }) } });
    req.on('response', (res) => {
      const body: Buffer[] = [];
      res.on('data', (c: Buffer) => body.push(c));
      res.on('end', () => {
        const text = Buffer.concat(body).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> });
      });
    });
    // The gateway may answer (413) and close before the upload is over: that is the answer.
    req.on('error', (err) => (req.writableEnded ? undefined : reject(err)));
    void (async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0 && options.between) await options.between(i);
        if (req.destroyed) return;
        req.write(chunk);
      }
      req.end();
    })();
  });
}

import type { IncomingMessage } from 'node:http';
import { Readable, type Transform } from 'node:stream';
import { ERR, type GatewayError } from '../../errors.ts';
import { FormFault } from './form-fault.ts';
import { FormScanner } from './form-scanner.ts';
import { Spool, type Splice } from './spool.ts';

/** An endpoint's checks on a form as it is read; each returns the fault to refuse it with. */
export interface FormRules {
  /** Run after every chunk: a part already known to be wrong (a non-image in an image edit). */
  readonly onChunk: (scanner: FormScanner) => GatewayError | undefined;
  /** Run once the closing delimiter is read: a required part that never came. */
  readonly onEnd: (scanner: FormScanner) => GatewayError | undefined;
}

export interface UploadOptions {
  readonly boundary: string;
  readonly limitBytes: number;
  /** The client's `content-length`, or null for a chunked body. */
  readonly declaredLength: number | null;
  readonly rules: FormRules;
  /** Names the spool file. */
  readonly requestId: string;
  /** The decoder of a compressed body (`content-encoding`), read instead of the request, and its coding's name. */
  readonly decoder?: { readonly stream: Transform; readonly encoding: string };
}

/**
 * A multipart request body in flight (issue #13). It is read once, chunk by chunk: each chunk is
 * counted against the size limit, scanned, and checked by the endpoint's rules *before* it goes
 * anywhere. The part read before routing is spooled and replayed; the rest flows straight through
 * to the upstream with backpressure. A fault found while the body flows (the limit passed, a
 * malformed form, a missing or wrong file) stops it before the chunk that revealed it, and so
 * before the closing delimiter: the upstream never receives a whole form, and the client gets
 * the 4xx.
 */
export class Upload {
  readonly scanner: FormScanner;
  readonly spool: Spool;
  readonly declaredLength: number | null;
  readonly limitBytes: number;
  readonly boundary: string;
  /** What the body is read from: the request, or the decoder it is piped through. */
  readonly #req: Readable;
  readonly #rules: FormRules;
  #badCoding: GatewayError | undefined;
  #received = 0;
  #ended = false;
  #gone = false;
  #opened = false;
  #waiting: { resolve: (chunk: Buffer | null) => void; reject: (err: GatewayError) => void } | undefined;

  constructor(req: IncomingMessage, options: UploadOptions) {
    this.#req = req;
    this.limitBytes = options.limitBytes;
    this.boundary = options.boundary;
    this.#rules = options.rules;
    this.declaredLength = options.declaredLength;
    this.scanner = new FormScanner(options.boundary);
    this.spool = new Spool(options.requestId);
    const source = options.decoder?.stream ?? req;
    this.#req = source;
    if (options.decoder) {
      const { stream, encoding } = options.decoder;
      req.pipe(stream);
      const refuse = (fault: GatewayError): void => {
        this.#badCoding ??= fault;
        this.#gone = true;
        this.#settleWaiting();
      };
      stream.on('error', (err) => refuse(ERR.bodyNotDecodable(encoding, err.message)));
      // The compressed bytes count against the limit too (what decodes to nothing still arrives).
      let raw = 0;
      req.on('data', (chunk: Buffer) => {
        raw += chunk.length;
        if (raw <= this.limitBytes) return;
        req.unpipe(stream);
        stream.destroy();
        refuse(ERR.bodyTooLarge(this.limitBytes));
      });
    }
    source.on('readable', () => {
      const waiting = this.#waiting;
      if (waiting === undefined) return;
      const chunk = source.read() as Buffer | null;
      if (chunk === null) return; // the end: reported by 'end'
      this.#waiting = undefined;
      waiting.resolve(chunk);
    });
    source.on('end', () => {
      this.#ended = true;
      this.#settleWaiting();
    });
    // The client hung up before sending the whole body.
    const onGone = (): void => {
      if (this.#ended || req.complete) return;
      this.#gone = true;
      this.#settleWaiting();
    };
    req.on('close', onGone);
    req.on('error', onGone);
  }

  /** Bytes of the body read so far. */
  get received(): number {
    return this.#received;
  }

  /** The whole body has been read into the spool: it can be sent again (a retry). */
  get replayable(): boolean {
    return this.#ended && this.spool.size === this.#received;
  }

  /** Reads and spools the body until `ready()` holds or the body ends. */
  async spoolUntil(ready: () => boolean): Promise<void> {
    // A form whose closing delimiter has been read is read to the body's end (an epilogue at
    // most), so it is whole in the spool and can be sent again.
    while (!ready() || (this.scanner.ended && !this.#ended)) {
      const chunk = await this.#accept();
      if (chunk === null) return;
      await this.spool.append(chunk);
    }
  }

  /** Reads the rest into the spool: an in-process plugin reads the files from there. */
  complete(): Promise<void> {
    return this.spoolUntil(() => false);
  }

  /**
   * The body as the upstream gets it: the spool with `splice` applied, then the rest as it
   * arrives. A fault destroys the stream with the GatewayError to answer. Once only, unless the
   * whole body was spooled.
   */
  open(splice: Splice | undefined): Readable {
    if (this.#opened && !this.replayable) throw ERR.internal();
    this.#opened = true;
    return Readable.from(this.#chunks(splice), { objectMode: false });
  }

  async *#chunks(splice: Splice | undefined): AsyncGenerator<Buffer> {
    yield* this.spool.replay(splice);
    for (let chunk = await this.#accept(); chunk !== null; chunk = await this.#accept()) yield chunk;
  }

  /** The next chunk, checked; null at the end of a whole, valid form. */
  async #accept(): Promise<Buffer | null> {
    const chunk = await this.#next();
    if (chunk === null) {
      this.#check(() => this.scanner.finish());
      return null;
    }
    this.#received += chunk.length;
    if (this.#received > this.limitBytes) throw ERR.bodyTooLarge(this.limitBytes);
    this.#check(() => this.scanner.push(chunk));
    // The chunk that holds the closing delimiter is judged with the whole form before it is passed on.
    const fault = this.#rules.onChunk(this.scanner) ?? (this.scanner.ended ? this.#rules.onEnd(this.scanner) : undefined);
    if (fault) throw fault;
    return chunk;
  }

  #check(scan: () => void): void {
    try {
      scan();
    } catch (err) {
      if (err instanceof FormFault) throw ERR.formInvalid(err.message, !this.#ended);
      throw err;
    }
  }

  #next(): Promise<Buffer | null> {
    if (this.#ended && this.#req.readableLength === 0) return Promise.resolve(null);
    const chunk = this.#req.read() as Buffer | null;
    if (chunk !== null) return Promise.resolve(chunk);
    if (this.#ended) return Promise.resolve(null);
    if (this.#gone) return Promise.reject(this.#badCoding ?? ERR.clientClosed());
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  #settleWaiting(): void {
    const waiting = this.#waiting;
    if (waiting === undefined) return;
    this.#waiting = undefined;
    if (this.#ended) waiting.resolve(null);
    else waiting.reject(this.#badCoding ?? ERR.clientClosed());
  }

  dispose(): Promise<void> {
    return this.spool.dispose();
  }
}

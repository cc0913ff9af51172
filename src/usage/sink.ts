import { usageFields } from './usage-fields.ts';
import type { Endpoint, TokenUsage } from '../formats/wire.ts';
import type { Logger } from '../log.ts';
import { picoToUsdText } from '../billing/money.ts';

/** Everything worth recording about one finished request. Never a key, a header value or prompt text. */
export interface RequestRecord {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  readonly keyName?: string;
  readonly endpoint?: Endpoint;
  readonly model?: string;
  readonly provider?: string;
  readonly upstreamModel?: string;
  readonly kind?: string;
  readonly upstreamStatus?: number;
  /** The upstream's own id for the request (`request-id`, `x-request-id`), to trace it across the hop. */
  readonly upstreamRequestId?: string;
  readonly firstByteMs?: number;
  /** A stream's upstream time to first chunk, from its attempt's start (issue #16). */
  readonly upstreamFirstChunkMs?: number;
  readonly usage?: TokenUsage;
  /** True when the usage was estimated (a stream cut short). */
  readonly estimated?: boolean;
  /** What the ledger charged, in pico-dollars. */
  readonly charged?: bigint;
  readonly errorCode?: string;
  /** Upstream attempts, when more than one (retries and fallbacks, issue #5). */
  readonly attempts?: number;
}

/** Where request records go once the ledger has settled them: the request log by default. */
export interface UsageSink {
  record(entry: RequestRecord): void;
}

/** Writes each record as one structured log line. */
export class LogUsageSink implements UsageSink {
  readonly #log: Logger;
  constructor(log: Logger) {
    this.#log = log;
  }

  record(entry: RequestRecord): void {
    // Request lines are `info`: under a quieter level the line, its cost text included, is not
    // even built (about 2 µs a request, issue #17).
    if (!this.#log.isLevelEnabled('info')) return;
    this.#log.info(
      {
        req_id: entry.requestId,
        method: entry.method,
        path: entry.path,
        status: entry.status,
        ms: round(entry.durationMs),
        key_name: entry.keyName,
        model: entry.model,
        provider: entry.provider,
        upstream_model: entry.upstreamModel,
        route: entry.kind,
        upstream_status: entry.upstreamStatus,
        upstream_req_id: entry.upstreamRequestId,
        ttfb_ms: entry.firstByteMs === undefined ? undefined : round(entry.firstByteMs),
        tokens: entry.usage && usageFields(entry.usage),
        cost_usd: entry.charged === undefined ? undefined : picoToUsdText(entry.charged),
        estimated: entry.estimated,
        error: entry.errorCode,
        attempts: entry.attempts,
      },
      'request',
    );
  }
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

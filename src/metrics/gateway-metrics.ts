import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { picoToUsdNumber } from '../billing/money.ts';
import type { RequestRecord, UsageSink } from '../usage/sink.ts';
import { clusterScrape } from './cluster-metrics.ts';
import { SeriesCounter, SeriesHistogram, type CounterCell, type HistogramCell } from './series.ts';
import type { OpenHolds } from '../http/middleware/reserve.ts';

/**
 * Prometheus metrics (issue #16; operations.md §1), fed by each finished request's record (a
 * usage sink, so the hot path pays a few counter increments after the response, nothing before).
 * Names follow Prometheus' conventions, with the OpenTelemetry GenAI names where they exist.
 * Labels are bounded: the catalogue's model id (`other` for a model the catalogue does not have),
 * the provider id, the endpoint, the route kind and the status class; never a key, a key name,
 * a user, a request id or a prompt (operations.md §1.5).
 */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120, 300, 600];
/** The GenAI conventions' time-to-first-token buckets, extended to a minute (as Envoy's). */
const TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60];
/** `status_class` by status / 100, made once. */
const STATUS_CLASSES: readonly string[] = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];
const TOKEN_KINDS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;

/** The cells one request's labels reach (series.ts), found once per label set with one lookup. */
interface Cells {
  readonly requests: CounterCell;
  readonly duration: HistogramCell;
  ttft?: HistogramCell;
  ttfc?: HistogramCell;
  /** By TOKEN_KINDS' index. */
  readonly tokens: (CounterCell | undefined)[];
  cost?: CounterCell;
}

export class GatewayMetrics implements UsageSink {
  readonly registry = new Registry();
  /** Under `serve --workers`: every worker's metrics, gathered by the primary (cluster-metrics.ts). */
  readonly #clusterScrape: (() => Promise<string>) | undefined;
  readonly #requests: SeriesCounter;
  readonly #duration: SeriesHistogram;
  readonly #ttft: SeriesHistogram;
  readonly #ttfc: SeriesHistogram;
  readonly #tokens: SeriesCounter;
  readonly #cost: SeriesCounter;
  /** By endpoint, model, provider, route kind and status class: all bounded (see above). */
  readonly #cells = new Map<string, Cells>();
  /** The cells found last, with their labels. */
  #last: { readonly endpoint: string; readonly model: string; readonly provider: string; readonly kind: string; readonly statusClass: string; readonly cells: Cells } | undefined;
  readonly #upstreamErrors: Counter<'provider' | 'error_type'>;
  readonly #fallbacks: Counter<'model'>;
  readonly #refusals: Counter<'reason'>;
  readonly #models: Set<string>;

  /** Holds made and not yet settled: the reservation middleware counts them. */
  readonly openHolds: OpenHolds = { count: 0 };

  /**
   * `models`: the catalogue's ids, the only values the model label takes. The rest is read at
   * scrape time: requests in flight, settlements waiting for a retry, and breakers by provider.
   */
  constructor(models: Iterable<string>, live: { inFlight(): number; settlementsPending(): number; breakersOpen(): ReadonlyMap<string, number> }) {
    this.#models = new Set(models);
    const registers = [this.registry];
    const registry = this.registry;
    this.#requests = new SeriesCounter('junction_requests_total', 'Requests answered, by endpoint, model, provider, route kind (native, translated, in-process, local) and status class.', registry);
    this.#duration = new SeriesHistogram('junction_request_duration_seconds', 'Time from the request to the end of its response, streams included.', SECONDS, registry);
    this.#ttft = new SeriesHistogram('gen_ai_server_time_to_first_token_seconds', 'Time from the request to the first byte of the answer sent to the client (the first token of a stream).', TTFT, registry);
    this.#ttfc = new SeriesHistogram('gen_ai_client_operation_time_to_first_chunk_seconds', 'A stream\'s upstream time to its first chunk, from the attempt\'s start (Junction as the upstream\'s client).', TTFT, registry);
    this.#tokens = new SeriesCounter('junction_tokens_total', 'Tokens billed, by kind (input excludes cache reads and writes; reasoning is part of output).', registry);
    this.#cost = new SeriesCounter('junction_cost_usd_total', 'What the ledger charged, in US dollars.', registry);
    this.#upstreamErrors = new Counter({ name: 'junction_upstream_errors_total', help: 'Requests that ended in an upstream failure, by its Junction error code.', labelNames: ['provider', 'error_type'], registers });
    this.#fallbacks = new Counter({ name: 'junction_fallback_attempts_total', help: 'Upstream attempts beyond the first (retries and fallbacks to other routes).', labelNames: ['model'], registers });
    this.#refusals = new Counter({ name: 'junction_refusals_total', help: 'Requests refused before any upstream: rate limits (429) and balance (402).', labelNames: ['reason'], registers });
    const openHolds = this.openHolds;
    new Gauge({ name: 'junction_requests_in_flight', help: 'Requests being served now, streams included.', registers, collect() {
      this.set(live.inFlight());
    } });
    new Gauge({ name: 'junction_holds_outstanding', help: 'Holds on keys made before dispatch and not yet settled.', registers, collect() {
      this.set(openHolds.count);
    } });
    new Gauge({ name: 'junction_settlements_pending', help: 'Settlements the store refused, kept for retry.', registers, collect() {
      this.set(live.settlementsPending());
    } });
    new Gauge({ name: 'junction_circuit_breakers_open', help: 'Routes whose circuit breaker is open (or half-open), by provider.', labelNames: ['provider'], registers, aggregator: 'max', collect() {
      this.reset();
      for (const [provider, open] of live.breakersOpen()) this.set({ provider }, open);
    } });
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    this.#clusterScrape = clusterScrape(this.registry);
  }

  /** The cells of one label set, made on its first request; remembered as the last found. */
  #cellsOf(endpoint: string, model: string, provider: string, kind: string, statusClass: string): Cells {
    const key = `${endpoint}\u0000${model}\u0000${provider}\u0000${kind}\u0000${statusClass}`;
    let cells = this.#cells.get(key);
    if (cells === undefined) {
      cells = {
        requests: this.#requests.cell(key, () => ({ endpoint, model, provider, route_kind: kind, status_class: statusClass })),
        duration: this.#duration.cell(`${endpoint}\u0000${kind}\u0000${statusClass}`, () => ({ endpoint, route_kind: kind, status_class: statusClass })),
        tokens: [],
      };
      this.#cells.set(key, cells);
    }
    this.#last = { endpoint, model, provider, kind, statusClass, cells };
    return cells;
  }

  /** A reload's new models join the label's values; removed ones stay for requests still finishing. */
  addModels(models: Iterable<string>): void {
    for (const model of models) this.#models.add(model);
  }


  /** The text a scrape gets: this process's metrics, or under `--workers` the whole group's. */
  async scrape(): Promise<string> {
    if (!this.#clusterScrape) return this.registry.metrics();
    try {
      return await this.#clusterScrape();
    } catch (err) {
      // A worker the primary cannot gather from (one starting or stuck) must not blind the
      // scrape: this worker's own, and a comment saying what is missing.
      const reason = err instanceof Error ? err.message : String(err);
      return `# junction: only this worker's metrics: ${reason.replace(/\s+/g, ' ')}\n${await this.registry.metrics()}`;
    }
  }

  record(entry: RequestRecord): void {
    const model = entry.model !== undefined && this.#models.has(entry.model) ? entry.model : 'other';
    const provider = entry.provider ?? 'none';
    const endpoint = entry.endpoint ?? 'other';
    const kind = entry.kind ?? 'none';
    const statusClass = STATUS_CLASSES[Math.floor(entry.status / 100)] ?? `${Math.floor(entry.status / 100)}xx`;
    // The last request's cells when its labels are this one's: most requests repeat the one
    // before, and the joined key was a new string to hash every time (issue #17, thirty-fourth session).
    const last = this.#last;
    let cells = last !== undefined && last.endpoint === endpoint && last.model === model && last.provider === provider && last.kind === kind && last.statusClass === statusClass ? last.cells : undefined;
    if (cells === undefined) cells = this.#cellsOf(endpoint, model, provider, kind, statusClass);
    cells.requests.value++;
    this.#duration.observe(cells.duration, entry.durationMs / 1000);
    if (entry.firstByteMs !== undefined && entry.status < 400) {
      cells.ttft ??= this.#ttft.cell(`${endpoint}\u0000${provider}\u0000${model}`, () => ({ gen_ai_operation_name: endpoint, gen_ai_provider_name: provider, gen_ai_request_model: model }));
      this.#ttft.observe(cells.ttft, entry.firstByteMs / 1000);
    }
    if (entry.upstreamFirstChunkMs !== undefined && entry.provider !== undefined) {
      cells.ttfc ??= this.#ttfc.cell(`${provider}\u0000${model}`, () => ({ gen_ai_provider_name: provider, gen_ai_request_model: model }));
      this.#ttfc.observe(cells.ttfc, entry.upstreamFirstChunkMs / 1000);
    }
    if (entry.usage) {
      const usage = entry.usage;
      const counts = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite, usage.reasoning];
      for (let i = 0; i < TOKEN_KINDS.length; i++) {
        const count = counts[i] as number;
        if (!(count > 0)) continue;
        const tokenKind = TOKEN_KINDS[i] as string;
        const cell = (cells.tokens[i] ??= this.#tokens.cell(`${model}\u0000${provider}\u0000${tokenKind}`, () => ({ model, provider, kind: tokenKind })));
        cell.value += count;
      }
    }
    if (entry.charged !== undefined && entry.charged > 0n) {
      cells.cost ??= this.#cost.cell(`${model}\u0000${provider}`, () => ({ model, provider }));
      cells.cost.value += picoToUsdNumber(entry.charged);
    }
    if (entry.errorCode?.startsWith('GW_ERR_UPSTREAM') && entry.provider !== undefined) this.#upstreamErrors.inc({ provider, error_type: entry.errorCode.slice(7).toLowerCase() });
    if (entry.attempts !== undefined && entry.attempts > 1) this.#fallbacks.inc({ model }, entry.attempts - 1);
    if (entry.status === 429 && entry.errorCode === 'GW_ERR_RATE_LIMITED') this.#refusals.inc({ reason: 'rate_limit' });
    if (entry.status === 402) this.#refusals.inc({ reason: 'balance' });
  }
}

/** Several sinks as one: the request log and the metrics both hear every request. */
export class TeeSink implements UsageSink {
  readonly #sinks: readonly UsageSink[];
  constructor(sinks: readonly UsageSink[]) {
    this.#sinks = sinks;
  }
  record(entry: RequestRecord): void {
    for (const sink of this.#sinks) sink.record(entry);
  }
}
